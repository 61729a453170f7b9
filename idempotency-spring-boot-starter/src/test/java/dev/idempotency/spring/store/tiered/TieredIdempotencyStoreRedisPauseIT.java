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

package dev.idempotency.spring.store.tiered;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.engine.CompletionOutcome;
import dev.idempotency.core.engine.Decision;
import dev.idempotency.core.engine.Execution;
import dev.idempotency.core.engine.IdempotencyEngine;
import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencySchemaInitializer;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spring.store.redis.RedisIdempotencyStore;
import dev.idempotency.test.TcpProxy;
import dev.idempotency.test.servers.TestServers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Redis that hangs (connections open, nothing answered) under a running handler in
 * tiered mode, on real servers: the PostgreSQL lease is still renewed on time, so
 * duplicates that reach PostgreSQL through another instance all along are refused, and
 * the handler runs exactly once.
 *
 * @author Idempotency contributors
 */
class TieredIdempotencyStoreRedisPauseIT {

	private static final Duration LOCK_TIMEOUT = Duration.ofSeconds(1);

	// longer than the lease, as Lettuce's default of 60 s is
	private static final Duration REDIS_TIMEOUT = Duration.ofSeconds(20);

	private static final RequestFingerprint FINGERPRINT = TieredIdempotencyStoreTests.fingerprint(11);

	private final String prefix = "idem-tiered-pause-it-" + UUID.randomUUID() + ":";

	private final String schema = "idem_tiered_pause_" + UUID.randomUUID().toString().substring(0, 8);

	private TcpProxy redisProxy;

	private LettuceConnectionFactory proxiedRedis;

	private HikariDataSource dataSource;

	@BeforeEach
	void setUp() throws Exception {
		TestServers.Redis redis = TestServers.redis();
		this.redisProxy = TcpProxy.start(redis.host(), redis.port());
		this.proxiedRedis = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(this.redisProxy.host(), this.redisProxy.port()),
				LettuceClientConfiguration.builder().commandTimeout(REDIS_TIMEOUT).build());
		this.proxiedRedis.afterPropertiesSet();
		this.proxiedRedis.start();
		this.dataSource = TestServers.postgres().dataSource(this.schema);
		new JdbcIdempotencySchemaInitializer(this.dataSource).initialize();
	}

	@AfterEach
	void tearDown() throws Exception {
		try {
			this.redisProxy.resume();
			this.proxiedRedis.destroy();
			this.redisProxy.close();
			TestServers.Postgres.dropSchema(this.dataSource, this.schema);
		}
		finally {
			this.dataSource.close();
		}
	}

	@Test
	void redisPausedUnderARunningHandlerNeverLetsAnotherInstanceRunItAgain() throws Exception {
		RedisIdempotencyStore redisStore = new RedisIdempotencyStore(this.proxiedRedis);
		redisStore.setKeyPrefix(this.prefix);
		TieredIdempotencyStore tiered = new TieredIdempotencyStore(redisStore,
				new JdbcIdempotencyStore(this.dataSource));
		// the other instance's Redis calls time out too, or its breaker is open: its
		// duplicates reach PostgreSQL
		JdbcIdempotencyStore otherInstance = new JdbcIdempotencyStore(this.dataSource);
		IdempotencyPolicy policy = IdempotencyPolicy.builder().lockTimeout(LOCK_TIMEOUT).build();
		IdempotencyKey key = IdempotencyKey.global("pay-" + UUID.randomUUID());
		AtomicInteger executions = new AtomicInteger();
		AtomicBoolean running = new AtomicBoolean(true);
		ExecutorService duplicates = Executors.newSingleThreadExecutor();
		try (IdempotencyEngine engine = new IdempotencyEngine(tiered);
				IdempotencyEngine other = new IdempotencyEngine(otherInstance)) {
			Decision first = engine.begin(key, FINGERPRINT, policy);
			assertThat(first).isInstanceOf(Decision.Execute.class);
			executions.incrementAndGet();
			Future<Integer> sent = duplicates.submit(() -> {
				int count = 0;
				while (running.get()) {
					Decision decision = other.begin(key, FINGERPRINT, policy);
					count++;
					if (decision instanceof Decision.Execute execute) {
						executions.incrementAndGet();
						execute.execution().complete(new StoredResponse(201, List.of(), "second".getBytes()));
					}
					Thread.sleep(50);
				}
				return count;
			});
			// the handler runs while Redis hangs for three lock timeouts
			this.redisProxy.pause();
			Thread.sleep(3 * LOCK_TIMEOUT.toMillis());
			this.redisProxy.resume();
			Execution execution = ((Decision.Execute) first).execution();
			CompletionOutcome outcome = execution.complete(new StoredResponse(201, List.of(), "first".getBytes()));
			running.set(false);
			assertThat(sent.get(30, TimeUnit.SECONDS)).as("duplicates sent").isGreaterThan(5);
			assertThat(executions).as("handler executions").hasValue(1);
			assertThat(execution.isOwnershipLost()).isFalse();
			assertThat(outcome).isEqualTo(CompletionOutcome.STORED);
			assertThat(other.begin(key, FINGERPRINT, policy)).isInstanceOf(Decision.Replay.class);
		}
		finally {
			running.set(false);
			duplicates.shutdownNow();
			tiered.destroy();
		}
	}

}
