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

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import javax.crypto.spec.SecretKeySpec;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.engine.Decision;
import dev.idempotency.core.engine.IdempotencyEngine;
import dev.idempotency.core.engine.IdempotencyPolicy;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link EncryptingIdempotencyStore} and {@link EncryptionKeyRing}.
 *
 * @author Idempotency contributors
 */
class EncryptingIdempotencyStoreTests {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration TTL = Duration.ofHours(1);

	private static final String KEY_A = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

	private static final String KEY_B = "HxwdHhsaGRgXFhUUExIREA8ODQwLCgkIBwYFBAMCAQA=";

	private final InMemoryIdempotencyStore raw = new InMemoryIdempotencyStore();

	private final RequestFingerprint fingerprint = RequestFingerprint.of(new byte[32]);

	private final StoredResponse response = new StoredResponse(201,
			List.of(new HttpHeader("Content-Type", "application/json"), new HttpHeader("Location", "/payments/7")),
			"{\"card\":\"4111111111111111\"}".getBytes(StandardCharsets.UTF_8));

	@Test
	void storesAnEnvelopeAndReplaysTheResponse() {
		EncryptingIdempotencyStore store = new EncryptingIdempotencyStore(this.raw, ring("a", Map.of("a", KEY_A)));
		IdempotencyKey key = IdempotencyKey.global("k1");
		complete(store, key);
		StoredResponse held = this.raw.find(key).orElseThrow().response();
		assertThat(EncryptingIdempotencyStore.isEnvelope(held)).isTrue();
		assertThat(held.headers()).containsExactly(new HttpHeader("Idempotency-Encrypted", "v1;key=a"));
		assertThat(new String(held.bodyBytes(), StandardCharsets.ISO_8859_1)).doesNotContain("4111", "payments");
		assertThat(replay(store, key)).isEqualTo(this.response);
		assertThat(store.find(key).orElseThrow().response()).isEqualTo(this.response);
	}

	@Test
	void anEngineWithoutDecryptionAnswersAnEnvelopeAsUnreadableNeverReplaysIt() {
		// written while encryption was on, read after it was turned off
		IdempotencyKey key = IdempotencyKey.global("k1");
		complete(new EncryptingIdempotencyStore(this.raw, ring("a", Map.of("a", KEY_A))), key);
		try (IdempotencyEngine engine = new IdempotencyEngine(this.raw)) {
			Decision decision = engine.begin(key, this.fingerprint, IdempotencyPolicy.defaults());
			assertThat(decision).isInstanceOfSatisfying(Decision.Replay.class,
					(replay) -> assertThat(replay.response().isReadable()).isFalse());
		}
	}

	@Test
	void responseWithoutBodyRoundTrips() {
		EncryptingIdempotencyStore store = new EncryptingIdempotencyStore(this.raw, ring("a", Map.of("a", KEY_A)));
		IdempotencyKey key = IdempotencyKey.global("k1");
		StoredResponse withoutBody = StoredResponse.withoutBody(200, List.of(new HttpHeader("X-A", "1")));
		OwnerToken token = OwnerToken.generate();
		store.acquire(key, this.fingerprint, token, LEASE, TTL);
		assertThat(store.complete(key, token, withoutBody, TTL)).isTrue();
		assertThat(replay(store, key)).isEqualTo(withoutBody);
	}

	@Test
	void rotationReadsOldKeysAndRefusesRemovedOnes() {
		IdempotencyKey first = IdempotencyKey.global("written-with-a");
		IdempotencyKey second = IdempotencyKey.global("written-with-b");
		complete(new EncryptingIdempotencyStore(this.raw, ring("a", Map.of("a", KEY_A))), first);
		EncryptingIdempotencyStore both = new EncryptingIdempotencyStore(this.raw,
				ring("b", Map.of("a", KEY_A, "b", KEY_B)));
		assertThat(replay(both, first)).isEqualTo(this.response);
		complete(both, second);
		assertThat(this.raw.find(second).orElseThrow().response().headers().get(0).value()).isEqualTo("v1;key=b");
		EncryptingIdempotencyStore onlyB = new EncryptingIdempotencyStore(this.raw, ring("b", Map.of("b", KEY_B)));
		assertThat(replay(onlyB, first).isReadable()).isFalse();
		assertThat(onlyB.find(first).orElseThrow().response().isReadable()).isFalse();
		assertThat(replay(onlyB, second)).isEqualTo(this.response);
	}

