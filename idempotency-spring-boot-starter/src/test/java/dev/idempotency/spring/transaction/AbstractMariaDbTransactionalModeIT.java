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

package dev.idempotency.spring.transaction;

import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import dev.idempotency.spring.transaction.TransactionalTestApplication.LedgerController;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The transactional mode on MariaDB: every ending of {@link AbstractTransactionalModeIT},
 * and what is MariaDB's own: the session's {@code idle_transaction_timeout}, which a
 * request's transaction sets and sets back, and a connection that the server kills
 * between the stored response and the {@code COMMIT}.
 *
 * @author Idempotency contributors
 */
abstract class AbstractMariaDbTransactionalModeIT extends AbstractTransactionalModeIT {

	@Override
	TransactionalTestDatabase database() {
		return TransactionalTestDatabase.MARIADB;
	}

	@Test
	void everyConnectionHasTheApplicationsIdleTransactionTimeoutAgainAfterTransactionalRequests() throws Exception {
		String key = newKey();
		JdbcTemplate application = instanceA().getBean(JdbcTemplate.class);
		AtomicReference<Map<String, Object>> during = new AtomicReference<>();
		LedgerController controller = controller(instanceA());
		controller.hold(key);
		controller.beforeCommit(key, () -> during.set(application
			.queryForMap("SELECT CONNECTION_ID() AS session_id, @@session.idle_transaction_timeout AS idle")));
		CompletableFuture<HttpResponse<String>> held = CompletableFuture.supplyAsync(() -> {
			try {
				return post(instanceA(), "/ledger", key, "idle", Map.of());
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		});
		try {
			assertThat(controller.awaitEntered(key)).isTrue();
			// a duplicate claims in a transaction of its own too, which ends before its
			// 409
			assertThat(post(instanceB(), "/ledger", key, "idle", Map.of()).statusCode()).isEqualTo(409);
		}
		finally {
			controller.release(key);
		}
		assertThat(held.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
		// and a request whose handler fails: rolled back
		assertThat(post(instanceB(), "/ledger", newKey(), "idle", Map.of("X-Mode", "fail")).statusCode())
			.isEqualTo(500);
		// in its transaction, the committed request's session had the request's
		// time-out: 30 s, the ledger policy's lock timeout in these tests
		assertThat(during.get()).as("the session during the request").isNotNull();
		long session = ((Number) during.get().get("session_id")).longValue();
		assertThat(((Number) during.get().get("idle")).longValue()).isEqualTo(30);
		// after the requests, each connection of the pool has the application's setting
		// again, that one included
		Map<Long, Long> idle = idleTransactionTimeoutOfEveryConnection();
		assertThat(idle).containsKey(session);
		assertThat(idle).allSatisfy((connection, seconds) -> assertThat(seconds).as("session %d", connection)
			.isEqualTo(TransactionalTestDatabase.IDLE_TRANSACTION_TIMEOUT));
	}

	@Test
	void connectionKilledBetweenTheStoredResponseAndTheCommitIsNeverAnsweredAsASuccessAndNothingPersists()
			throws Exception {
		String key = newKey();
		JdbcTemplate application = instanceA().getBean(JdbcTemplate.class);
		AtomicLong killed = new AtomicLong();
		// the response is stored, the COMMIT is about to be sent: the server kills the
		// request's session (an operator's KILL, a failover), which rolls its
		// transaction back
		controller(instanceA()).beforeCommit(key, () -> {
			long session = Objects.requireNonNull(application.queryForObject("SELECT CONNECTION_ID()", Long.class));
			jdbc().execute("KILL CONNECTION " + session);
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
			while (sessionExists(session) && System.nanoTime() < deadline) {
				Thread.onSpinWait();
			}
			killed.set(session);
		});
		HttpResponse<String> lost = post(instanceA(), "/ledger/quick", key, "killed", Map.of());
		assertThat(killed.get()).as("the killed session").isPositive();
		assertThat(sessionExists(killed.get())).isFalse();
		assertThat(lost.statusCode()).as(lost.body()).isEqualTo(503);
		assertThat(lost.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(lost.headers().firstValue("Retry-After")).isPresent();
		// the COMMIT found no connection: whether it was applied is unknown to the
		// application, and the problem says so, never the success
		assertThat(lost.body()).contains("idempotency-store-unavailable")
			.contains("whether it was processed is unknown")
			.doesNotContain("\"entries\"");
		// it was not: nothing persisted, and the key is free (in Redis once the claim's
		// lease, 1 s, has lapsed, at the latest): the retry runs the handler, once
		assertThat(entries(key)).isZero();
		assertThat(recordStatus(key)).isNull();
		HttpResponse<String> retry;
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		do {
			retry = post(instanceB(), "/ledger/quick", key, "killed", Map.of());
		}
		while (retry.statusCode() == 409 && System.nanoTime() < deadline && sleep(100));
		assertThat(retry.statusCode()).as(retry.body()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(entries(key)).isOne();
		assertThat(recordStatus(key)).isEqualTo("C");
		assertThat(controller(instanceA()).runs(key) + controller(instanceB()).runs(key)).isEqualTo(2);
	}

	// every connection of the shared pool, held at once so that each is one of them:
	// its session, and its idle_transaction_timeout
	private Map<Long, Long> idleTransactionTimeoutOfEveryConnection() throws SQLException {
		List<Connection> connections = new ArrayList<>();
		try {
			for (int i = 0; i < dataSource().getMaximumPoolSize(); i++) {
				connections.add(dataSource().getConnection());
			}
			Map<Long, Long> idle = new LinkedHashMap<>();
			for (Connection connection : connections) {
				try (Statement statement = connection.createStatement();
						ResultSet row = statement
							.executeQuery("SELECT CONNECTION_ID(), @@session.idle_transaction_timeout")) {
					assertThat(row.next()).isTrue();
					idle.put(row.getLong(1), row.getLong(2));
				}
			}
			return idle;
		}
		finally {
			for (Connection connection : connections) {
				connection.close();
			}
		}
	}

	private static boolean sleep(long millis) throws InterruptedException {
		Thread.sleep(millis);
		return true;
	}

}
