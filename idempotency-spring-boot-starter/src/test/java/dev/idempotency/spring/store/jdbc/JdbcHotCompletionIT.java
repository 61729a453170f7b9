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
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The completion of a record is a heap-only (HOT) update in PostgreSQL: it changes no
 * indexed column (see {@code docs/stores/postgresql.md}, "Completions are HOT updates"),
 * measured on a real server from its own statistics.
 *
 * @author Idempotency contributors
 */
@Tag("serial")
class JdbcHotCompletionIT {

	private static final int CLAIMANTS = 16;

	private static final int RECORDS_PER_CLAIMANT = 25;

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration TTL = Duration.ofMinutes(10);

	private PostgresTestDatabase database;

	private JdbcTemplate jdbc;

	@BeforeEach
	void createSchema() {
		this.database = PostgresTestDatabase.create("idem_jdbc_hot");
		new JdbcIdempotencySchemaInitializer(this.database.dataSource()).initialize();
		this.jdbc = new JdbcTemplate(this.database.dataSource());
	}

	@AfterEach
	void dropSchema() {
		this.database.close();
	}

	@Test
	void completionsByConcurrentClaimantsAreHeapOnlyUpdates() throws Exception {
		// each claimant on a connection of its own, closed when it is done: a server
		// process reports its statistics as it ends
		PGSimpleDataSource unpooled = this.database.unpooledDataSource();
		ExecutorService executor = Executors.newFixedThreadPool(CLAIMANTS);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<?>> claimants = new ArrayList<>();
			for (int i = 0; i < CLAIMANTS; i++) {
				claimants.add(executor.submit(() -> {
					try (Connection connection = unpooled.getConnection()) {
						JdbcIdempotencyStore store = new JdbcIdempotencyStore(
								new SingleConnectionDataSource(connection, true));
						start.await();
						for (int n = 0; n < RECORDS_PER_CLAIMANT; n++) {
							IdempotencyKey key = IdempotencyKey.global(UUID.randomUUID().toString());
							OwnerToken token = OwnerToken.generate();
							assertThat(store.acquire(key, fingerprint(), token, LEASE, TTL))
								.isEqualTo(new AcquireResult.Acquired(token));
							assertThat(store.complete(key, token, response(), TTL)).isTrue();
						}
					}
					return null;
				}));
			}
			start.countDown();
			for (Future<?> claimant : claimants) {
				claimant.get(2, TimeUnit.MINUTES);
			}
		}
		finally {
			executor.shutdownNow();
		}
		int completions = CLAIMANTS * RECORDS_PER_CLAIMANT;
		Map<String, Object> updates = updatesOnceReported(completions);
		long all = ((Number) updates.get("n_tup_upd")).longValue();
		long heapOnly = ((Number) updates.get("n_tup_hot_upd")).longValue();
		assertThat(all).as("updates of the table: the completions, nothing else").isEqualTo(completions);
		// with the cleaner's index on expires_at, which a completion changes, none is
		assertThat(heapOnly).as("HOT updates among %d completions", completions).isGreaterThanOrEqualTo(all / 2);
	}

	@Test
	void aCompletionWithinTheLeaseLeavesPurgeAfterAsTheClaimSetIt() {
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(this.database.dataSource());
		IdempotencyKey key = IdempotencyKey.global(UUID.randomUUID().toString());
		OwnerToken token = OwnerToken.generate();
		store.acquire(key, fingerprint(), token, LEASE, TTL);
		Map<String, Object> claimed = times();
		assertThat(claimed.get("after_expiry")).isEqualTo(LEASE.toMillis());
		assertThat(store.complete(key, token, response(), TTL)).isTrue();
		Map<String, Object> completed = times();
		assertThat(completed.get("purge_after")).isEqualTo(claimed.get("purge_after"));
		assertThat(((Number) completed.get("after_expiry")).longValue()).isBetween(0L, LEASE.toMillis());
	}

	@Test
	void aCompletionWithAShorterTimeToLiveBringsPurgeAfterForwardToTheNewExpiry() {
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(this.database.dataSource());
		IdempotencyKey key = IdempotencyKey.global(UUID.randomUUID().toString());
		OwnerToken token = OwnerToken.generate();
		store.acquire(key, fingerprint(), token, LEASE, TTL);
		assertThat(store.complete(key, token, response(), Duration.ofMinutes(1))).isTrue();
		assertThat(times().get("after_expiry")).isEqualTo(0L);
	}

	@Test
	void aLeaseExtendedPastPurgeAfterMovesItToTheNewExpiry() {
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(this.database.dataSource());
		IdempotencyKey key = IdempotencyKey.global(UUID.randomUUID().toString());
		OwnerToken token = OwnerToken.generate();
		store.acquire(key, fingerprint(), token, Duration.ofSeconds(10), Duration.ofSeconds(10));
		assertThat(store.extend(key, token, Duration.ofHours(1))).isTrue();
		assertThat(times().get("after_expiry")).isEqualTo(0L);
	}

	// purge_after, and how far past expires_at it lies in milliseconds, of the only row
	private Map<String, Object> times() {
		return this.jdbc.queryForMap("SELECT purge_after,"
				+ " (extract(epoch FROM purge_after - expires_at) * 1000)::bigint AS after_expiry FROM idempotency_record");
	}

	private Map<String, Object> updatesOnceReported(int expected) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		Map<String, Object> updates;
		do {
			Thread.sleep(100);
			updates = this.jdbc.queryForMap("SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables"
					+ " WHERE schemaname = ? AND relname = 'idempotency_record'", this.database.schema());
		}
		while (((Number) updates.get("n_tup_upd")).longValue() < expected && System.nanoTime() < deadline);
		return updates;
	}

	private static RequestFingerprint fingerprint() {
		return RequestFingerprint.of(new byte[RequestFingerprint.LENGTH]);
	}

	private static StoredResponse response() {
		return new StoredResponse(201, List.of(new HttpHeader("Content-Type", "application/json")),
				"{\"id\":\"pay_1\",\"status\":\"captured\",\"amount\":4200,\"currency\":\"EUR\"}"
					.getBytes(StandardCharsets.UTF_8));
	}

}
