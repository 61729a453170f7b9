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

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.IdempotencyStatus;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStoreException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Behaviour of {@link JdbcIdempotencyStore} that is specific to PostgreSQL: statement
 * budget, database clock, table naming, transactions and failures.
 *
 * @author Idempotency contributors
 */
class JdbcIdempotencyStorePostgresIT {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration TTL = Duration.ofMinutes(10);

	private static PostgresTestDatabase database;

	private static JdbcTemplate jdbc;

	@BeforeAll
	static void createSchema() {
		database = PostgresTestDatabase.create("idem_jdbc_store");
		new JdbcIdempotencySchemaInitializer(database.dataSource()).initialize();
		jdbc = new JdbcTemplate(database.dataSource());
	}

	@AfterAll
	static void dropSchema() {
		database.close();
	}

	@Test
	void everyOperationIsOneStatementOnOneConnectionExceptATakeoverAndACompletionRetried() throws InterruptedException {
		CountingDataSource counting = new CountingDataSource(database.dataSource());
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(counting.dataSource());
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		assertThat(store.acquire(key, fingerprint("a"), token, LEASE, TTL)).isInstanceOf(AcquireResult.Acquired.class);
		assertStatements(counting, 1);
		assertThat(store.acquire(key, fingerprint("a"), OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.InProgress.class);
		assertStatements(counting, 1);
		assertThat(store.acquire(key, fingerprint("b"), OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Mismatch.class);
		assertStatements(counting, 1);
		assertThat(store.extend(key, token, LEASE)).isTrue();
		assertStatements(counting, 1);
		assertThat(store.complete(key, token, response("done"), TTL)).isTrue();
		assertStatements(counting, 1);
		// a completion retried after a lost reply: the update finds nothing to change,
		// a second statement finds the row completed with the same token
		assertThat(store.complete(key, token, response("done"), TTL)).isTrue();
		assertStatements(counting, 2);
		assertThat(store.acquire(key, fingerprint("a"), OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Replay.class);
		assertStatements(counting, 1);
		assertThat(store.find(key)).isPresent();
		assertStatements(counting, 1);
		assertThat(store.evict(key)).isTrue();
		assertStatements(counting, 1);
		OwnerToken released = OwnerToken.generate();
		store.acquire(key, fingerprint("a"), released, Duration.ofMillis(50), TTL);
		counting.takeExecutions();
		counting.takeConnections();
		assertThat(store.release(key, released)).isTrue();
		assertStatements(counting, 1);
		store.acquire(key, fingerprint("a"), OwnerToken.generate(), Duration.ofMillis(50), TTL);
		Thread.sleep(200);
		counting.takeExecutions();
		counting.takeConnections();
		assertThat(store.acquire(key, fingerprint("a"), OwnerToken.generate(), Duration.ofMillis(50), TTL))
			.isInstanceOf(AcquireResult.InProgress.class);
		// the claim finds the lease lapsed for the first time,
		// then schedules the takeover
		assertThat(counting.takeExecutions()).isEqualTo(2);
		assertThat(counting.takeConnections()).isEqualTo(1);
		Thread.sleep(200);
		assertThat(store.acquire(key, fingerprint("a"), OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Acquired.class);
		// the claim finds the takeover due, then the conditional update takes it over
		assertThat(counting.takeExecutions()).isEqualTo(2);
		assertThat(counting.takeConnections()).isEqualTo(1);
	}

	@Test
	void lapsedLeaseIsTakenOverOnlyALeaseAfterARequestFirstFoundItLapsed() throws InterruptedException {
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(database.dataSource());
		IdempotencyKey key = newKey();
		OwnerToken owner = OwnerToken.generate();
		store.acquire(key, fingerprint("a"), owner, Duration.ofMillis(100), TTL);
		Thread.sleep(300);
		// the first request to find it lapsed
		// schedules the takeover, one of its leases on
		AcquireResult first = store.acquire(key, fingerprint("a"), OwnerToken.generate(), Duration.ofSeconds(3), TTL);
		assertThat(first).isInstanceOf(AcquireResult.InProgress.class);
		assertThat(((AcquireResult.InProgress) first).retryAfter()).isEqualTo(Duration.ofSeconds(3));
		AcquireResult second = store.acquire(key, fingerprint("a"), OwnerToken.generate(), LEASE, TTL);
		assertThat(second).isInstanceOf(AcquireResult.InProgress.class);
		assertThat(((AcquireResult.InProgress) second).retryAfter()).isPositive()
			.isLessThanOrEqualTo(Duration.ofSeconds(3));
		assertThat(store.find(key)).get().extracting(IdempotencyRecord::owner).isEqualTo(owner);
		Thread.sleep(3200);
		OwnerToken next = OwnerToken.generate();
		assertThat(store.acquire(key, fingerprint("a"), next, LEASE, TTL)).isEqualTo(new AcquireResult.Acquired(next));
		assertThat(store.complete(key, owner, response("late"), TTL)).isFalse();
		assertThat(store.find(key)).get().extracting(IdempotencyRecord::owner).isEqualTo(next);
	}

	@Test
	void ownersRenewalCancelsAScheduledTakeover() throws InterruptedException {
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(database.dataSource());
		IdempotencyKey key = newKey();
		OwnerToken owner = OwnerToken.generate();
		store.acquire(key, fingerprint("a"), owner, Duration.ofMillis(100), TTL);
		Thread.sleep(300);
		assertThat(store.acquire(key, fingerprint("a"), OwnerToken.generate(), Duration.ofMillis(100), TTL))
			.isInstanceOf(AcquireResult.InProgress.class);
		assertThat(store.extend(key, owner, Duration.ofMillis(300))).isTrue();
		// past the cancelled takeover time, but within the renewed lease
		Thread.sleep(150);
		assertThat(store.acquire(key, fingerprint("a"), OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.InProgress.class);
		// the renewed lease lapses in turn: a new takeover is scheduled, not done at once
		Thread.sleep(300);
		assertThat(store.acquire(key, fingerprint("a"), OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.InProgress.class);
		assertThat(store.complete(key, owner, response("slow"), TTL)).isTrue();
		AcquireResult replay = store.acquire(key, fingerprint("a"), OwnerToken.generate(), LEASE, TTL);
		assertThat(replay).isInstanceOf(AcquireResult.Replay.class);
		assertThat(((AcquireResult.Replay) replay).response().bodyBytes())
			.isEqualTo("slow".getBytes(StandardCharsets.UTF_8));
	}

	@Test
	void racingRequestsThatFindALapsedLeaseScheduleOneTakeoverAndOneLaterWinsIt() throws Exception {
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(database.dataSource());
		int threads = 32;
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		try {
			for (int round = 0; round < 2; round++) {
				IdempotencyKey key = newKey();
				store.acquire(key, fingerprint("a"), OwnerToken.generate(), Duration.ofMillis(100), TTL);
				Thread.sleep(300);
				// a takeover time far enough away that every racer finds it scheduled,
				// also
				// on a busy machine where the last of 32 threads may start seconds after
				// the
				// first (3 s was not enough there)
				Duration scheduledIn = Duration.ofSeconds(10);
				List<AcquireResult> firstSightings = race(executor, threads,
						() -> store.acquire(key, fingerprint("a"), OwnerToken.generate(), scheduledIn, TTL));
				assertThat(firstSightings).as("first sightings of round %d", round)
					.allMatch(AcquireResult.InProgress.class::isInstance);
				Thread.sleep(scheduledIn.toMillis() + 200);
				List<AcquireResult> takers = race(executor, threads,
						() -> store.acquire(key, fingerprint("a"), OwnerToken.generate(), LEASE, TTL));
				assertThat(takers).as("takers of round %d", round)
					.filteredOn(AcquireResult.Acquired.class::isInstance)
					.hasSize(1);
				assertThat(takers).filteredOn((result) -> !(result instanceof AcquireResult.Acquired))
					.allMatch(AcquireResult.InProgress.class::isInstance);
			}
		}
		finally {
			executor.shutdownNow();
		}
	}

	@Test
	void lapsedLeaseIsAnsweredWithTheConfirmationAsAKnownWait() throws InterruptedException {
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(database.dataSource());
		IdempotencyKey key = newKey();
		store.acquire(key, fingerprint("a"), OwnerToken.generate(), Duration.ofMillis(100), TTL);
		Thread.sleep(300);
		// the first to find the lease lapsed schedules the takeover a lease later
		assertThat(store.acquire(key, fingerprint("a"), OwnerToken.generate(), Duration.ofSeconds(4), TTL))
			.isEqualTo(new AcquireResult.InProgress(Duration.ofSeconds(4), true));
		// the next ones learn what is left of that wait
		assertThat(store.acquire(key, fingerprint("a"), OwnerToken.generate(), Duration.ofSeconds(4), TTL))
			.isInstanceOfSatisfying(AcquireResult.InProgress.class, (inProgress) -> {
				assertThat(inProgress.ownerGone()).isTrue();
				assertThat(inProgress.retryAfter()).isBetween(Duration.ZERO, Duration.ofSeconds(4));
			});
		// a live owner is not known to be gone
		IdempotencyKey live = newKey();
		store.acquire(live, fingerprint("a"), OwnerToken.generate(), LEASE, TTL);
		assertThat(store.acquire(live, fingerprint("a"), OwnerToken.generate(), LEASE, TTL)).isInstanceOfSatisfying(
				AcquireResult.InProgress.class, (inProgress) -> assertThat(inProgress.ownerGone()).isFalse());
	}

	@Test
	void withoutConfirmationALapsedLeaseIsTakenOverAtOnce() throws InterruptedException {
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(database.dataSource());
		store.setConfirmTakeover(false);
		assertThat(store.isConfirmTakeover()).isFalse();
		IdempotencyKey key = newKey();
		OwnerToken owner = OwnerToken.generate();
		store.acquire(key, fingerprint("a"), owner, Duration.ofMillis(100), TTL);
		Thread.sleep(300);
		OwnerToken next = OwnerToken.generate();
		assertThat(store.acquire(key, fingerprint("a"), next, LEASE, TTL)).isEqualTo(new AcquireResult.Acquired(next));
		assertThat(store.extend(key, owner, LEASE)).isFalse();
	}

	private static List<AcquireResult> race(ExecutorService executor, int threads, Callable<AcquireResult> acquire)
			throws Exception {
		CountDownLatch start = new CountDownLatch(1);
		List<Future<AcquireResult>> futures = new ArrayList<>();
		for (int t = 0; t < threads; t++) {
			futures.add(executor.submit(() -> {
				start.await();
				return acquire.call();
			}));
		}
		start.countDown();
		List<AcquireResult> results = new ArrayList<>();
		for (Future<AcquireResult> future : futures) {
			results.add(future.get(1, TimeUnit.MINUTES));
		}
		return results;
	}

	private static void assertStatements(CountingDataSource counting, int expected) {
		assertThat(counting.takeExecutions()).as("statements").isEqualTo(expected);
		assertThat(counting.takeConnections()).as("connections").isEqualTo(1);
	}

	@Test
	void instantsAreComputedByTheDatabaseFromDurations() {
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(database.dataSource());
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		store.acquire(key, fingerprint("a"), token, Duration.ofMillis(1234), Duration.ofMillis(56789));
		Map<String, Object> row = jdbc.queryForMap("""
				SELECT lease_expires_at - created_at = INTERVAL '1.234 seconds' AS lease_exact,
					expires_at - created_at = INTERVAL '56.789 seconds' AS ttl_exact
				FROM idempotency_record WHERE id = ?""", (Object) key.digest());
		assertThat(row).containsEntry("lease_exact", true).containsEntry("ttl_exact", true);
		store.extend(key, token, Duration.ofSeconds(100));
		row = jdbc.queryForMap("""
				SELECT lease_expires_at - now() BETWEEN INTERVAL '95 seconds' AND INTERVAL '100 seconds' AS lease_ok,
					expires_at - lease_expires_at = INTERVAL '0' AS expiry_follows_lease
				FROM idempotency_record WHERE id = ?""", (Object) key.digest());
		assertThat(row).containsEntry("lease_ok", true).containsEntry("expiry_follows_lease", true);
		store.complete(key, token, response("done"), Duration.ofHours(2));
		row = jdbc.queryForMap("""
				SELECT expires_at - now() BETWEEN INTERVAL '1 hour 59 minutes' AND INTERVAL '2 hours' AS ttl_ok,
					lease_expires_at IS NULL AS no_lease, status
				FROM idempotency_record WHERE id = ?""", (Object) key.digest());
		assertThat(row).containsEntry("ttl_ok", true).containsEntry("no_lease", true).containsEntry("status", "C");
	}

	@Test
	void theDatabaseClockRulesEvenWhenItDisagreesWithTheApplication() {
		// a now() that runs one day ahead of the real clock, found before pg_catalog's
		String schema = database.schema();
		jdbc.execute("CREATE FUNCTION " + schema + ".now() RETURNS timestamptz LANGUAGE sql STABLE "
				+ "AS 'SELECT pg_catalog.now() + INTERVAL ''1 day'''");
		try {
			PGSimpleDataSource skewed = database.unpooledDataSource();
			skewed.setCurrentSchema(schema + ",pg_catalog");
			JdbcIdempotencyStore store = new JdbcIdempotencyStore(skewed);
			IdempotencyKey key = newKey();
			OwnerToken token = OwnerToken.generate();
			store.acquire(key, fingerprint("a"), token, LEASE, TTL);
			Instant tomorrow = Instant.now().plus(Duration.ofDays(1));
			IdempotencyRecord record = store.find(key).orElseThrow();
			assertThat(record.createdAt()).isBetween(tomorrow.minusSeconds(60), tomorrow.plusSeconds(60));
			assertThat(store.complete(key, token, response("done"), TTL)).isTrue();
			AcquireResult replay = store.acquire(key, fingerprint("a"), OwnerToken.generate(), LEASE, TTL);
			assertThat(((AcquireResult.Replay) replay).expiresAt()).isAfter(tomorrow.plus(TTL).minusSeconds(60));
		}
		finally {
			jdbc.execute("DROP FUNCTION " + schema + ".now()");
		}
	}

	@Test
	void racingTakeoversOfAnExpiredRecordHaveOneWinner() throws Exception {
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(database.dataSource());
		int threads = 32;
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		try {
			for (int round = 0; round < 5; round++) {
				IdempotencyKey key = newKey();
				OwnerToken first = OwnerToken.generate();
				store.acquire(key, fingerprint("old"), first, Duration.ofMillis(100), Duration.ofMillis(100));
				store.complete(key, first, response("old"), Duration.ofMillis(100));
				Thread.sleep(300);
				CountDownLatch start = new CountDownLatch(1);
				List<Future<AcquireResult>> futures = new ArrayList<>();
				for (int t = 0; t < threads; t++) {
					futures.add(executor.submit(() -> {
						start.await();
						return store.acquire(key, fingerprint("new"), OwnerToken.generate(), LEASE, TTL);
					}));
				}
				start.countDown();
				int acquired = 0;
				for (Future<AcquireResult> future : futures) {
					AcquireResult result = future.get(1, TimeUnit.MINUTES);
					if (result instanceof AcquireResult.Acquired) {
						acquired++;
					}
					else {
						assertThat(result).isInstanceOf(AcquireResult.InProgress.class);
					}
				}
				assertThat(acquired).as("winners of round %d", round).isEqualTo(1);
			}
		}
		finally {
			executor.shutdownNow();
		}
	}

	@Test
	void customTableNamesKeepSeparateTablesAndHistories() {
		String otherSchema = database.schema() + "_other";
		try {
			JdbcIdempotencySchemaInitializer local = new JdbcIdempotencySchemaInitializer(database.dataSource());
			local.setTableName("Payment_Keys");
			local.initialize();
			JdbcIdempotencySchemaInitializer qualified = new JdbcIdempotencySchemaInitializer(database.dataSource());
			qualified.setTableName(otherSchema + ".payment_keys");
			qualified.initialize();
			assertThat(tables(database.schema())).contains("idempotency_record", "idempotency_schema_history",
					"payment_keys", "payment_keys_schema_history");
			assertThat(tables(otherSchema)).containsExactlyInAnyOrder("payment_keys", "payment_keys_schema_history");

			JdbcIdempotencyStore defaultStore = new JdbcIdempotencyStore(database.dataSource());
			JdbcIdempotencyStore localStore = new JdbcIdempotencyStore(database.dataSource());
			localStore.setTableName("Payment_Keys");
			assertThat(localStore.getTableName()).isEqualTo("payment_keys");
			JdbcIdempotencyStore qualifiedStore = new JdbcIdempotencyStore(database.dataSource());
			qualifiedStore.setTableName(otherSchema + ".payment_keys");
			IdempotencyKey key = newKey();
			for (JdbcIdempotencyStore store : List.of(defaultStore, localStore, qualifiedStore)) {
				OwnerToken token = OwnerToken.generate();
				assertThat(store.acquire(key, fingerprint("a"), token, LEASE, TTL))
					.isEqualTo(new AcquireResult.Acquired(token));
				assertThat(store.complete(key, token, response(store.getTableName()), TTL)).isTrue();
			}
			assertThat(rowCount(database.schema() + ".payment_keys")).isOne();
			assertThat(rowCount(otherSchema + ".payment_keys")).isOne();
			AcquireResult replay = qualifiedStore.acquire(key, fingerprint("a"), OwnerToken.generate(), LEASE, TTL);
			assertThat(((AcquireResult.Replay) replay).response().bodyBytes())
				.isEqualTo((otherSchema + ".payment_keys").getBytes(StandardCharsets.UTF_8));
		}
		finally {
			jdbc.execute("DROP SCHEMA IF EXISTS " + otherSchema + " CASCADE");
		}
	}

	@Test
	void unsafeTableNamesAreRejected() {
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(database.dataSource());
		for (String name : List.of("", "records; DROP TABLE x", "\"quoted\"", "a.b.c", "1records", "records-x",
				".records", "records.", "x".repeat(64))) {
			assertThatIllegalArgumentException().as(name).isThrownBy(() -> store.setTableName(name));
			assertThatIllegalArgumentException().as(name)
				.isThrownBy(() -> new JdbcIdempotencySchemaInitializer(database.dataSource()).setTableName(name));
			assertThatIllegalArgumentException().as(name)
				.isThrownBy(() -> new JdbcIdempotencyCleaner(database.dataSource()).setTableName(name));
		}
		store.setTableName("x".repeat(63));
		store.setTableName("s_1." + "x".repeat(63));
		assertThat(store.getTableName()).isEqualTo("s_1." + "x".repeat(63));
	}

	@Test
	void unreachableDatabaseFailsWithStoreException() throws IOException {
		PGSimpleDataSource closed = new PGSimpleDataSource();
		try (ServerSocket socket = new ServerSocket(0)) {
			closed.setServerNames(new String[] { "127.0.0.1" });
			closed.setPortNumbers(new int[] { socket.getLocalPort() });
		}
		closed.setDatabaseName("test");
		closed.setConnectTimeout(1);
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(closed);
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		assertThatThrownBy(() -> store.acquire(key, fingerprint("a"), token, LEASE, TTL))
			.isInstanceOf(IdempotencyStoreException.class)
			.hasCauseInstanceOf(SQLException.class);
		assertThatThrownBy(() -> store.complete(key, token, response("x"), TTL))
			.isInstanceOf(IdempotencyStoreException.class);
		assertThatThrownBy(() -> store.release(key, token)).isInstanceOf(IdempotencyStoreException.class);
		assertThatThrownBy(() -> store.extend(key, token, LEASE)).isInstanceOf(IdempotencyStoreException.class);
		assertThatThrownBy(() -> store.find(key)).isInstanceOf(IdempotencyStoreException.class);
		assertThatThrownBy(() -> store.evict(key)).isInstanceOf(IdempotencyStoreException.class);
		assertThatThrownBy(() -> new JdbcIdempotencyCleaner(closed).purgeExpired())
			.isInstanceOf(IdempotencyStoreException.class);
	}

	@Test
	void missingTableFailsWithStoreException() {
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(database.dataSource());
		store.setTableName("no_such_table");
		assertThatThrownBy(() -> store.acquire(newKey(), fingerprint("a"), OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(IdempotencyStoreException.class)
			.hasMessageContaining("no_such_table");
	}

	@Test
	void unreadableResponseIsAnsweredAsUnreadableUntilTheRecordExpires() {
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(database.dataSource());
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		store.acquire(key, fingerprint("a"), token, LEASE, TTL);
		store.complete(key, token, response("fine"), TTL);
		jdbc.update("UPDATE idempotency_record SET response = '\\x00ff00ff'::bytea WHERE id = ?",
				(Object) key.digest());
		// the request did complete: it is neither run again nor refused as an outage
		assertThat(store.acquire(key, fingerprint("a"), OwnerToken.generate(), LEASE, TTL)).isInstanceOfSatisfying(
				AcquireResult.Replay.class,
				(replay) -> assertThat(replay.response()).isEqualTo(StoredResponse.unreadable()));
		assertThat(store.find(key)).hasValueSatisfying((record) -> {
			assertThat(record.status()).isEqualTo(IdempotencyStatus.COMPLETED);
			assertThat(record.response()).isEqualTo(StoredResponse.unreadable());
		});
		// a mismatching request is still answered: it needs no response
		assertThat(store.acquire(key, fingerprint("b"), OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Mismatch.class);
	}

	@Test
	void workIsCommittedWhenThePoolDisablesAutoCommit() {
		DataSource manualCommit = new DelegatingDataSource(database.dataSource()) {

			@Override
			public Connection getConnection() throws SQLException {
				Connection connection = super.getConnection();
				connection.setAutoCommit(false);
				return connection;
			}

		};
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(manualCommit);
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		store.acquire(key, fingerprint("a"), token, LEASE, TTL);
		assertThat(statusSeenByAnotherConnection(key)).isEqualTo("P");
		store.complete(key, token, response("done"), TTL);
		assertThat(statusSeenByAnotherConnection(key)).isEqualTo("C");
	}

	@Test
	void claimsNeitherJoinNorWaitForTheApplicationsTransaction() {
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(database.dataSource());
		TransactionTemplate transaction = new TransactionTemplate(
				new DataSourceTransactionManager(database.dataSource()));
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		transaction.executeWithoutResult((status) -> {
			new JdbcTemplate(database.dataSource()).execute("SELECT 1");
			store.acquire(key, fingerprint("a"), token, LEASE, TTL);
			assertThat(statusSeenByAnotherConnection(key)).isEqualTo("P");
			status.setRollbackOnly();
		});
		assertThat(store.find(key)).get().extracting(IdempotencyRecord::owner).isEqualTo(token);
	}

	@Test
	void everyOperationCommitsOnAConnectionOfItsOwnInsideARolledBackTransaction() {
		// the store and the transaction manager share one data source, as in an
		// application where Spring's JDBC support would join the transaction
		CountingDataSource counting = new CountingDataSource(database.dataSource());
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(counting.dataSource());
		TransactionTemplate transaction = new TransactionTemplate(
				new DataSourceTransactionManager(counting.dataSource()));
		IdempotencyKey completed = newKey();
		IdempotencyKey extended = newKey();
		IdempotencyKey released = newKey();
		IdempotencyKey unclaimed = newKey();
		IdempotencyKey evicted = newKey();
		OwnerToken token = OwnerToken.generate();
		store.acquire(evicted, fingerprint("a"), token, LEASE, TTL);
		transaction.executeWithoutResult((status) -> {
			new JdbcTemplate(counting.dataSource()).execute("SELECT 1");
			int synchronizations = TransactionSynchronizationManager.getSynchronizations().size();
			List<Runnable> operations = List.of(() -> store.acquire(completed, fingerprint("a"), token, LEASE, TTL),
					() -> store.complete(completed, token, response("done"), TTL),
					() -> store.acquire(extended, fingerprint("a"), token, LEASE, TTL),
					() -> store.extend(extended, token, Duration.ofHours(1)),
					() -> store.acquire(released, fingerprint("a"), token, LEASE, TTL),
					() -> store.release(released, token),
					() -> store.completeUnclaimed(unclaimed, fingerprint("a"), token, response("unclaimed"), TTL),
					() -> store.evict(evicted), () -> store.find(completed));
			for (Runnable operation : operations) {
				operation.run();
				// only the transaction's own connection is still taken
				assertThat(counting.openConnections()).isOne();
				assertThat(TransactionSynchronizationManager.getSynchronizations()).hasSize(synchronizations);
			}
			assertThat(statusSeenByAnotherConnection(completed)).isEqualTo("C");
			status.setRollbackOnly();
		});
		assertThat(counting.openConnections()).isZero();
		assertThat(store.find(completed)).get().extracting(IdempotencyRecord::response).isEqualTo(response("done"));
		assertThat(store.find(extended)).get()
			.satisfies((record) -> assertThat(record.leaseExpiresAt()).isAfter(Instant.now().plus(LEASE)));
		assertThat(store.find(released)).isEmpty();
		assertThat(store.find(unclaimed)).get()
			.extracting(IdempotencyRecord::response)
			.isEqualTo(response("unclaimed"));
		assertThat(store.find(evicted)).isEmpty();
	}

	private static String statusSeenByAnotherConnection(IdempotencyKey key) {
		return new JdbcTemplate(database.unpooledDataSource())
			.queryForObject("SELECT status FROM idempotency_record WHERE id = ?", String.class, (Object) key.digest());
	}

	private static List<String> tables(String schema) {
		return jdbc.queryForList("SELECT table_name FROM information_schema.tables WHERE table_schema = ?",
				String.class, schema);
	}

	private static Integer rowCount(String table) {
		return jdbc.queryForObject("SELECT count(*) FROM " + table, Integer.class);
	}

	private static IdempotencyKey newKey() {
		return new IdempotencyKey("tenant-" + UUID.randomUUID(), UUID.randomUUID().toString());
	}

	private static RequestFingerprint fingerprint(String text) {
		byte[] bytes = new byte[RequestFingerprint.LENGTH];
		byte[] source = text.getBytes(StandardCharsets.UTF_8);
		System.arraycopy(source, 0, bytes, 0, source.length);
		return RequestFingerprint.of(bytes);
	}

	private static StoredResponse response(String body) {
		return new StoredResponse(200, List.of(new HttpHeader("Content-Type", "text/plain")),
				body.getBytes(StandardCharsets.UTF_8));
	}

}
