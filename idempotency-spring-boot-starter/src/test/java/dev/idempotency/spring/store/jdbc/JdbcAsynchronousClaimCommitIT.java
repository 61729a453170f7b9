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
import dev.idempotency.spring.transaction.TransactionalClaims;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link JdbcIdempotencyStore#acquireCommittingAsynchronously}: a claim it inserts
 * commits with {@code synchronous_commit = off}, read on a real PostgreSQL server at the
 * commit itself; every other commit stays synchronous; and the claim is exactly as
 * exclusive as a synchronous one.
 *
 * @author Idempotency contributors
 */
class JdbcAsynchronousClaimCommitIT {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration TTL = Duration.ofMinutes(10);

	private static final StoredResponse RESPONSE = new StoredResponse(201,
			List.of(new HttpHeader("Content-Type", "application/json")),
			"{\"payment\":\"p-1\"}".getBytes(StandardCharsets.UTF_8));

	private PostgresTestDatabase database;

	private CommitSettingsDataSource commits;

	private JdbcIdempotencyStore store;

	private JdbcTemplate jdbc;

	@BeforeEach
	void createSchema() {
		this.database = PostgresTestDatabase.create("idem_jdbc_async_claim");
		new JdbcIdempotencySchemaInitializer(this.database.dataSource()).initialize();
		this.jdbc = new JdbcTemplate(this.database.dataSource());
		this.commits = new CommitSettingsDataSource(this.database.dataSource());
		this.store = new JdbcIdempotencyStore(this.commits.dataSource());
	}

	@AfterEach
	void dropSchema() {
		this.database.close();
	}

	@Test
	void insertedClaimCommitsWithoutWaitingForTheFlush() {
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		assertThat(this.store.acquireCommittingAsynchronously(key, fingerprint(1), token, LEASE, TTL))
			.isEqualTo(new AcquireResult.Acquired(token));
		assertThat(this.commits.drain()).containsExactly("off");
		assertThat(this.store.complete(key, token, RESPONSE, TTL)).isTrue();
		assertThat(this.commits.drain()).as("the completion").containsExactly("on");
	}

	@Test
	void acquireCommitsSynchronously() {
		OwnerToken token = OwnerToken.generate();
		assertThat(this.store.acquire(newKey(), fingerprint(1), token, LEASE, TTL))
			.isEqualTo(new AcquireResult.Acquired(token));
		assertThat(this.commits.drain()).containsExactly("on");
	}

	@Test
	void claimThatFindsALiveRecordCommitsSynchronouslyAndAnswersAsAcquire() {
		IdempotencyKey key = newKey();
		OwnerToken first = OwnerToken.generate();
		assertThat(this.store.acquireCommittingAsynchronously(key, fingerprint(1), first, LEASE, TTL))
			.isEqualTo(new AcquireResult.Acquired(first));
		this.commits.drain();
		assertThat(this.store.acquireCommittingAsynchronously(key, fingerprint(1), OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.InProgress.class);
		assertThat(this.store.acquireCommittingAsynchronously(key, fingerprint(2), OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Mismatch.class);
		assertThat(this.commits.drain()).containsExactly("on", "on");
		assertThat(this.store.complete(key, first, RESPONSE, TTL)).isTrue();
		assertThat(this.store.acquireCommittingAsynchronously(key, fingerprint(1), OwnerToken.generate(), LEASE, TTL))
			.isInstanceOfSatisfying(AcquireResult.Replay.class,
					(replay) -> assertThat(replay.response()).isEqualTo(RESPONSE));
	}

	// the claim statement and the takeover that follows it
	// share one transaction on a connection that does not
	// auto-commit: the takeover must not inherit a relaxed commit
	@Test
	void takeoverOfAnExpiredRecordCommitsSynchronously() throws InterruptedException {
		IdempotencyKey key = newKey();
		Duration shortLived = Duration.ofMillis(50);
		assertThat(this.store.acquire(key, fingerprint(1), OwnerToken.generate(), shortLived, shortLived))
			.isInstanceOf(AcquireResult.Acquired.class);
		waitUntilExpired(key);
		this.commits.drain();
		OwnerToken taker = OwnerToken.generate();
		assertThat(this.store.acquireCommittingAsynchronously(key, fingerprint(1), taker, LEASE, TTL))
			.isEqualTo(new AcquireResult.Acquired(taker));
		assertThat(this.commits.drain()).containsExactly("on");
	}

	@Test
	void claimGuardedByTheAdvisoryLockCommitsSynchronously() {
		this.store.setTransactionalClaims(true);
		OwnerToken token = OwnerToken.generate();
		assertThat(this.store.acquireCommittingAsynchronously(newKey(), fingerprint(1), token, LEASE, TTL))
			.isEqualTo(new AcquireResult.Acquired(token));
		assertThat(this.commits.drain()).containsExactly("on");
	}

	// the application's own commit is never relaxed by a claim that joins it
	@Test
	void claimJoiningTheApplicationsTransactionLeavesItsCommitSynchronous() {
		TransactionTemplate transaction = new TransactionTemplate(
				new DataSourceTransactionManager(this.commits.dataSource()));
		OwnerToken token = OwnerToken.generate();
		transaction.executeWithoutResult((status) -> {
			try (TransactionalClaims.Scope claims = TransactionalClaims.open(this.commits.dataSource())) {
				assertThat(this.store.acquireCommittingAsynchronously(newKey(), fingerprint(1), token, LEASE, TTL))
					.isEqualTo(new AcquireResult.Acquired(token));
			}
		});
		assertThat(this.commits.drain()).containsExactly("on");
	}

	@Test
	void concurrentAsynchronousClaimsOfOneKeyGrantItOnce() throws Exception {
		int claimants = 16;
		IdempotencyKey key = newKey();
		ExecutorService pool = Executors.newFixedThreadPool(claimants);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<AcquireResult>> results = new ArrayList<>();
			for (int i = 0; i < claimants; i++) {
				results.add(pool.submit(() -> {
					start.await();
					return this.store.acquireCommittingAsynchronously(key, fingerprint(1), OwnerToken.generate(), LEASE,
							TTL);
				}));
			}
			start.countDown();
			int granted = 0;
			for (Future<AcquireResult> result : results) {
				AcquireResult answer = result.get(60, TimeUnit.SECONDS);
				if (answer instanceof AcquireResult.Acquired) {
					granted++;
				}
				else {
					assertThat(answer).isInstanceOf(AcquireResult.InProgress.class);
				}
			}
			assertThat(granted).isEqualTo(1);
		}
		finally {
			pool.shutdownNow();
		}
		assertThat(this.jdbc.queryForObject("SELECT count(*) FROM idempotency_record WHERE idem_key = ?", Integer.class,
				key.key()))
			.isEqualTo(1);
		assertThat(this.commits.drain()).containsOnlyOnce("off");
	}

	private void waitUntilExpired(IdempotencyKey key) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		while (Boolean.FALSE.equals(this.jdbc.queryForObject(
				"SELECT expires_at <= now() FROM idempotency_record WHERE idem_key = ?", Boolean.class, key.key()))) {
			assertThat(System.nanoTime()).as("the record expires").isLessThan(deadline);
			Thread.sleep(20);
		}
	}

	private static IdempotencyKey newKey() {
		return IdempotencyKey.global("async-claim-" + UUID.randomUUID());
	}

	private static RequestFingerprint fingerprint(int seed) {
		byte[] bytes = new byte[RequestFingerprint.LENGTH];
		bytes[0] = (byte) seed;
		return RequestFingerprint.of(bytes);
	}

}
