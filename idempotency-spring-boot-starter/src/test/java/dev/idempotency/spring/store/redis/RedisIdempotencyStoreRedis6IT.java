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

package dev.idempotency.spring.store.redis;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.test.servers.TestServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.embedded.RedisServer;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RedisIdempotencyStore} on Redis 6.2, whose {@code SET} refuses {@code NX}
 * together with {@code GET}: the store notices the syntax error of its first claim and
 * claims every key with its script from then on. The server is the embedded Redis 6.2 of
 * the test class path, started for this class whatever server the other tests use,
 * because it is the version that matters here.
 *
 * @author Idempotency contributors
 */
class RedisIdempotencyStoreRedis6IT {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration TTL = Duration.ofMinutes(10);

	private static RedisServer server;

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void startRedis6() throws IOException {
		int port = TestServers.freePort();
		try {
			server = TestServers.startEmbeddedRedis(port);
		}
		catch (IOException | RuntimeException ex) {
			throw new IllegalStateException("This test needs the embedded Redis 6.2 of com.github.codemonstur:"
					+ "embedded-redis, which could not start on this machine (cause below)", ex);
		}
		connectionFactory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", port));
		connectionFactory.afterPropertiesSet();
		connectionFactory.start();
	}

	@AfterAll
	static void stopRedis6() throws IOException {
		if (connectionFactory != null) {
			connectionFactory.destroy();
		}
		if (server != null) {
			server.stop();
		}
	}

	@Test
	void serverIsARedisThatCannotCombineNxAndGet() {
		try (RedisConnection connection = connectionFactory.getConnection()) {
			assertThat(connection.serverCommands().info("server").getProperty("redis_version")).startsWith("6.2.");
		}
	}

	@Test
	void storeFallsBackToTheScriptAndKeepsTheContract() {
		RedisIdempotencyStore store = new RedisIdempotencyStore(connectionFactory);
		IdempotencyKey key = IdempotencyKey.global("redis-6");
		RequestFingerprint fingerprint = RequestFingerprint.of(new byte[RequestFingerprint.LENGTH]);
		OwnerToken owner = OwnerToken.generate();
		assertThat(store.acquire(key, fingerprint, owner, LEASE, TTL)).isInstanceOf(AcquireResult.Acquired.class);
		assertThat(store.acquire(key, fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.InProgress.class);
		byte[] other = new byte[RequestFingerprint.LENGTH];
		other[0] = 1;
		assertThat(store.acquire(key, RequestFingerprint.of(other), OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Mismatch.class);
		StoredResponse response = new StoredResponse(201, List.of(), "paid".getBytes(StandardCharsets.US_ASCII));
		assertThat(store.complete(key, owner, response, TTL)).isTrue();
		assertThat(store.acquire(key, fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOfSatisfying(AcquireResult.Replay.class, (replay) -> {
				assertThat(replay.response()).isEqualTo(response);
				assertThat(replay.expiresAt()).isEqualTo(store.find(key).orElseThrow().expiresAt());
			});
		assertThat(store.evict(key)).isTrue();
	}

}
