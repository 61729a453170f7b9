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
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link JdbcIdempotencyCleaner} on a real PostgreSQL server.
 *
 * @author Idempotency contributors
 */
class JdbcIdempotencyCleanerIT {

	// rows are written directly: a row per state the cleaner must tell apart, without
	// purge_after as an older release wrote them; insert(...) then sets purge_after to
	// the expiry, as the current store does (at or past it)
	private static final String INSERT_ROWS = """
			INSERT INTO idempotency_record (id, scope, idem_key, fingerprint, status, owner_token, created_at,
				lease_expires_at, expires_at, response)
			SELECT sha256(convert_to(? || n, 'UTF8')), 'tenant', ? || n, sha256('fp'), ?, gen_random_uuid(),
				now() - INTERVAL '1 day', now() + ?::interval, now() + ?::interval,
				CASE WHEN ? = 'C' THEN '\\x01'::bytea END
			FROM generate_series(1, ?) AS n
			""";

	private PostgresTestDatabase database;

	private JdbcTemplate jdbc;

	@BeforeEach
	void createSchema() {
		this.database = PostgresTestDatabase.create("idem_jdbc_cleaner");
		new JdbcIdempotencySchemaInitializer(this.database.dataSource()).initialize();
		this.jdbc = new JdbcTemplate(this.database.dataSource());
	}

	@AfterEach
	void dropSchema() {
		this.database.close();
	}

