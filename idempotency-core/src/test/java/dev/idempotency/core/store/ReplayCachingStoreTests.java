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

package dev.idempotency.core.store;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link ReplayCachingStore}, over a store of completed records that reports
 * their remaining lifetime and counts its calls, with a ticker the tests move.
 *
 * @author Idempotency contributors
 */
class ReplayCachingStoreTests {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration TTL = Duration.ofMinutes(10);

	private static final RequestFingerprint FINGERPRINT = fingerprint(1);

	private final AtomicLong ticker = new AtomicLong(1_000_000_000L);

	private final RecordsStore records = new RecordsStore();

	// the records below expire at noon; this JVM's clock says 11:59
	private static final Instant EXPIRES_AT = Instant.parse("2026-11-27T12:00:00Z");

	private final ReplayCachingStore cache = new ReplayCachingStore(this.records, this.ticker::get,
			Clock.fixed(EXPIRES_AT.minusSeconds(60), ZoneOffset.UTC));

	@Test
	void repeatedReplaysAreAnsweredWithoutTheStore() {
		IdempotencyKey key = completed("a", response("a"), TTL);
		AcquireResult first = acquire(key, FINGERPRINT);
		assertThat(first).isInstanceOf(AcquireResult.Replay.class);
		assertThat(this.records.acquires.get()).isOne();
		advance(Duration.ofSeconds(1));
		for (int i = 0; i < 10; i++) {
			assertThat(acquire(key, FINGERPRINT)).isInstanceOfSatisfying(AcquireResult.Replay.class, (replay) -> {
				assertThat(replay.response()).isEqualTo(response("a"));
				assertThat(replay.expiresAt()).isEqualTo(((AcquireResult.Replay) first).expiresAt());
				// the record's own remaining lifetime, counted down by the ticker
				assertThat(replay.timeToLive()).isEqualTo(TTL.minusSeconds(1));
			});
		}
		assertThat(this.records.acquires.get()).isOne();
		assertThat(this.cache.size()).isOne();
	}

	@Test
	void anotherFingerprintIsAnsweredByTheStore() {
		IdempotencyKey key = completed("b", response("b"), TTL);
		acquire(key, FINGERPRINT);
		assertThat(acquire(key, fingerprint(2))).isInstanceOf(AcquireResult.Mismatch.class);
		assertThat(this.records.acquires.get()).isEqualTo(2);
	}

	@Test
	void copyLivesNoLongerThanTheCachesTimeToLive() {
		this.cache.setTimeToLive(Duration.ofSeconds(5));
		IdempotencyKey key = completed("c", response("c"), TTL);
		acquire(key, FINGERPRINT);
		advance(Duration.ofMillis(4_999));
		acquire(key, FINGERPRINT);
		assertThat(this.records.acquires.get()).isOne();
		advance(Duration.ofMillis(1));
		assertThat(acquire(key, FINGERPRINT)).isInstanceOf(AcquireResult.Replay.class);
		assertThat(this.records.acquires.get()).isEqualTo(2);
	}

	@Test
	void copyNeverOutlivesTheRecord() {
		IdempotencyKey key = completed("d", response("d"), Duration.ofSeconds(2));
		acquire(key, FINGERPRINT);
		advance(Duration.ofSeconds(2));
		this.records.expire(key);
		assertThat(acquire(key, FINGERPRINT)).isInstanceOf(AcquireResult.Acquired.class);
	}

	// the record's lifetime is counted from before the store was asked: a slow answer
	// makes the copy shorter-lived, never longer
	@Test
	void recordLifetimeIsCountedFromBeforeTheCall() {
		IdempotencyKey key = completed("e", response("e"), Duration.ofSeconds(2));
		this.records.onAcquire = () -> advance(Duration.ofSeconds(1));
		acquire(key, FINGERPRINT);
		this.records.onAcquire = null;
		advance(Duration.ofMillis(999));
		assertThat(acquire(key, FINGERPRINT)).isInstanceOfSatisfying(AcquireResult.Replay.class,
				(replay) -> assertThat(replay.timeToLive()).isEqualTo(Duration.ofMillis(1)));
		advance(Duration.ofMillis(1));
		acquire(key, FINGERPRINT);
		assertThat(this.records.acquires.get()).isEqualTo(2);
	}

	@Test
	void evictionRemovesTheCopyAndTheRecord() {
		IdempotencyKey key = completed("f", response("f"), TTL);
		acquire(key, FINGERPRINT);
		assertThat(this.cache.evict(key)).isTrue();
		assertThat(this.cache.size()).isZero();
		assertThat(this.cache.getCachedBytes()).isZero();
		assertThat(acquire(key, FINGERPRINT)).isInstanceOf(AcquireResult.Acquired.class);
	}

