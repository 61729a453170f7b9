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

package dev.idempotency.spring.store.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.engine.CompletionOutcome;
import dev.idempotency.core.engine.Decision;
import dev.idempotency.core.engine.Execution;
import dev.idempotency.core.engine.IdempotencyEngine;
import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.test.servers.TestServers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A crowd of duplicates waiting for a running request ({@code in-flight-wait}) on a small
 * pool of a busy database: the owner's heartbeat takes its connections from the same
 * pool, and must still renew the lease in time. Polling each on its own, a hundred
 * duplicates kept the five connections busy, the owner's renewals waited behind them, the
 * lease lapsed, and a duplicate took the key over and ran the handler a second time; the
 * duplicates of one key now take turns at the store.
 * <p>
 * The database is made busy by holding every connection 20 ms longer than its statements
 * take, as a loaded server or a slow network would: a hundred duplicates polling every
 * 250 ms on their own would need eight connections.
 *
 * @author Idempotency contributors
 */
class JdbcInFlightWaitPoolIT {

	private static final int POOL_SIZE = 5;

	private static final long HOLD_MILLIS = 20;

	private static final int DUPLICATES = 100;

	private static final Duration LOCK_TIMEOUT = Duration.ofMillis(900);

	private static final RequestFingerprint FINGERPRINT = RequestFingerprint.of(new byte[32]);

	private final String schema = "idem_wait_pool_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);

	private HikariDataSource direct;

	private HikariDataSource pool;

	@BeforeEach
	void setUp() {
		TestServers.Postgres postgres = TestServers.postgres();
		this.direct = postgres.dataSource(this.schema);
		new JdbcIdempotencySchemaInitializer(this.direct).initialize();
		HikariConfig config = new HikariConfig();
		config.setDataSource(this.direct);
		config.setPoolName("wait-pool-" + this.schema);
		config.setMaximumPoolSize(POOL_SIZE);
		// Hikari's default: a renewal waits up to 30 s for a connection, long past the
		// lease
		config.setConnectionTimeout(30_000);
		this.pool = new HikariDataSource(config);
	}

	@AfterEach
	void tearDown() {
		try {
			this.pool.close();
			TestServers.Postgres.dropSchema(this.direct, this.schema);
		}
		finally {
			this.direct.close();
		}
	}

	@Test
	void aHundredWaitingDuplicatesLeaveTheOwnersHeartbeatItsConnections() throws Exception {
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(busy(this.pool));
		IdempotencyPolicy policy = IdempotencyPolicy.builder()
			.lockTimeout(LOCK_TIMEOUT)
			.inFlightWait(Duration.ofSeconds(5))
			.build();
		IdempotencyKey key = IdempotencyKey.global("pay-" + UUID.randomUUID());
		AtomicInteger executions = new AtomicInteger();
		Map<String, AtomicInteger> answers = new ConcurrentHashMap<>();
		ExecutorService duplicates = Executors.newFixedThreadPool(DUPLICATES);
		try (IdempotencyEngine engine = new IdempotencyEngine(store)) {
			Decision decision = engine.begin(key, FINGERPRINT, policy);
			assertThat(decision).isInstanceOf(Decision.Execute.class);
			Execution execution = ((Decision.Execute) decision).execution();
			executions.incrementAndGet();
			CountDownLatch started = new CountDownLatch(DUPLICATES);
			List<Future<?>> sent = new ArrayList<>();
			for (int i = 0; i < DUPLICATES; i++) {
				sent.add(duplicates.submit(() -> {
					started.countDown();
					Decision duplicate = engine.begin(key, FINGERPRINT, policy);
					answers.computeIfAbsent(duplicate.getClass().getSimpleName(), (name) -> new AtomicInteger())
						.incrementAndGet();
					if (duplicate instanceof Decision.Execute execute) {
						executions.incrementAndGet();
						execute.execution().complete(response("second"));
					}
					return null;
				}));
			}
			assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
			// the handler runs for three and a half leases while the duplicates wait
			Thread.sleep(LOCK_TIMEOUT.toMillis() * 7 / 2);
			CompletionOutcome outcome = execution.complete(response("first"));
			for (Future<?> duplicate : sent) {
				duplicate.get(60, TimeUnit.SECONDS);
			}
			assertThat(executions).as("handler executions (the duplicates' answers: %s)", answers).hasValue(1);
			assertThat(execution.isOwnershipLost()).isFalse();
			assertThat(outcome).isEqualTo(CompletionOutcome.STORED);
			assertThat(answers).as("the duplicates' answers").containsKey("Replay");
			Decision replay = engine.begin(key, FINGERPRINT, policy);
			assertThat(replay).isInstanceOf(Decision.Replay.class);
			assertThat(((Decision.Replay) replay).response().bodyBytes())
				.isEqualTo("first".getBytes(StandardCharsets.UTF_8));
		}
		finally {
			duplicates.shutdownNow();
		}
	}

	// every connection held HOLD_MILLIS longer before it goes back to the pool
	private static DataSource busy(DataSource pool) {
		return (DataSource) Proxy.newProxyInstance(JdbcInFlightWaitPoolIT.class.getClassLoader(),
				new Class<?>[] { DataSource.class }, (proxy, method, arguments) -> {
					Object result = invoke(pool, method, arguments);
					if ("getConnection".equals(method.getName())) {
						return holding((Connection) result);
					}
					return result;
				});
	}

	private static Connection holding(Connection connection) {
		return (Connection) Proxy.newProxyInstance(JdbcInFlightWaitPoolIT.class.getClassLoader(),
				new Class<?>[] { Connection.class }, (proxy, method, arguments) -> {
					if ("close".equals(method.getName())) {
						Thread.sleep(HOLD_MILLIS);
					}
					return invoke(connection, method, arguments);
				});
	}

	private static Object invoke(Object target, java.lang.reflect.Method method, Object[] arguments) throws Throwable {
		try {
			return method.invoke(target, arguments);
		}
		catch (InvocationTargetException ex) {
			throw ex.getCause();
		}
	}

	private static StoredResponse response(String body) {
		return new StoredResponse(201, List.of(), body.getBytes(StandardCharsets.UTF_8));
	}

}