	@Test
	void tamperedCiphertextIsRefused() {
		IdempotencyKey key = IdempotencyKey.global("k1");
		EncryptingIdempotencyStore store = new EncryptingIdempotencyStore(this.raw, ring("a", Map.of("a", KEY_A)));
		complete(store, key);
		StoredResponse held = this.raw.find(key).orElseThrow().response();
		byte[] body = held.bodyBytes();
		body[body.length / 2] ^= 1;
		IdempotencyKey copy = IdempotencyKey.global("k2");
		OwnerToken token = OwnerToken.generate();
		this.raw.acquire(copy, this.fingerprint, token, LEASE, TTL);
		this.raw.complete(copy, token, new StoredResponse(held.status(), held.headers(), body), TTL);
		assertThat(replay(store, copy).isReadable()).isFalse();
		// the thread's cipher, left after a failed authentication, seals and opens the
		// next
		IdempotencyKey next = IdempotencyKey.global("k3");
		complete(store, next);
		assertThat(replay(store, next)).isEqualTo(this.response);
	}

	@Test
	void threadsSealAndOpenAtTheSameTime() throws Exception {
		EncryptingIdempotencyStore store = new EncryptingIdempotencyStore(this.raw, ring("a", Map.of("a", KEY_A)));
		int threads = 8;
		int perThread = 50;
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<Integer>> results = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				String prefix = "t" + t + "-";
				results.add(executor.submit(() -> {
					start.await();
					int replayed = 0;
					for (int i = 0; i < perThread; i++) {
						IdempotencyKey key = IdempotencyKey.global(prefix + i);
						complete(store, key);
						if (replay(store, key).equals(this.response)) {
							replayed++;
						}
					}
					return replayed;
				}));
			}
			start.countDown();
			for (Future<Integer> result : results) {
				assertThat(result.get(30, TimeUnit.SECONDS)).isEqualTo(perThread);
			}
		}
		finally {
			executor.shutdownNow();
		}
	}

	@Test
	void envelopeMovedToAnotherRecordIsRefused() {
		IdempotencyKey key = IdempotencyKey.global("k1");
		EncryptingIdempotencyStore store = new EncryptingIdempotencyStore(this.raw, ring("a", Map.of("a", KEY_A)));
		complete(store, key);
		StoredResponse held = this.raw.find(key).orElseThrow().response();
		IdempotencyKey other = new IdempotencyKey("another-tenant", "k1");
		OwnerToken token = OwnerToken.generate();
		this.raw.acquire(other, this.fingerprint, token, LEASE, TTL);
		this.raw.complete(other, token, held, TTL);
		assertThat(replay(store, other).isReadable()).isFalse();
	}

	@Test
	void responseStoredInClearIsRefused() {
		IdempotencyKey key = IdempotencyKey.global("k1");
		complete(this.raw, key);
		EncryptingIdempotencyStore store = new EncryptingIdempotencyStore(this.raw, ring("a", Map.of("a", KEY_A)));
		assertThat(replay(store, key).isReadable()).isFalse();
		assertThat(store.find(key).orElseThrow().response().isReadable()).isFalse();
	}

	@Test
	void responseStoredInClearIsReplayedOnlyWithinTheConfiguredWindow() {
		IdempotencyKey key = IdempotencyKey.global("k1");
		complete(this.raw, key);
		Instant switchedOn = Instant.parse("2026-12-01T10:00:00Z");
		MutableClock clock = new MutableClock(switchedOn);
		EncryptingIdempotencyStore store = new EncryptingIdempotencyStore(this.raw, () -> ring("a", Map.of("a", KEY_A)),
				null, clock)
			.replayingUnencryptedUntil(switchedOn.plus(Duration.ofHours(24)));
		assertThat(store.getReplayUnencryptedUntil()).contains(switchedOn.plus(Duration.ofHours(24)));
		assertThat(replay(store, key)).isEqualTo(this.response);
		clock.now = switchedOn.plus(Duration.ofHours(24));
		assertThat(replay(store, key).isReadable()).isFalse();
		assertThat(store.find(key).orElseThrow().response().isReadable()).isFalse();
	}

	@Test
	void envelopeWithAlteredStatusOrHeadersIsRefusedEvenWithinTheWindow() {
		IdempotencyKey key = IdempotencyKey.global("k1");
		EncryptingIdempotencyStore store = new EncryptingIdempotencyStore(this.raw, ring("a", Map.of("a", KEY_A)))
			.replayingUnencryptedUntil(Instant.now().plus(Duration.ofDays(1)));
		complete(store, key);
		StoredResponse held = this.raw.find(key).orElseThrow().response();
		List<StoredResponse> altered = List.of(new StoredResponse(201, held.headers(), held.bodyBytes()),
				new StoredResponse(200,
						List.of(held.headers().get(0), new HttpHeader("Content-Type", "application/json")),
						held.bodyBytes()),
				new StoredResponse(200, List.of(new HttpHeader("idempotency-encrypted", "v2")), held.bodyBytes()));
		int n = 0;
		for (StoredResponse response : altered) {
			IdempotencyKey copy = IdempotencyKey.global("altered-" + n++);
			OwnerToken token = OwnerToken.generate();
			this.raw.acquire(copy, this.fingerprint, token, LEASE, TTL);
			this.raw.complete(copy, token, response, TTL);
			assertThat(replay(store, copy).isReadable()).as(response.toString()).isFalse();
			assertThat(store.find(copy).orElseThrow().response().isReadable()).isFalse();
			// and an engine without decryption never replays it either
			try (IdempotencyEngine engine = new IdempotencyEngine(this.raw)) {
				assertThat(engine.begin(copy, this.fingerprint, IdempotencyPolicy.defaults())).isInstanceOfSatisfying(
						Decision.Replay.class, (replay) -> assertThat(replay.response().isReadable()).isFalse());
			}
		}
	}

	@Test
	void keyRingChecksItsKeys() {
		assertThatIllegalArgumentException().isThrownBy(() -> ring("b", Map.of("a", KEY_A)))
			.withMessageContaining("primary key 'b'");
		assertThatIllegalArgumentException().isThrownBy(() -> ring("a", Map.of("a", "AAEC")))
			.withMessageContaining("16, 24 or 32 bytes");
		assertThatIllegalArgumentException().isThrownBy(() -> ring("a", Map.of("a", "not base64!")))
			.withMessage("Key 'a' is not valid base64");
		assertThatIllegalArgumentException().isThrownBy(() -> ring("a;b", Map.of("a;b", KEY_A)))
			.withMessageContaining("visible ASCII");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> EncryptionKeyRing.of("a", Map.of("a", new SecretKeySpec(new byte[16], "HmacSHA256"))))
			.withMessageContaining("not an AES key");
		EncryptionKeyRing ring = ring("b", Map.of("a", KEY_A, "b", KEY_B));
		assertThat(ring.primaryKeyId()).isEqualTo("b");
		assertThat(ring.keyIds()).containsExactlyInAnyOrder("a", "b");
		assertThat(ring.toString()).doesNotContain(KEY_A, KEY_B);
	}

	private static EncryptionKeyRing ring(String primary, Map<String, String> keys) {
		return EncryptionKeyRing.ofBase64(primary, keys);
	}

	private void complete(IdempotencyStore store, IdempotencyKey key) {
		OwnerToken token = OwnerToken.generate();
		assertThat(store.acquire(key, this.fingerprint, token, LEASE, TTL)).isInstanceOf(AcquireResult.Acquired.class);
		assertThat(store.complete(key, token, this.response, TTL)).isTrue();
	}

	private StoredResponse replay(IdempotencyStore store, IdempotencyKey key) {
		AcquireResult result = store.acquire(key, this.fingerprint, OwnerToken.generate(), LEASE, TTL);
		assertThat(result).isInstanceOf(AcquireResult.Replay.class);
		IdempotencyRecord record = store.find(key).orElseThrow();
		assertThat(record.response()).isNotNull();
		return ((AcquireResult.Replay) result).response();
	}

	private static final class MutableClock extends Clock {

		private Instant now;

		MutableClock(Instant now) {
			this.now = now;
		}

		@Override
		public ZoneId getZone() {
			return ZoneOffset.UTC;
		}

		@Override
		public Clock withZone(ZoneId zone) {
			return this;
		}

		@Override
		public Instant instant() {
			return this.now;
		}

	}

}
