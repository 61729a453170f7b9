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

package dev.idempotency.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * Identity of an idempotency record: the client's key inside a scope.
 * <p>
 * The key is what the client sent in the {@code Idempotency-Key} header; the scope keeps
 * the keys of different principals or tenants apart, so two records of different scopes
 * never meet. The global scope is the empty string.
 * <p>
 * Instances are immutable and thread-safe. The constructor rejects {@code null} and keys
 * that are not 1 to {@value #MAX_KEY_LENGTH} characters of visible ASCII
 * ({@code 0x21}-{@code 0x7E}).
 *
 * @param scope the scope, never {@code null}; empty for the global scope
 * @param key the client's key, never {@code null}
 * @author Idempotency contributors
 * @since 0.1.0
 */
public record IdempotencyKey(String scope, String key) {

	/**
	 * Largest number of characters a key may have.
	 */
	public static final int MAX_KEY_LENGTH = 255;

	/**
	 * Largest number of characters a scope may have.
	 */
	public static final int MAX_SCOPE_LENGTH = 1024;

	/**
	 * The global scope, used when no principal or tenant applies.
	 */
	public static final String GLOBAL_SCOPE = "";

	/**
	 * Create a new key, checking its arguments.
	 * @param scope the scope, never {@code null}
	 * @param key the client's key, never {@code null}
	 * @throws IllegalArgumentException if the key is not valid or the scope is too long
	 */
	public IdempotencyKey {
		Objects.requireNonNull(scope, "'scope' must not be null");
		Objects.requireNonNull(key, "'key' must not be null");
		if (!isValidKey(key)) {
			throw new IllegalArgumentException(
					"'key' must be 1 to " + MAX_KEY_LENGTH + " characters of visible ASCII (0x21-0x7E)");
		}
		if (scope.length() > MAX_SCOPE_LENGTH) {
			throw new IllegalArgumentException("'scope' must be at most " + MAX_SCOPE_LENGTH + " characters");
		}
	}

	/**
	 * Create a key in the global scope.
	 * @param key the client's key
	 * @return the key
	 */
	public static IdempotencyKey global(String key) {
		return new IdempotencyKey(GLOBAL_SCOPE, key);
	}

	/**
	 * Return whether the given value is a valid key: 1 to {@value #MAX_KEY_LENGTH}
	 * characters, each of them visible ASCII ({@code 0x21}-{@code 0x7E}).
	 * @param key the candidate, may be {@code null}
	 * @return {@code true} if the value is a valid key
	 */
	public static boolean isValidKey(@Nullable String key) {
		if (key == null || key.isEmpty() || key.length() > MAX_KEY_LENGTH) {
			return false;
		}
		for (int i = 0; i < key.length(); i++) {
			char c = key.charAt(i);
			if (c < 0x21 || c > 0x7E) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Return whether this key is in the global scope.
	 * @return {@code true} for the global scope
	 */
	public boolean isGlobal() {
		return this.scope.isEmpty();
	}

	/**
	 * Return a fixed-size SHA-256 digest of scope and key, suitable as a storage key.
	 * Scope and key are separated by a NUL character, which neither may be confused with
	 * because keys are visible ASCII.
	 * @return a new 32-byte array
	 */
	public byte[] digest() {
		MessageDigest digest = Sha256.threadDigest();
		digest.update(this.scope.getBytes(StandardCharsets.UTF_8));
		digest.update((byte) 0);
		digest.update(this.key.getBytes(StandardCharsets.US_ASCII));
		return digest.digest();
	}

	@Override
	public String toString() {
		return (isGlobal() ? "" : this.scope + "/") + this.key;
	}

}
