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

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import javax.sql.DataSource;

import dev.idempotency.spring.Idempotent;
import dev.idempotency.spring.VirtualThreads;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.stereotype.Component;
import org.springframework.stereotype.Service;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.annotation.Propagation;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.transaction.event.TransactionPhase;
import org.springframework.transaction.event.TransactionalEventListener;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * An application instance for the tests of the transactional mode: a ledger whose one
 * idempotent endpoint writes an entry, so that a handler run shows as a row, and which
 * the test can make slow, fail, answer 503 or write a row that fails the commit.
 * <p>
 * The {@code X-Write} header picks how the handler writes its entry: through a
 * {@code @Transactional} service ({@code service}, the default), a
 * {@code TransactionTemplate} ({@code template}) or a bare {@code JdbcClient} call
 * ({@code client}). With {@code X-Audit: true} the handler also writes an audit row
 * through a {@code REQUIRES_NEW} method, after the test released it. With
 * {@code X-Nested-Savepoint} ({@code rollback} or {@code release}) the first call of the
 * nested idempotent method runs in a savepoint ({@code NESTED}) that is then rolled back
 * or released.
 *
 * @author Idempotency contributors
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
class TransactionalTestApplication {

	// PostgreSQL's; MariaDB's is TransactionalTestDatabase.MARIADB's
	static final String SCHEMA_DDL = """
			CREATE TABLE IF NOT EXISTS ledger_entry (
				id bigserial PRIMARY KEY,
				idem_key text NOT NULL,
				body text NOT NULL
			);
			CREATE TABLE IF NOT EXISTS audit_entry (
				id bigserial PRIMARY KEY,
				idem_key text NOT NULL
			);
			CREATE TABLE IF NOT EXISTS nested_entry (
				id bigserial PRIMARY KEY,
				idem_key text NOT NULL
			);
			CREATE TABLE IF NOT EXISTS unique_guard (
				value int PRIMARY KEY
			);
			CREATE TABLE IF NOT EXISTS commit_guard (
				value int,
				CONSTRAINT commit_guard_unique UNIQUE (value) DEFERRABLE INITIALLY DEFERRED
			);
			""";

	/**
	 * Return the properties of an instance: the store and its Redis key prefix, the
	 * transactional policy {@code ledger}, and no auto-configured data source or Redis
	 * connection (the test gives its own).
	 * @param storeType {@code jdbc} or {@code tiered}
	 * @param prefix the Redis key prefix
	 * @return the properties, to add to
	 */
	static Map<String, Object> properties(String storeType, String prefix) {
		Map<String, Object> properties = new LinkedHashMap<>();
		properties.put("server.port", "0");
		properties.put("spring.main.banner-mode", "off");
		properties.put("spring.autoconfigure.exclude",
				"org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration,"
						+ "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration,"
						+ "org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration");
		properties.put("spring.data.redis.repositories.enabled", "false");
		properties.put("idempotency.store.type", storeType);
		properties.put("idempotency.redis.key-prefix", prefix);
		properties.put("idempotency.policies.ledger.transactional", "true");
		properties.put("idempotency.policies.ledger.lock-timeout", "5s");
		// the ledger's short-lived twin (/ledger/quick): its transaction
		// times out after 5 s, the floor
		properties.put("idempotency.policies.quick.transactional", "true");
		properties.put("idempotency.policies.quick.lock-timeout", "1s");
		// the idempotent method that handlers and listeners call: a heartbeat every
		// 300 ms
		properties.put("idempotency.policies.nested.lock-timeout", "900ms");
		return properties;
	}

	/**
	 * How long the {@code busy} mode of a handler keeps the database busy: past the 5 s
	 * time-out of the {@code quick} policy's requests.
	 */
	static final long BUSY_MILLIS = 5500;

	@Service
	static class Ledger {

		private final JdbcTemplate jdbc;

		Ledger(JdbcTemplate jdbc) {
			this.jdbc = jdbc;
		}

