/*
 * Copyright 2026-present the original author or authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *      https://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

package dev.idempotency.core.store;

import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;

import org.jspecify.annotations.Nullable;

/**
 * The AES keys that {@link EncryptingIdempotencyStore} encrypts stored responses with:
 * one primary key, which encrypts every new record, and any number of older keys, which
 * only decrypt the records written with them until those expire.
 * <p>
 * Each key has an id, written in clear next to every record it encrypts, so that a key
 * can be rotated: add the new key as primary and keep the old one until the longest TTL
 * has passed, then remove it. A record whose key id the ring no longer holds cannot be
 * replayed. Ids are 1 to 64 characters of visible ASCII other than {@code ;} and
 * {@code =}. Keys are AES keys of 16, 24 or 32 bytes.
 * <p>
 * Immutable and thread-safe.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class EncryptionKeyRing {

	/**
	 * Longest key id, in characters.
	 */
	public static final int MAX_KEY_ID_LENGTH = 64;

	private final String primaryKeyId;

	private final Map<String, SecretKey> keys;

	private EncryptionKeyRing(String primaryKeyId, Map<String, SecretKey> keys) {
		this.primaryKeyId = primaryKeyId;
		this.keys = keys;
	}

	/**
	 * Create a key ring.
	 * @param primaryKeyId the id of the key that encrypts new records; one of
	 * {@code keys}
	 * @param keys the keys by id, the primary one included
	 * @return the key ring
	 * @throws IllegalArgumentException if an id is invalid, a key is not an AES key of
	 * 16, 24 or 32 bytes, or the primary key is missing
	 */
	public static EncryptionKeyRing of(String primaryKeyId, Map<String, ? extends SecretKey> keys) {
		Objects.requireNonNull(primaryKeyId, "'primaryKeyId' must not be null");
		Objects.requireNonNull(keys, "'keys' must not be null");
		Map<String, SecretKey> copy = new LinkedHashMap<>();
		keys.forEach((id, key) -> {
			checkKeyId(id);
			Objects.requireNonNull(key, () -> "Key '" + id + "' must not be null");
			if (!"AES".equalsIgnoreCase(key.getAlgorithm())) {
				throw new IllegalArgumentException("Key '" + id + "' is not an AES key: " + key.getAlgorithm());
			}
			byte[] encoded = key.getEncoded();
			int length = (encoded != null) ? encoded.length : -1;
			if (length != 16 && length != 24 && length != 32) {
				throw new IllegalArgumentException(
						"Key '" + id + "' must be 16, 24 or 32 bytes long, not " + Math.max(length, 0));
			}
			copy.put(id, key);
		});
		if (!copy.containsKey(primaryKeyId)) {
			throw new IllegalArgumentException(
					"The primary key '" + primaryKeyId + "' is not among the keys " + copy.keySet());
		}
		return new EncryptionKeyRing(primaryKeyId, Collections.unmodifiableMap(copy));
	}

	/**
	 * Create a key ring from keys written in base64 (standard alphabet, padding
	 * optional).
	 * @param primaryKeyId the id of the key that encrypts new records
	 * @param base64Keys the keys by id
	 * @return the key ring
	 * @throws IllegalArgumentException if a key is not valid base64, or as for
	 * {@link #of}
	 */
	public static EncryptionKeyRing ofBase64(String primaryKeyId, Map<String, String> base64Keys) {
		Objects.requireNonNull(base64Keys, "'base64Keys' must not be null");
		Map<String, SecretKey> keys = new LinkedHashMap<>();
		base64Keys.forEach((id, text) -> {
			byte[] bytes;
			try {
				bytes = Base64.getDecoder().decode(Objects.requireNonNull(text, "key text").strip());
			}
			catch (IllegalArgumentException ex) {
				// never the key text in the message
				throw new IllegalArgumentException("Key '" + id + "' is not valid base64");
			}
			keys.put(id, new SecretKeySpec(bytes, "AES"));
		});
		return of(primaryKeyId, keys);
	}

	private static void checkKeyId(@Nullable String id) {
		if (id == null || id.isEmpty() || id.length() > MAX_KEY_ID_LENGTH) {
			throw new IllegalArgumentException(
					"A key id must be 1 to " + MAX_KEY_ID_LENGTH + " characters long: '" + id + "'");
		}
		for (int i = 0; i < id.length(); i++) {
			char c = id.charAt(i);
			if (c < 0x21 || c > 0x7e || c == ';' || c == '=') {
				throw new IllegalArgumentException(
						"A key id must be visible ASCII other than ';' and '=': '" + id + "'");
			}
		}
	}

	/**
	 * Return the id of the key that encrypts new records.
	 * @return the primary key id
	 */
	public String primaryKeyId() {
		return this.primaryKeyId;
	}

	/**
	 * Return the key that encrypts new records.
	 * @return the primary key
	 */
	public SecretKey primaryKey() {
		return this.keys.get(this.primaryKeyId);
	}

	/**
	 * Return a key by its id.
	 * @param keyId the id
	 * @return the key, or {@code null} if this ring does not hold it
	 */
	public @Nullable SecretKey key(String keyId) {
		return this.keys.get(keyId);
	}

	/**
	 * Return the ids of every key, the primary one included.
	 * @return the ids, in the order the keys were given
	 */
	public Set<String> keyIds() {
		return this.keys.keySet();
	}

	@Override
	public String toString() {
		// never the keys
		return "EncryptionKeyRing[primary=" + this.primaryKeyId + ", keys=" + this.keys.keySet() + "]";
	}

}
