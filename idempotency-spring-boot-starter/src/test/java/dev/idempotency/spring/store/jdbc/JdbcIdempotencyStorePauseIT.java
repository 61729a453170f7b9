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

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

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
import dev.idempotency.test.TcpProxy;
import dev.idempotency.test.servers.TestServers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.Driver;
import org.postgresql.PGProperty;
import org.postgresql.ds.PGSimpleDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A PostgreSQL that hangs (connections open, nothing answered) for three lock timeouts
 * under a running handler, on a real server, with two application instances whose
 * connections both go through the hang: the lease lapses while the handler still runs,
 * yet the duplicates that the other instance sends all along never run the handler a
 * second time, because a lapsed lease is taken over only a lease after a request first
 * found it lapsed and the owner renews it before that, even when the server answers the
 * duplicates first once it is back.
 * <p>
 * Client time-outs follow docs/operations.md: the socket and pool time-outs stay within a
 * third of the lock timeout.
 *
 * @author Idempotency contributors
 */
class JdbcIdempotencyStorePauseIT {

	private static final Duration LOCK_TIMEOUT = Duration.ofSeconds(3);

	// pgjdbc's socket time-out is in whole seconds: a third of the lock timeout
	private static final int SOCKET_TIMEOUT_SECONDS = 1;

	private static final RequestFingerprint FINGERPRINT = RequestFingerprint.of(new byte[RequestFingerprint.LENGTH]);

	private final String schema = "idem_jdbc_pause_" + UUID.randomUUID().toString().substring(0, 8);

	// each instance reaches the same server through its own proxy, so that the test can
	// choose which one the server answers first once it is back
	private TcpProxy firstProxy;

	private TcpProxy secondProxy;

	private HikariDataSource direct;

	private HikariDataSource first;

	private HikariDataSource second;

	@BeforeEach
	void setUp() throws Exception {
		TestServers.Postgres postgres = TestServers.postgres();
		this.direct = postgres.dataSource(this.schema);
		new JdbcIdempotencySchemaInitializer(this.direct).initialize();
		Properties url = Driver.parseURL(postgres.jdbcUrl(), new Properties());
		if (url == null) {
			throw new IllegalStateException("Not a PostgreSQL JDBC URL: " + postgres.jdbcUrl());
		}
		String host = PGProperty.PG_HOST.getOrDefault(url).split(",")[0];
		int port = Integer.parseInt(PGProperty.PG_PORT.getOrDefault(url).split(",")[0]);
		this.firstProxy = TcpProxy.start(host, port);
		this.secondProxy = TcpProxy.start(host, port);
		this.first = proxiedDataSource(postgres, url, this.firstProxy, "first");
		this.second = proxiedDataSource(postgres, url, this.secondProxy, "second");
	}

	@AfterEach
	void tearDown() {
		try {
			this.firstProxy.resume();
			this.secondProxy.resume();
			this.first.close();
			this.second.close();
			this.firstProxy.close();
			this.secondProxy.close();
			TestServers.Postgres.dropSchema(this.direct, this.schema);
		}
		finally {
			this.direct.close();
		}
	}

	@Test
	void postgresPausedUnderARunningHandlerNeverLetsAnotherInstanceRunItAgain() throws Exception {
		JdbcIdempotencyStore firstStore = new JdbcIdempotencyStore(this.first);
		JdbcIdempotencyStore secondStore = new JdbcIdempotencyStore(this.second);
		IdempotencyPolicy policy = IdempotencyPolicy.builder().lockTimeout(LOCK_TIMEOUT).build();
		IdempotencyKey key = IdempotencyKey.global("pay-" + UUID.randomUUID());
		AtomicInteger executions = new AtomicInteger();
		AtomicBoolean running = new AtomicBoolean(true);
		Map<String, AtomicInteger> decisions = new ConcurrentHashMap<>();
		ExecutorService duplicates = Executors.newSingleThreadExecutor();
		try (IdempotencyEngine engine = new IdempotencyEngine(firstStore);
				IdempotencyEngine other = new IdempotencyEngine(secondStore)) {
			Decision decision = engine.begin(key, FINGERPRINT, policy);
			assertThat(decision).isInstanceOf(Decision.Execute.class);
			Execution execution = ((Decision.Execute) decision).execution();
			executions.incrementAndGet();
			Future<?> sent = duplicates.submit(() -> {
				while (running.get()) {
					Decision duplicate = other.begin(key, FINGERPRINT, policy);
					decisions.computeIfAbsent(duplicate.getClass().getSimpleName(), (name) -> new AtomicInteger())
						.incrementAndGet();
					if (duplicate instanceof Decision.Execute execute) {
						executions.incrementAndGet();
						execute.execution().complete(response("second"));
					}
					Thread.sleep(50);
				}
				return null;
			});
			// the handler runs on while PostgreSQL hangs for three lock timeouts ...
			this.firstProxy.pause();
			this.secondProxy.pause();
			Thread.sleep(3 * LOCK_TIMEOUT.toMillis());
			// ... the duplicates reach it first when it is back,
			// the owner's renewal later
			this.secondProxy.resume();
			Thread.sleep(LOCK_TIMEOUT.toMillis() / 6);
			this.firstProxy.resume();
			// ... and the handler runs for one more lock timeout
			Thread.sleep(LOCK_TIMEOUT.toMillis());
			CompletionOutcome outcome = execution.complete(response("first"));
			running.set(false);
			sent.get(30, TimeUnit.SECONDS);
			assertThat(executions).as("handler executions (duplicates: %s)", decisions).hasValue(1);
			assertThat(decisions).as("decisions of the duplicates").containsKeys("Unavailable", "InProgress");
			assertThat(outcome).isEqualTo(CompletionOutcome.STORED);
			assertThat(execution.isOwnershipLost()).isFalse();
			Decision replay = other.begin(key, FINGERPRINT, policy);
			assertThat(replay).isInstanceOf(Decision.Replay.class);
			assertThat(((Decision.Replay) replay).response().bodyBytes())
				.isEqualTo("first".getBytes(StandardCharsets.UTF_8));
		}
		finally {
			running.set(false);
			duplicates.shutdownNow();
		}
	}

	private HikariDataSource proxiedDataSource(TestServers.Postgres postgres, Properties url, TcpProxy proxy,
			String name) {
		PGSimpleDataSource target = new PGSimpleDataSource();
		target.setServerNames(new String[] { proxy.host() });
		target.setPortNumbers(new int[] { proxy.port() });
		target.setDatabaseName(PGProperty.PG_DBNAME.getOrDefault(url));
		target.setUser(postgres.username());
		target.setPassword(postgres.password());
		target.setCurrentSchema(this.schema);
		target.setConnectTimeout(SOCKET_TIMEOUT_SECONDS);
		target.setSocketTimeout(SOCKET_TIMEOUT_SECONDS);
		HikariConfig config = new HikariConfig();
		config.setDataSource(target);
		config.setPoolName("jdbc-pause-" + name + "-" + this.schema);
		config.setMaximumPoolSize(4);
		config.setMinimumIdle(1);
		config.setConnectionTimeout(SOCKET_TIMEOUT_SECONDS * 1000L);
		return new HikariDataSource(config);
	}

	private static StoredResponse response(String body) {
		return new StoredResponse(201, List.of(), body.getBytes(StandardCharsets.UTF_8));
	}

}