		@Transactional
		long record(String key, String body) {
			this.jdbc.update("INSERT INTO ledger_entry (idem_key, body) VALUES (?, ?)", key, body);
			Long entries = this.jdbc.queryForObject("SELECT count(*) FROM ledger_entry", Long.class);
			return (entries != null) ? entries : 0;
		}

		// its own transaction, on a second connection: it leaves the request's
		@Transactional(propagation = Propagation.REQUIRES_NEW)
		void audit(String key) {
			this.jdbc.update("INSERT INTO audit_entry (idem_key) VALUES (?)", key);
		}

		// a business rejection after a write: the exception marks the request's
		// transaction, which this method joins, rollback-only
		@Transactional
		void recordAndReject(String key, String body) {
			this.jdbc.update("INSERT INTO ledger_entry (idem_key, body) VALUES (?, ?)", key, body);
			throw new Rejected("key " + key + " is rejected");
		}

		// an immediate unique constraint, broken: the statement fails and PostgreSQL
		// aborts the transaction (MariaDB rolls back the statement only, and the
		// transaction goes on), which Spring does not mark (no @Transactional here)
		void breakAStatement() {
			this.jdbc.update("INSERT INTO unique_guard (value) VALUES (1), (1)");
		}

		// keeps the database busy on the transaction's connection: on plain JDBC, without
		// the query time-out that Spring's JDBC support would give the statement, and
		// without leaving the transaction idle
		void keepBusy(long millis) {
			Connection connection = DataSourceUtils.getConnection(Objects.requireNonNull(this.jdbc.getDataSource()));
			try (Statement statement = connection.createStatement()) {
				statement.execute(TransactionalTestDatabase.of(connection).sleep(millis));
			}
			catch (SQLException ex) {
				throw new IllegalStateException(ex);
			}
		}

		// a deferred unique constraint, broken twice over: the commit fails (PostgreSQL
		// only: InnoDB has no deferred constraints)
		@Transactional
		void breakTheCommit() {
			this.jdbc.update("INSERT INTO commit_guard (value) VALUES (1), (1)");
		}

	}

	@RestController
	static class LedgerController {

		private final Ledger ledger;

		private final TransactionTemplate transactionTemplate;

		private final TransactionTemplate savepoint;

		private final JdbcClient jdbcClient;

		private final Map<String, CountDownLatch> entered = new ConcurrentHashMap<>();

		private final Map<String, CountDownLatch> gates = new ConcurrentHashMap<>();

		private final Map<String, Runnable> beforeCommit = new ConcurrentHashMap<>();

		private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		private final Map<String, Boolean> virtual = new ConcurrentHashMap<>();

		// handlers in their slow part now, and the most there were at once
		private final AtomicInteger slow = new AtomicInteger();

		private final AtomicInteger mostSlow = new AtomicInteger();

		private final NestedWork nested;

		private final ApplicationEventPublisher events;

		LedgerController(Ledger ledger, PlatformTransactionManager transactionManager, DataSource dataSource,
				NestedWork nested, ApplicationEventPublisher events) {
			this.ledger = ledger;
			this.nested = nested;
			this.events = events;
			this.transactionTemplate = new TransactionTemplate(transactionManager);
			this.savepoint = new TransactionTemplate(transactionManager);
			this.savepoint.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
			// no annotation, no template: it joins the transaction bound to the thread
			this.jdbcClient = JdbcClient.create(dataSource);
		}