	@Test
	void concurrentCleanersDeleteEveryExpiredRowExactlyOnceAndNothingElse() throws Exception {
		insert("expired-completed-", "C", null, "-1 minute", 3000);
		insert("expired-abandoned-", "P", "-2 minutes", "-1 minute", 2000);
		insert("live-processing-", "P", "1 minute", "1 hour", 300);
		// past its expiry yet still leased: its owner is running, so it must stay
		insert("leased-past-expiry-", "P", "1 minute", "-1 minute", 50);
		insert("live-completed-", "C", null, "1 hour", 300);
		ExecutorService executor = Executors.newFixedThreadPool(2);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<Integer>> cleaners = new ArrayList<>();
			for (int i = 0; i < 2; i++) {
				JdbcIdempotencyCleaner cleaner = new JdbcIdempotencyCleaner(this.database.dataSource());
				cleaner.setBatchSize(37);
				cleaners.add(executor.submit(() -> {
					start.await();
					return cleaner.purgeExpired();
				}));
			}
			start.countDown();
			int deleted = 0;
			for (Future<Integer> cleaner : cleaners) {
				deleted += cleaner.get(2, TimeUnit.MINUTES);
			}
			assertThat(deleted).isEqualTo(5000);
		}
		finally {
			executor.shutdownNow();
		}
		assertThat(count("expired-%")).isZero();
		assertThat(count("live-processing-%")).isEqualTo(300);
		assertThat(count("leased-past-expiry-%")).isEqualTo(50);
		assertThat(count("live-completed-%")).isEqualTo(300);
		assertThat(new JdbcIdempotencyCleaner(this.database.dataSource()).purgeExpired()).isZero();
	}

	@Test
	void deletesWhatTheStoreLetExpire() throws InterruptedException {
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(this.database.dataSource());
		IdempotencyKey completed = newKey();
		OwnerToken token = OwnerToken.generate();
		store.acquire(completed, fingerprint(), token, Duration.ofSeconds(30), Duration.ofMinutes(10));
		store.complete(completed, token, response(), Duration.ofMillis(100));
		IdempotencyKey abandoned = newKey();
		store.acquire(abandoned, fingerprint(), OwnerToken.generate(), Duration.ofMillis(100), Duration.ofMillis(100));
		IdempotencyKey live = newKey();
		store.acquire(live, fingerprint(), OwnerToken.generate(), Duration.ofSeconds(30), Duration.ofMinutes(10));
		Thread.sleep(300);
		JdbcIdempotencyCleaner cleaner = new JdbcIdempotencyCleaner(this.database.dataSource());
		assertThat(cleaner.purgeExpired()).isEqualTo(2);
		assertThat(this.jdbc.queryForObject("SELECT count(*) FROM idempotency_record", Integer.class)).isOne();
		assertThat(store.find(live)).isPresent();
		OwnerToken next = OwnerToken.generate();
		assertThat(store.acquire(completed, fingerprint(), next, Duration.ofSeconds(30), Duration.ofMinutes(10)))
			.isEqualTo(new AcquireResult.Acquired(next));
	}

	@Test
	void givesRowsWrittenWithoutPurgeAfterOneFromTheirExpiryAndDeletesThoseThatExpired() {
		insertAsOlderRelease("old-expired-", "C", null, "-1 minute", 25);
		insertAsOlderRelease("old-abandoned-", "P", "-2 minutes", "-1 minute", 5);
		insertAsOlderRelease("old-live-", "C", null, "1 hour", 20);
		insertAsOlderRelease("old-leased-past-expiry-", "P", "1 minute", "-1 minute", 3);
		JdbcIdempotencyCleaner cleaner = new JdbcIdempotencyCleaner(this.database.dataSource());
		cleaner.setBatchSize(7);
		assertThat(cleaner.purgeExpired()).isEqualTo(30);
		assertThat(count("old-expired-%") + count("old-abandoned-%")).isZero();
		assertThat(this.jdbc.queryForList("SELECT idem_key FROM idempotency_record WHERE purge_after IS NULL"
				+ " OR purge_after <> GREATEST(expires_at, lease_expires_at)", String.class))
			.isEmpty();
		assertThat(count("old-live-%")).isEqualTo(20);
		assertThat(count("old-leased-past-expiry-%")).isEqualTo(3);
		// once the lease has lapsed, the row goes at the next run
		this.jdbc.update("UPDATE idempotency_record SET lease_expires_at = now() - INTERVAL '1 second',"
				+ " purge_after = now() - INTERVAL '1 second' WHERE idem_key LIKE 'old-leased-past-expiry-%'");
		assertThat(cleaner.purgeExpired()).isEqualTo(3);
		assertThat(count("old-live-%")).isEqualTo(20);
	}

	@Test
	void neverDeletesALiveRowWhateverItsPurgeAfterSays() {
		// a row an older release completed late, after the current one had claimed it
		insert("live-completed-", "C", null, "1 hour", 10);
		insert("leased-processing-", "P", "1 minute", "1 hour", 10);
		this.jdbc.update("UPDATE idempotency_record SET purge_after = now() - INTERVAL '1 minute'");
		assertThat(new JdbcIdempotencyCleaner(this.database.dataSource()).purgeExpired()).isZero();
		assertThat(count("live-completed-%")).isEqualTo(10);
		assertThat(count("leased-processing-%")).isEqualTo(10);
	}

	@Test
	void keepsAnExpiredRowUntilItsPurgeAfterAndThenDeletesIt() {
		// a completed record stays up to one lease past its expiry: it behaves as absent
		insert("expired-", "C", null, "-1 minute", 10);
		this.jdbc.update("UPDATE idempotency_record SET purge_after = now() + INTERVAL '1 hour'");
		JdbcIdempotencyCleaner cleaner = new JdbcIdempotencyCleaner(this.database.dataSource());
		assertThat(cleaner.purgeExpired()).isZero();
		this.jdbc.update("UPDATE idempotency_record SET purge_after = now() - INTERVAL '1 second'");
		assertThat(cleaner.purgeExpired()).isEqualTo(10);
	}

	@Test
	void cleansACustomTable() {
		JdbcIdempotencySchemaInitializer initializer = new JdbcIdempotencySchemaInitializer(this.database.dataSource());
		initializer.setTableName("payment_keys");
		initializer.initialize();
		this.jdbc.update(INSERT_ROWS.replace("idempotency_record", "payment_keys"), "old-", "old-", "C", null,
				"-1 minute", "C", 10);
		this.jdbc.update(INSERT_ROWS.replace("idempotency_record", "payment_keys"), "new-", "new-", "C", null,
				"-1 minute", "C", 5);
		this.jdbc.update("UPDATE payment_keys SET purge_after = expires_at WHERE idem_key LIKE 'new-%'");
		JdbcIdempotencyCleaner cleaner = new JdbcIdempotencyCleaner(this.database.dataSource());
		cleaner.setTableName("payment_keys");
		assertThat(cleaner.purgeExpired()).isEqualTo(15);
	}

	@Test
	void pausesAfterEachBatchForTheGivenMultipleOfItsDuration() {
		insert("expired-", "C", null, "-1 minute", 30);
		slowDownDeletes();
		JdbcIdempotencyCleaner cleaner = new JdbcIdempotencyCleaner(this.database.dataSource());
		cleaner.setBatchSize(10);
		cleaner.setPauseFactor(2);
		assertThat(cleaner.purgeExpired()).isEqualTo(30);
		List<Double> batchEnds = this.jdbc
			.queryForList("SELECT extract(epoch FROM at)::float8 FROM cleanup_batches ORDER BY at", Double.class);
		// three full batches and the empty one that ends the run;
		// each batch takes at least 200 ms, so a batch ends at
		// least 200 ms + a pause of 2 x 200 ms after the one before
		assertThat(batchEnds).hasSize(4);
		for (int i = 1; i < batchEnds.size(); i++) {
			assertThat(batchEnds.get(i) - batchEnds.get(i - 1)).isGreaterThanOrEqualTo(0.6);
		}
	}

	@Test
	void anInterruptDuringAPauseEndsTheRunAndKeepsTheInterruptStatus() throws Exception {
		insert("expired-", "C", null, "-1 minute", 30);
		slowDownDeletes();
		JdbcIdempotencyCleaner cleaner = new JdbcIdempotencyCleaner(this.database.dataSource());
		cleaner.setBatchSize(10);
		// a pause of at least 200 ms x 500 = 100 s
		cleaner.setPauseFactor(500);
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			Future<List<Object>> run = executor.submit(() -> {
				int deleted = cleaner.purgeExpired();
				return List.of(deleted, Thread.currentThread().isInterrupted());
			});
			while (this.jdbc.queryForObject("SELECT count(*) FROM cleanup_batches", Integer.class) == 0) {
				Thread.sleep(20);
			}
			executor.shutdownNow();
			assertThat(run.get(30, TimeUnit.SECONDS)).containsExactly(10, true);
		}
		finally {
			executor.shutdownNow();
		}
		assertThat(count("expired-%")).isEqualTo(20);
	}

	@Test
	void pauseFactorMustBeFiniteAndNotNegative() {
		JdbcIdempotencyCleaner cleaner = new JdbcIdempotencyCleaner(this.database.dataSource());
		assertThatIllegalArgumentException().isThrownBy(() -> cleaner.setPauseFactor(-0.5));
		assertThatIllegalArgumentException().isThrownBy(() -> cleaner.setPauseFactor(Double.NaN));
		assertThatIllegalArgumentException().isThrownBy(() -> cleaner.setPauseFactor(Double.POSITIVE_INFINITY));
		cleaner.setPauseFactor(0);
	}

	@Test
	void batchSizeMustBePositive() {
		JdbcIdempotencyCleaner cleaner = new JdbcIdempotencyCleaner(this.database.dataSource());
		assertThatIllegalArgumentException().isThrownBy(() -> cleaner.setBatchSize(0));
	}

	// every delete statement takes at least 200 ms and logs when it ended
	private void slowDownDeletes() {
		this.jdbc.execute("CREATE TABLE cleanup_batches (at timestamptz NOT NULL)");
		this.jdbc.execute("CREATE FUNCTION slow_delete() RETURNS trigger LANGUAGE plpgsql AS $$ "
				+ "BEGIN PERFORM pg_sleep(0.2); RETURN NULL; END $$");
		this.jdbc.execute("CREATE FUNCTION log_delete() RETURNS trigger LANGUAGE plpgsql AS $$ "
				+ "BEGIN INSERT INTO cleanup_batches VALUES (clock_timestamp()); RETURN NULL; END $$");
		this.jdbc.execute("CREATE TRIGGER slow_delete BEFORE DELETE ON idempotency_record "
				+ "FOR EACH STATEMENT EXECUTE FUNCTION slow_delete()");
		this.jdbc.execute("CREATE TRIGGER log_delete AFTER DELETE ON idempotency_record "
				+ "FOR EACH STATEMENT EXECUTE FUNCTION log_delete()");
	}

	private void insert(String prefix, String status, String lease, String expiry, int rows) {
		insertAsOlderRelease(prefix, status, lease, expiry, rows);
		this.jdbc.update("UPDATE idempotency_record SET purge_after = GREATEST(expires_at, lease_expires_at)"
				+ " WHERE idem_key LIKE ? || '%'", prefix);
	}

	private void insertAsOlderRelease(String prefix, String status, String lease, String expiry, int rows) {
		this.jdbc.update(INSERT_ROWS, prefix, prefix, status, lease, expiry, status, rows);
	}

	private int count(String pattern) {
		return this.jdbc.queryForObject("SELECT count(*) FROM idempotency_record WHERE idem_key LIKE ?", Integer.class,
				pattern);
	}

	private static IdempotencyKey newKey() {
		return IdempotencyKey.global(UUID.randomUUID().toString());
	}

	private static RequestFingerprint fingerprint() {
		return RequestFingerprint.of(new byte[RequestFingerprint.LENGTH]);
	}

	private static StoredResponse response() {
		return new StoredResponse(200, List.of(new HttpHeader("Content-Type", "text/plain")),
				"ok".getBytes(StandardCharsets.UTF_8));
	}

}
