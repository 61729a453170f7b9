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

package dev.idempotency.spring.web;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.engine.IdempotencyEngine;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.EncryptingIdempotencyStore;
import dev.idempotency.core.store.EncryptionKeyRing;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.ReplayCachingStore;
import dev.idempotency.spring.metrics.MeteredIdempotencyStore;
import dev.idempotency.test.servers.TestServers;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStringCommands.SetOption;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.types.Expiration;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP contract over the Redis store on a real Redis server with encryption at rest
 * on ({@code idempotency.encryption.enabled=true}), and what encryption adds: Redis holds
 * ciphertext, a retry still replays the same bytes, and a record that cannot be decrypted
 * is answered {@code response-not-replayable}. Its context is closed after the class.
 *
 * @author Idempotency contributors
 */
@DirtiesContext
@TestPropertySource(properties = { "idempotency.encryption.enabled=true",
		"idempotency.encryption.keys.old=" + RedisEncryptedHttpContractIT.OLD_KEY,
		"idempotency.encryption.keys.current=" + RedisEncryptedHttpContractIT.CURRENT_KEY,
		"idempotency.encryption.primary-key-id=current",
		"idempotency.redis.key-prefix=" + RedisEncryptedHttpContractIT.PREFIX })
@Tag("variant")
class RedisEncryptedHttpContractIT extends RedisHttpContractIT {

	static final String PREFIX = "it-http-redis-encrypted:";

	static final String OLD_KEY = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

	static final String CURRENT_KEY = "HxwdHhsaGRgXFhUUExIREA8ODQwLCgkIBwYFBAMCAQA=";

	private static final String RETIRED_KEY = "ICEiIyQlJicoKSorLC0uLzAxMjM0NTY3ODk6Ozw9Pj8=";

	@Autowired
	IdempotencyEngine engine;

	@Autowired
	LettuceConnectionFactory connectionFactory;

	@Test
	void engineEncryptsAndTheStoreBeanDoesNot() {
		assertThat(unwrap(this.engine.store())).isInstanceOf(EncryptingIdempotencyStore.class);
		assertThat(realStore()).isNotInstanceOf(EncryptingIdempotencyStore.class);
	}

	@Test
	void retryReplaysTheSameBytesWhileRedisHoldsCiphertext() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/payments", key, "{\"amount\":10}");
		assertThat(first.statusCode()).isEqualTo(201);
		HttpResponse<byte[]> replay = post("/payments", key, "{\"amount\":10}");
		assertPaymentReplayed(replay, first, key);
		String raw = new String(rawValue(IdempotencyKey.global(key)), StandardCharsets.ISO_8859_1);
		assertThat(raw).contains("v1;key=current").doesNotContain(text(first));
		assertThat(raw).doesNotContain(first.headers().firstValue("Content-Type").orElseThrow());
	}

	@Test
	void alteredRecordIsAnsweredNotReplayable() throws Exception {
		String key = newKey();
		assertThat(post("/payments", key, "{}").statusCode()).isEqualTo(201);
		byte[] raw = rawValue(IdempotencyKey.global(key));
		raw[raw.length - 1] ^= 1;
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			connection.stringCommands()
				.set(redisKey(IdempotencyKey.global(key)), raw, Expiration.keepTtl(), SetOption.upsert());
		}
		assertRetryAnsweredNotReplayable(key);
	}

	@Test
	void recordOfARemovedKeyIsAnsweredNotReplayable() throws Exception {
		String key = newKey();
		// the first request ran while a key this application no longer holds was
		// primary
		assertThat(post("/payments", key, "{}").statusCode()).isEqualTo(201);
		IdempotencyKey recordKey = IdempotencyKey.global(key);
		StoredResponse stored = this.engine.store().find(recordKey).orElseThrow().response();
		replaceRecord(new EncryptingIdempotencyStore(realStore(),
				EncryptionKeyRing.ofBase64("retired", Map.of("retired", RETIRED_KEY))), recordKey, stored);
		assertRetryAnsweredNotReplayable(key);
	}

	@Test
	void recordWrittenInTheClearIsAnsweredNotReplayable() throws Exception {
		String key = newKey();
		assertThat(post("/payments", key, "{}").statusCode()).isEqualTo(201);
		IdempotencyKey recordKey = IdempotencyKey.global(key);
		// someone who can write to Redis puts a record of their own in its place
		replaceRecord(realStore(), recordKey,
				new StoredResponse(201, List.of(new HttpHeader("Content-Type", "application/json")),
						"{\"id\":\"pay_forged\"}".getBytes(StandardCharsets.UTF_8)));
		assertThat(assertRetryAnsweredNotReplayable(key)).doesNotContain("pay_forged");
	}

	@Test
	void envelopeWithAlteredStatusIsAnsweredNotReplayable() throws Exception {
		String key = newKey();
		assertThat(post("/payments", key, "{}").statusCode()).isEqualTo(201);
		IdempotencyKey recordKey = IdempotencyKey.global(key);
		StoredResponse envelope = realStore().find(recordKey).orElseThrow().response();
		assertThat(EncryptingIdempotencyStore.isEnvelope(envelope)).isTrue();
		replaceRecord(realStore(), recordKey, new StoredResponse(201, envelope.headers(), envelope.bodyBytes()));
		assertRetryAnsweredNotReplayable(key);
	}

	// the record of a key, completed again in Redis through the given store with the
	// given response
	private void replaceRecord(IdempotencyStore through, IdempotencyKey recordKey, StoredResponse stored) {
		RequestFingerprint fingerprint = realStore().find(recordKey).orElseThrow().fingerprint();
		assertThat(realStore().evict(recordKey)).isTrue();
		OwnerToken token = OwnerToken.generate();
		assertThat(through.acquire(recordKey, fingerprint, token, Duration.ofSeconds(30), Duration.ofMinutes(10)))
			.isInstanceOf(AcquireResult.Acquired.class);
		assertThat(through.complete(recordKey, token, stored, Duration.ofMinutes(10))).isTrue();
	}

	// a retry of the payment is answered response-not-replayable, and the handler ran
	// once: returns the problem's text
	private String assertRetryAnsweredNotReplayable(String key) throws Exception {
		HttpResponse<byte[]> retry = post("/payments", key, "{}");
		assertThat(retry.statusCode()).isEqualTo(410);
		assertThat(text(retry)).contains("response-not-replayable");
		assertThat(this.counter.count("payments", key)).isOne();
		return text(retry);
	}

	private static IdempotencyStore unwrap(IdempotencyStore store) {
		IdempotencyStore current = store;
		while (!(current instanceof EncryptingIdempotencyStore)) {
			if (current instanceof MeteredIdempotencyStore metered) {
				current = metered.getDelegate();
			}
			else if (current instanceof ReplayCachingStore cache) {
				current = cache.getDelegate();
			}
			else {
				return current;
			}
		}
		return current;
	}

	private static byte[] redisKey(IdempotencyKey key) {
		return TestServers.Redis.recordKey(PREFIX, key.digest());
	}

	private byte[] rawValue(IdempotencyKey key) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			byte[] value = connection.stringCommands().get(redisKey(key));
			assertThat(value).isNotNull();
			return value;
		}
	}

}