		@PostMapping(path = "/ledger", produces = MediaType.APPLICATION_JSON_VALUE)
		@Idempotent("ledger")
		ResponseEntity<String> post(@RequestHeader("Idempotency-Key") String key, @RequestBody String body,
				@RequestHeader(name = "X-Mode", defaultValue = "") String mode,
				@RequestHeader(name = "X-Write", defaultValue = "service") String write,
				@RequestHeader(name = "X-Audit", defaultValue = "false") boolean audit,
				@RequestHeader(name = "X-Nested", defaultValue = "") String nestedKey,
				@RequestHeader(name = "X-Nested-Millis", defaultValue = "0") long nestedMillis,
				@RequestHeader(name = "X-Nested-Calls", defaultValue = "1") int nestedCalls,
				@RequestHeader(name = "X-Nested-Savepoint", defaultValue = "") String nestedSavepoint,
				@RequestHeader(name = "X-After-Commit", defaultValue = "") String afterCommitKey)
				throws InterruptedException {
			this.runs.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
			this.virtual.put(key, VirtualThreads.current());
			long entries = switch (write) {
				case "service" -> this.ledger.record(key, body);
				case "template" -> this.transactionTemplate.execute((status) -> this.ledger.record(key, body));
				case "client" -> recordWithClient(key, body);
				default -> throw new IllegalArgumentException("Unknown X-Write " + write);
			};
			CountDownLatch entered = this.entered.get(key);
			if (entered != null) {
				entered.countDown();
			}
			CountDownLatch gate = this.gates.get(key);
			if (gate != null && !gate.await(60, TimeUnit.SECONDS)) {
				throw new IllegalStateException("The test never released key " + key);
			}
			if (audit) {
				this.ledger.audit(key);
			}
			List<String> nestedResults = new ArrayList<>();
			if (!nestedKey.isEmpty()) {
				for (int i = 0; i < nestedCalls; i++) {
					if (i == 0 && !nestedSavepoint.isEmpty()) {
						nestedResults
							.add(applyInSavepoint(nestedKey, nestedMillis, nestedSavepoint.equals("rollback")));
					}
					else {
						nestedResults.add(this.nested.apply(nestedKey, nestedMillis));
					}
				}
			}
			if (!afterCommitKey.isEmpty()) {
				this.events.publishEvent(new LedgerEvent(afterCommitKey));
			}
			Runnable action = this.beforeCommit.remove(key);
			if (action != null) {
				TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

					@Override
					public void beforeCommit(boolean readOnly) {
						action.run();
					}

				});
			}
			switch (mode) {
				case "slow" -> slow();
				case "fail" -> throw new IllegalStateException("handler failed after its write");
				case "unavailable" -> {
					return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body("{\"error\":\"busy\"}");
				}
				case "break-commit" -> this.ledger.breakTheCommit();
				case "reject" -> this.ledger.recordAndReject(key, body);
				case "swallow" -> {
					try {
						this.ledger.recordAndReject(key, body);
					}
					catch (Rejected ex) {
						// answered as a success: but the transaction is rollback-only
					}
				}
				case "busy" -> this.ledger.keepBusy(BUSY_MILLIS);
				case "break-statement" -> this.ledger.breakAStatement();
				case "break-statement-caught" -> {
					try {
						this.ledger.breakAStatement();
					}
					catch (DataIntegrityViolationException ex) {
						return ResponseEntity.status(HttpStatus.CONFLICT).body("{\"error\":\"duplicate\"}");
					}
				}
				default -> {
				}
			}
			String nestedJson = nestedResults.isEmpty() ? ""
					: nestedResults.stream()
						.map((result) -> "\"" + result + "\"")
						.collect(Collectors.joining(",", ",\"nested\":[", "]"));
			return ResponseEntity.status(HttpStatus.CREATED)
				.body("{\"key\":\"" + key + "\",\"body\":\"" + body + "\",\"entries\":" + entries + nestedJson + "}");
		}

		@PostMapping(path = "/ledger/quick", produces = MediaType.APPLICATION_JSON_VALUE)
		@Idempotent("quick")
		ResponseEntity<String> postQuick(@RequestHeader("Idempotency-Key") String key, @RequestBody String body,
				@RequestHeader(name = "X-Mode", defaultValue = "") String mode) throws InterruptedException {
			return post(key, body, mode, "service", false, "", 0, 1, "", "");
		}

		// the nested method in a savepoint of the request's transaction (NESTED), which
		// is
		// rolled back after it returned, or released into the request's transaction
		private String applyInSavepoint(String key, long millis, boolean rollBack) {
			return Objects.requireNonNull(this.savepoint.execute((status) -> {
				try {
					return this.nested.apply(key, millis);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new IllegalStateException(ex);
				}
				finally {
					if (rollBack) {
						status.setRollbackOnly();
					}
				}
			}));
		}

		private long recordWithClient(String key, String body) {
			this.jdbcClient.sql("INSERT INTO ledger_entry (idem_key, body) VALUES (?, ?)").params(key, body).update();
			return this.jdbcClient.sql("SELECT count(*) FROM ledger_entry").query(Long.class).single();
		}

		@ExceptionHandler(Rejected.class)
		ResponseEntity<String> rejected(Rejected ex) {
			return ResponseEntity.unprocessableContent().body("{\"error\":\"rejected\"}");
		}

		// the request's transaction is open (in the transactional mode): at most as many
		// handlers are here at once as the pool has connections
		private void slow() throws InterruptedException {
			this.mostSlow.accumulateAndGet(this.slow.incrementAndGet(), Math::max);
			try {
				Thread.sleep(200);
			}
			finally {
				this.slow.decrementAndGet();
			}
		}

		// whether the handler's last run for a key was on a virtual thread; null if
		// it never ran
		@Nullable Boolean ranOnVirtualThread(String key) {
			return this.virtual.get(key);
		}

		// the most handlers that were in their slow part at once
		int mostSlowAtOnce() {
			return this.mostSlow.get();
		}

		// how many times the handler ran for a key, whatever became of its work
		int runs(String key) {
			AtomicInteger runs = this.runs.get(key);
			return (runs != null) ? runs.get() : 0;
		}

		// the next request with this key waits in the handler, after its write
		void hold(String key) {
			this.entered.put(key, new CountDownLatch(1));
			this.gates.put(key, new CountDownLatch(1));
		}

		boolean awaitEntered(String key) throws InterruptedException {
			return this.entered.get(key).await(30, TimeUnit.SECONDS);
		}

		void release(String key) {
			this.gates.get(key).countDown();
		}

		// the next request with this key runs the action just
		// before its commit, after its response was stored
		void beforeCommit(String key, Runnable action) {
			this.beforeCommit.put(key, action);
		}

	}

	/**
	 * A business rejection, answered 422 by the controller's exception handler.
	 */
	static class Rejected extends RuntimeException {

		Rejected(String message) {
			super(message);
		}

	}

	/**
	 * Published by a handler for its after-commit listener.
	 *
	 * @param key the key of the method the listener calls
	 */
	record LedgerEvent(String key) {
	}

	/**
	 * An idempotent method that handlers call inside their request's transaction, and
	 * that an {@code AFTER_COMMIT} listener calls in a transaction of its own. A run is a
	 * row.
	 */
	@Service
	static class NestedWork {

		private final JdbcTemplate jdbc;

		private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		NestedWork(JdbcTemplate jdbc) {
			this.jdbc = jdbc;
		}

		@Idempotent(value = "nested", key = "#key", fingerprint = "#key")
		String apply(String key, long millis) throws InterruptedException {
			this.runs.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
			this.jdbc.update("INSERT INTO nested_entry (idem_key) VALUES (?)", key);
			Thread.sleep(millis);
			return "applied " + key;
		}

		int runs(String key) {
			AtomicInteger runs = this.runs.get(key);
			return (runs != null) ? runs.get() : 0;
		}

	}

	/**
	 * Calls the idempotent method once the request's transaction committed, in a
	 * transaction of its own (an {@code AFTER_COMMIT} listener that writes needs one).
	 */
	@Component
	static class AfterCommitWork {

		private final NestedWork nested;

		private final TransactionTemplate ownTransaction;

		AfterCommitWork(NestedWork nested, PlatformTransactionManager transactionManager) {
			this.nested = nested;
			this.ownTransaction = new TransactionTemplate(transactionManager);
			this.ownTransaction.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
		}

		@TransactionalEventListener(phase = TransactionPhase.AFTER_COMMIT)
		void on(LedgerEvent event) {
			this.ownTransaction.executeWithoutResult((status) -> {
				try {
					this.nested.apply(event.key(), 0);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new IllegalStateException(ex);
				}
			});
		}

	}

}
