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

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyStatus;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStoreException;
import dev.idempotency.spring.store.jdbc.CommitSettingsDataSource;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spring.store.redis.RedisIdempotencyStore;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The tiered store over a real Redis and a real PostgreSQL with the
 * {@link ClaimCommit#ASYNCHRONOUS asynchronous claim commit}: the whole store contract
 * and the tests of {@link TieredIdempotencyStoreIT}, then what the option adds. A claim
 * that PostgreSQL loses in a crash is simulated by deleting its row, which is what
 * recovery leaves behind: no row, while Redis still holds the claim.
 *
 * @author Idempotency contributors
 */
@Tag("variant")
class TieredIdempotencyStoreAsynchronousClaimIT extends TieredIdempotencyStoreIT {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration TTL = Duration.ofMinutes(10);

	private static final StoredResponse RESPONSE = new StoredResponse(201,
			List.of(new HttpHeader("Content-Type", "application/json")),
			"{\"payment\":\"p-async\"}".getBytes(StandardCharsets.UTF_8));

	@Override
	protected ClaimCommit claimCommit() {
		return ClaimCommit.ASYNCHRONOUS;
	}

	@Test
	void durableClaimCommitsAsynchronouslyAndTheCompletionSynchronously() {
		CommitSettingsDataSource commits = new CommitSettingsDataSource(dataSource);
		TieredIdempotencyStore store = tiered(this.fast, new JdbcIdempotencyStore(commits.dataSource()));
		IdempotencyKey key = TieredIdempotencyStoreTests.newKey();
		OwnerToken token = OwnerToken.generate();
		assertThat(store.acquire(key, TieredIdempotencyStoreTests.fingerprint(1), token, LEASE, TTL))
			.isEqualTo(new AcquireResult.Acquired(token));
		assertThat(commits.drain()).as("the claim").containsExactly("off");
		assertThat(store.complete(key, token, RESPONSE, TTL)).isTrue();
		assertThat(commits.drain()).as("the completion").containsExactly("on");
	}

	// with Redis out of the way the durable claim is the only one: never relaxed
	@Test
	void claimWithoutRedisCommitsSynchronously() throws IOException {
		LettuceConnectionFactory unreachable = unreachableRedis();
		try {
			RedisIdempotencyStore deadRedis = new RedisIdempotencyStore(unreachable);
			deadRedis.setKeyPrefix(PREFIX);
			CommitSettingsDataSource commits = new CommitSettingsDataSource(dataSource);
			TieredIdempotencyStore store = tiered(deadRedis, new JdbcIdempotencyStore(commits.dataSource()));
			OwnerToken token = OwnerToken.generate();
			assertThat(store.acquire(TieredIdempotencyStoreTests.newKey(), TieredIdempotencyStoreTests.fingerprint(1),
					token, LEASE, TTL))
				.isEqualTo(new AcquireResult.Acquired(token));
			assertThat(commits.drain()).containsExactly("on");
		}
		finally {
			unreachable.destroy();
		}
	}

	@Test
	void claimLostByPostgresqlIsWrittenAgainAtTheNextRenewal() throws Exception {
		IdempotencyKey key = TieredIdempotencyStoreTests.newKey();
		RequestFingerprint fingerprint = TieredIdempotencyStoreTests.fingerprint(2);
		OwnerToken owner = claim(key, fingerprint);
		loseDurableRecord(key);
		// Redis turns every duplicate away while PostgreSQL has no record
		assertThat(raceDuplicates(key, fingerprint)).isZero();
		assertThat(store().extend(key, owner, LEASE)).isTrue();
		assertThat(durableRecord(key)).containsExactly("P", owner.toString());
		loseDurableRecord(key);
		deleteRedisKeys();
		assertThat(store().complete(key, owner, RESPONSE, TTL)).isTrue();
		assertThat(store().acquire(key, fingerprint, OwnerToken.generate(), LEASE, TTL)).isInstanceOfSatisfying(
				AcquireResult.Replay.class, (replay) -> assertThat(replay.response()).isEqualTo(RESPONSE));
	}

	@Test
	void claimLostByPostgresqlIsCompletedAsUnclaimed() throws Exception {
		IdempotencyKey key = TieredIdempotencyStoreTests.newKey();
		RequestFingerprint fingerprint = TieredIdempotencyStoreTests.fingerprint(3);
		OwnerToken owner = claim(key, fingerprint);
		loseDurableRecord(key);
		assertThat(raceDuplicates(key, fingerprint)).isZero();
		assertThat(store().complete(key, owner, RESPONSE, TTL)).isTrue();
		assertThat(durableRecord(key)).containsExactly("C", owner.toString());
		// the durable record alone replays it once Redis forgets
		deleteRedisKeys();
		assertThat(store().acquire(key, fingerprint, OwnerToken.generate(), LEASE, TTL)).isInstanceOfSatisfying(
				AcquireResult.Replay.class, (replay) -> assertThat(replay.response()).isEqualTo(RESPONSE));
		assertThat(store().find(key)).get()
			.satisfies((record) -> assertThat(record.status()).isEqualTo(IdempotencyStatus.COMPLETED));
	}

	// a completion that fails (PostgreSQL down) keeps what the engine's retry of it needs
	@Test
	void failedCompletionOfALostClaimCanBeRetried() {
		IdempotencyKey key = TieredIdempotencyStoreTests.newKey();
		RequestFingerprint fingerprint = TieredIdempotencyStoreTests.fingerprint(7);
		OwnerToken owner = claim(key, fingerprint);
		loseDurableRecord(key);
		this.durable.setFailing("complete", true);
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> store().complete(key, owner, RESPONSE, TTL));
		this.durable.setFailing("complete", false);
		assertThat(store().complete(key, owner, RESPONSE, TTL)).isTrue();
		assertThat(durableRecord(key)).containsExactly("C", owner.toString());
	}

	// the lost claim is written again only where nobody else holds the key
	@Test
	void lostClaimNeverOverwritesAnotherOwnersRecord() {
		IdempotencyKey key = TieredIdempotencyStoreTests.newKey();
		RequestFingerprint fingerprint = TieredIdempotencyStoreTests.fingerprint(4);
		OwnerToken owner = claim(key, fingerprint);
		loseDurableRecord(key);
		OwnerToken other = OwnerToken.generate();
		assertThat(this.durable.acquire(key, fingerprint, other, LEASE, TTL))
			.isEqualTo(new AcquireResult.Acquired(other));
		assertThat(store().extend(key, owner, LEASE)).isFalse();
		assertThat(store().complete(key, owner, RESPONSE, TTL)).isFalse();
		assertThat(durableRecord(key)).containsExactly("P", other.toString());
	}

	// a released claim is forgotten: a later completion of its token is fenced
	@Test
	void releasedClaimIsNotWrittenAgain() {
		IdempotencyKey key = TieredIdempotencyStoreTests.newKey();
		RequestFingerprint fingerprint = TieredIdempotencyStoreTests.fingerprint(5);
		OwnerToken owner = claim(key, fingerprint);
		assertThat(store().release(key, owner)).isTrue();
		assertThat(store().extend(key, owner, LEASE)).isFalse();
		assertThat(store().complete(key, owner, RESPONSE, TTL)).isFalse();
		assertThat(countDurableRecords(key)).isZero();
	}

	// many callers race for one fresh key: one claim, one PostgreSQL row
	@Test
	void concurrentClaimsOfOneKeyGrantItOnce() throws Exception {
		IdempotencyKey key = TieredIdempotencyStoreTests.newKey();
		RequestFingerprint fingerprint = TieredIdempotencyStoreTests.fingerprint(6);
		List<AcquireResult> results = race(16,
				() -> store().acquire(key, fingerprint, OwnerToken.generate(), LEASE, TTL));
		assertThat(results).filteredOn(AcquireResult.Acquired.class::isInstance).hasSize(1);
		assertThat(results).filteredOn((result) -> !(result instanceof AcquireResult.Acquired))
			.allMatch(AcquireResult.InProgress.class::isInstance);
		assertThat(countDurableRecords(key)).isOne();
	}

	private OwnerToken claim(IdempotencyKey key, RequestFingerprint fingerprint) {
		OwnerToken owner = OwnerToken.generate();
		assertThat(store().acquire(key, fingerprint, owner, LEASE, TTL)).isEqualTo(new AcquireResult.Acquired(owner));
		return owner;
	}

	private int raceDuplicates(IdempotencyKey key, RequestFingerprint fingerprint) throws Exception {
		List<AcquireResult> results = race(16,
				() -> store().acquire(key, fingerprint, OwnerToken.generate(), LEASE, TTL));
		assertThat(results).filteredOn((result) -> !(result instanceof AcquireResult.Acquired))
			.allMatch(AcquireResult.InProgress.class::isInstance);
		return (int) results.stream().filter(AcquireResult.Acquired.class::isInstance).count();
	}

	private static List<AcquireResult> race(int callers, Callable<AcquireResult> call) throws Exception {
		ExecutorService pool = Executors.newFixedThreadPool(callers);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<AcquireResult>> futures = new ArrayList<>();
			for (int i = 0; i < callers; i++) {
				futures.add(pool.submit(() -> {
					start.await();
					return call.call();
				}));
			}
			start.countDown();
			List<AcquireResult> results = new ArrayList<>();
			for (Future<AcquireResult> future : futures) {
				results.add(future.get(60, TimeUnit.SECONDS));
			}
			return results;
		}
		finally {
			pool.shutdownNow();
		}
	}

	// what a PostgreSQL crash leaves of a claim committed
	// asynchronously and not yet flushed: nothing
	private static void loseDurableRecord(IdempotencyKey key) {
		assertThat(new JdbcTemplate(dataSource).update("DELETE FROM idempotency_record WHERE id = ?",
				(Object) key.digest()))
			.isOne();
	}

	private static List<String> durableRecord(IdempotencyKey key) {
		return new JdbcTemplate(dataSource).queryForObject(
				"SELECT status::text, replace(owner_token::text, '-', '') FROM idempotency_record WHERE id = ?",
				(row, rowNum) -> List.of(row.getString(1), row.getString(2)), (Object) key.digest());
	}

	private static int countDurableRecords(IdempotencyKey key) {
		return new JdbcTemplate(dataSource).queryForObject("SELECT count(*) FROM idempotency_record WHERE id = ?",
				Integer.class, (Object) key.digest());
	}

}
