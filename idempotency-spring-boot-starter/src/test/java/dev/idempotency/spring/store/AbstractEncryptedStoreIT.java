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

package dev.idempotency.spring.store;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.EncryptingIdempotencyStore;
import dev.idempotency.core.store.EncryptionKeyRing;
import dev.idempotency.core.store.IdempotencyStore;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Encryption at rest on a real store: what the server holds, read raw, is ciphertext;
 * keys rotate; an altered record is refused. Subclasses give the store and raw access to
 * what it holds.
 *
 * @author Idempotency contributors
 */
public abstract class AbstractEncryptedStoreIT {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration TTL = Duration.ofMinutes(10);

	private static final String KEY_A = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

	private static final String KEY_B = "HxwdHhsaGRgXFhUUExIREA8ODQwLCgkIBwYFBAMCAQA=";

	private static final String SECRET = "4111111111111111";

	private final RequestFingerprint fingerprint = RequestFingerprint.of(new byte[32]);

	private final StoredResponse response = new StoredResponse(201,
			List.of(new HttpHeader("Content-Type", "application/json"),
					new HttpHeader("Location", "/payments/pay_secret_location")),
			("{\"card\":\"" + SECRET + "\"}").getBytes(StandardCharsets.UTF_8));

	/**
	 * Return the store under test, without encryption.
	 * @return the store
	 */
	protected abstract IdempotencyStore rawStore();

	/**
	 * Read what the server holds for a completed record: the whole value or row cell that
	 * holds the response.
	 * @param key the record's key
	 * @return the bytes as stored
	 */
	protected abstract byte[] rawValue(IdempotencyKey key);

	/**
	 * Replace what the server holds for a completed record, as {@link #rawValue} reads
	 * it.
	 * @param key the record's key
	 * @param value the new bytes
	 */
	protected abstract void replaceRawValue(IdempotencyKey key, byte[] value);

	@Test
	void serverHoldsNoClearText() {
		IdempotencyKey key = newKey();
		EncryptingIdempotencyStore store = encrypting(ring("a", Map.of("a", KEY_A)));
		complete(store, key);
		String raw = new String(rawValue(key), StandardCharsets.ISO_8859_1);
		assertThat(raw).contains("Idempotency-Encrypted", "v1;key=a")
			.doesNotContain(SECRET, "card", "pay_secret_location", "application/json");
		assertThat(replay(store, key)).isEqualTo(this.response);
		assertThat(store.find(key).orElseThrow().response()).isEqualTo(this.response);
		StoredResponse held = rawStore().find(key).orElseThrow().response();
		assertThat(EncryptingIdempotencyStore.isEnvelope(held)).isTrue();
	}

	@Test
	void rotationKeepsOldRecordsReadableUntilTheirKeyIsRemoved() {
		IdempotencyKey withA = newKey();
		IdempotencyKey withB = newKey();
		complete(encrypting(ring("a", Map.of("a", KEY_A))), withA);
		EncryptingIdempotencyStore rotated = encrypting(ring("b", Map.of("a", KEY_A, "b", KEY_B)));
		assertThat(replay(rotated, withA)).isEqualTo(this.response);
		complete(rotated, withB);
		assertThat(new String(rawValue(withB), StandardCharsets.ISO_8859_1)).contains("v1;key=b");
		EncryptingIdempotencyStore retired = encrypting(ring("b", Map.of("b", KEY_B)));
		assertThat(replay(retired, withA).isReadable()).isFalse();
		assertThat(retired.find(withA).orElseThrow().response().isReadable()).isFalse();
		assertThat(replay(retired, withB)).isEqualTo(this.response);
	}

	@Test
	void alteredCiphertextIsRefused() {
		IdempotencyKey key = newKey();
		EncryptingIdempotencyStore store = encrypting(ring("a", Map.of("a", KEY_A)));
		complete(store, key);
		byte[] raw = rawValue(key);
		// the last byte belongs to the authentication tag
		raw[raw.length - 1] ^= 1;
		replaceRawValue(key, raw);
		assertThat(replay(store, key).isReadable()).isFalse();
		assertThat(store.find(key).orElseThrow().response().isReadable()).isFalse();
	}

	@Test
	void recordStoredInTheClearIsRefusedOutsideTheConfiguredWindow() {
		IdempotencyKey key = newKey();
		complete(rawStore(), key);
		EncryptingIdempotencyStore store = encrypting(ring("a", Map.of("a", KEY_A)));
		assertThat(replay(store, key).isReadable()).isFalse();
		assertThat(store.find(key).orElseThrow().response().isReadable()).isFalse();
		EncryptingIdempotencyStore window = store.replayingUnencryptedUntil(Instant.now().plus(Duration.ofHours(1)));
		assertThat(replay(window, key)).isEqualTo(this.response);
		EncryptingIdempotencyStore lapsed = store.replayingUnencryptedUntil(Instant.now().minusSeconds(1));
		assertThat(replay(lapsed, key).isReadable()).isFalse();
	}

	@Test
	void envelopeWithAlteredStatusIsRefused() {
		IdempotencyKey key = newKey();
		EncryptingIdempotencyStore store = encrypting(ring("a", Map.of("a", KEY_A)));
		complete(store, key);
		StoredResponse envelope = rawStore().find(key).orElseThrow().response();
		IdempotencyKey altered = newKey();
		OwnerToken token = OwnerToken.generate();
		assertThat(rawStore().acquire(altered, this.fingerprint, token, LEASE, TTL))
			.isInstanceOf(AcquireResult.Acquired.class);
		assertThat(rawStore().complete(altered, token,
				new StoredResponse(201, envelope.headers(), envelope.bodyBytes()), TTL))
			.isTrue();
		assertThat(replay(store, altered).isReadable()).isFalse();
		assertThat(
				replay(store.replayingUnencryptedUntil(Instant.now().plus(Duration.ofHours(1))), altered).isReadable())
			.isFalse();
	}

	private EncryptingIdempotencyStore encrypting(EncryptionKeyRing ring) {
		return new EncryptingIdempotencyStore(rawStore(), ring);
	}

	private static EncryptionKeyRing ring(String primary, Map<String, String> keys) {
		return EncryptionKeyRing.ofBase64(primary, keys);
	}

	private static IdempotencyKey newKey() {
		return new IdempotencyKey("encrypted-it", UUID.randomUUID().toString());
	}

	private void complete(IdempotencyStore store, IdempotencyKey key) {
		OwnerToken token = OwnerToken.generate();
		assertThat(store.acquire(key, this.fingerprint, token, LEASE, TTL)).isInstanceOf(AcquireResult.Acquired.class);
		assertThat(store.complete(key, token, this.response, TTL)).isTrue();
	}

	private StoredResponse replay(IdempotencyStore store, IdempotencyKey key) {
		AcquireResult result = store.acquire(key, this.fingerprint, OwnerToken.generate(), LEASE, TTL);
		assertThat(result).isInstanceOf(AcquireResult.Replay.class);
		return ((AcquireResult.Replay) result).response();
	}

}