	// a replay the store answered before an eviction reaches its caller, but is not kept
	@Test
	void replayFetchedAcrossAnEvictionIsNotCached() throws Exception {
		IdempotencyKey key = completed("g", response("g"), TTL);
		CountDownLatch asked = new CountDownLatch(1);
		CountDownLatch evicted = new CountDownLatch(1);
		this.records.onAcquire = () -> {
			asked.countDown();
			await(evicted);
		};
		ExecutorService pool = Executors.newSingleThreadExecutor();
		try {
			Future<AcquireResult> stale = pool.submit(() -> acquire(key, FINGERPRINT));
			await(asked);
			this.records.onAcquire = null;
			assertThat(this.cache.evict(key)).isTrue();
			evicted.countDown();
			assertThat(stale.get(30, TimeUnit.SECONDS)).isInstanceOf(AcquireResult.Replay.class);
		}
		finally {
			pool.shutdownNow();
		}
		assertThat(this.cache.size()).isZero();
		assertThat(this.cache.getCachedBytes()).isZero();
		assertThat(acquire(key, FINGERPRINT)).isInstanceOf(AcquireResult.Acquired.class);
	}

	// a store that reports no lifetime (Redis): the record's expiry instant is read
	// against this JVM's clock, with a margin of a whole time to live for the skew
	@Test
	void replayWithoutALifetimeIsCachedOnlyWithTwiceTheTimeToLiveLeft() {
		this.records.reportLifetime = false;
		IdempotencyKey key = completed("h", response("h"), TTL);
		this.cache.setTimeToLive(Duration.ofSeconds(30));
		acquire(key, FINGERPRINT);
		assertThat(acquire(key, FINGERPRINT)).isInstanceOfSatisfying(AcquireResult.Replay.class, (replay) -> {
			assertThat(replay.response()).isEqualTo(response("h"));
			assertThat(replay.expiresAt()).isEqualTo(EXPIRES_AT);
			assertThat(replay.timeToLive()).isNull();
		});
		assertThat(this.records.acquires.get()).isOne();
		// 60 s left by this clock: less than twice a time to live of 31 s
		IdempotencyKey near = completed("h-near", response("h"), TTL);
		this.cache.setTimeToLive(Duration.ofSeconds(31));
		acquire(near, FINGERPRINT);
		acquire(near, FINGERPRINT);
		assertThat(this.records.acquires.get()).isEqualTo(3);
	}

	@Test
	void unreadableReplayIsNotCached() {
		IdempotencyKey unreadable = completed("i", StoredResponse.unreadable(), TTL);
		acquire(unreadable, FINGERPRINT);
		acquire(unreadable, FINGERPRINT);
		assertThat(this.records.acquires.get()).isEqualTo(2);
		assertThat(this.cache.size()).isZero();
	}

	@Test
	void memoryStaysWithinTheLimit() {
		long limit = 64 * 1024;
		this.cache.setMaxBytes(limit);
		// larger than an eighth of the limit: never cached
		IdempotencyKey large = completed("large", new StoredResponse(200, List.of(), new byte[9 * 1024]), TTL);
		acquire(large, FINGERPRINT);
		assertThat(this.cache.size()).isZero();
		for (int i = 0; i < 200; i++) {
			acquire(completed("k" + i,
					new StoredResponse(200, List.of(new HttpHeader("Content-Type", "text/plain")), new byte[1024]),
					TTL), FINGERPRINT);
			assertThat(this.cache.getCachedBytes()).isLessThanOrEqualTo(limit);
		}
		assertThat(this.cache.size()).isBetween(1, 63);
		// once the old copies have expired, the first trim drops all of them and keeps
		// every new one
		advance(ReplayCachingStore.DEFAULT_TIME_TO_LIVE);
		int before = this.cache.size();
		int added = 0;
		while (this.cache.size() == before + added) {
			assertThat(added).as("a trim within the limit's worth of new copies").isLessThan(64);
			acquire(completed("new" + added, new StoredResponse(200, List.of(), new byte[1024]), TTL), FINGERPRINT);
			added++;
		}
		assertThat(this.cache.size()).isEqualTo(added);
		assertThat(this.cache.getCachedBytes()).isLessThanOrEqualTo(limit);
	}

	@Test
	void concurrentReplaysOfOneKeyAskTheStoreAtMostOncePerThread() throws Exception {
		IdempotencyKey key = completed("hot", response("hot"), TTL);
		int threads = 16;
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<Integer>> replays = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				replays.add(pool.submit(() -> {
					start.await();
					int count = 0;
					for (int i = 0; i < 1_000; i++) {
						if (acquire(key, FINGERPRINT) instanceof AcquireResult.Replay replay
								&& replay.response().equals(response("hot"))) {
							count++;
						}
					}
					return count;
				}));
			}
			start.countDown();
			for (Future<Integer> replay : replays) {
				assertThat(replay.get(60, TimeUnit.SECONDS)).isEqualTo(1_000);
			}
		}
		finally {
			pool.shutdownNow();
		}
		assertThat(this.records.acquires.get()).isBetween(1, threads);
		assertThat(this.cache.size()).isOne();
		this.cache.evict(key);
		assertThat(this.cache.getCachedBytes()).isZero();
	}

	@Test
	void otherOperationsGoToTheStore() {
		IdempotencyKey key = IdempotencyKey.global("other");
		OwnerToken token = OwnerToken.generate();
		this.records.inner.acquire(key, FINGERPRINT, token, LEASE, TTL);
		assertThat(this.cache.extend(key, token, LEASE)).isTrue();
		assertThat(this.cache.find(key)).isPresent();
		assertThat(this.cache.release(key, token)).isTrue();
		assertThat(this.cache.name()).isEqualTo("records");
		assertThat(this.cache.getDelegate()).isSameAs(this.records);
	}

	@Test
	void settingsMustBePositive() {
		assertThatIllegalArgumentException().isThrownBy(() -> this.cache.setTimeToLive(Duration.ZERO));
		assertThatIllegalArgumentException().isThrownBy(() -> this.cache.setMaxBytes(0));
	}

	private AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint) {
		return this.cache.acquire(key, fingerprint, OwnerToken.generate(), LEASE, TTL);
	}

	private IdempotencyKey completed(String name, StoredResponse response, Duration ttl) {
		IdempotencyKey key = IdempotencyKey.global(name);
		this.records.complete(key, response, ttl);
		return key;
	}

	private void advance(Duration duration) {
		this.ticker.addAndGet(duration.toNanos());
	}

	private static void await(CountDownLatch latch) {
		try {
			assertThat(latch.await(30, TimeUnit.SECONDS)).isTrue();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static StoredResponse response(String body) {
		return new StoredResponse(201, List.of(new HttpHeader("Content-Type", "application/json")),
				("{\"id\":\"" + body + "\"}").getBytes(StandardCharsets.UTF_8));
	}

	private static RequestFingerprint fingerprint(int seed) {
		byte[] bytes = new byte[RequestFingerprint.LENGTH];
		bytes[0] = (byte) seed;
		return RequestFingerprint.of(bytes);
	}

	/**
	 * Completed records with a lifetime reported as the tests set it, in front of an
	 * in-memory store for everything else; counts acquisitions.
	 */
	private final class RecordsStore implements IdempotencyStore {

		final InMemoryIdempotencyStore inner = new InMemoryIdempotencyStore();

		final AtomicInteger acquires = new AtomicInteger();

		final Map<IdempotencyKey, AcquireResult.Replay> completed = new ConcurrentHashMap<>();

		volatile boolean reportLifetime = true;

		volatile @Nullable Runnable onAcquire;

		void complete(IdempotencyKey key, StoredResponse response, Duration ttl) {
			this.completed.put(key, new AcquireResult.Replay(response, EXPIRES_AT, ttl));
		}

		void expire(IdempotencyKey key) {
			this.completed.remove(key);
		}

		@Override
		public AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
				Duration lease, Duration ttl) {
			this.acquires.incrementAndGet();
			// the record is read first, then the answer
			// is on its way for as long as the hook takes
			AcquireResult.Replay replay = this.completed.get(key);
			Runnable hook = this.onAcquire;
			if (hook != null) {
				hook.run();
			}
			if (replay == null) {
				return this.inner.acquire(key, fingerprint, token, lease, ttl);
			}
			if (!fingerprint.equals(FINGERPRINT)) {
				return new AcquireResult.Mismatch();
			}
			return this.reportLifetime ? replay : new AcquireResult.Replay(replay.response(), replay.expiresAt());
		}

		@Override
		public boolean complete(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
			return this.inner.complete(key, token, response, ttl);
		}

		@Override
		public boolean release(IdempotencyKey key, OwnerToken token) {
			return this.inner.release(key, token);
		}

		@Override
		public boolean extend(IdempotencyKey key, OwnerToken token, Duration lease) {
			return this.inner.extend(key, token, lease);
		}

		@Override
		public Optional<IdempotencyRecord> find(IdempotencyKey key) {
			return this.inner.find(key);
		}

		@Override
		public boolean evict(IdempotencyKey key) {
			boolean inMemory = this.inner.evict(key);
			return (this.completed.remove(key) != null) || inMemory;
		}

		@Override
		public String name() {
			return "records";
		}

	}

}
