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

package dev.idempotency.test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.IdempotencyStatus;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Contract test kit that every {@link IdempotencyStore} must pass: the built-in stores
 * run it, and a custom store runs it by extending this class in its own tests and
 * returning the store from {@link #createStore()}. Add
 * {@code dev.idempotency:idempotency-test} with the {@code test} scope to the project,
 * then: <pre class="code">
 * class MyIdempotencyStoreTests extends AbstractIdempotencyStoreTests {
 *
 *     &#64;Override
 *     protected IdempotencyStore createStore() {
 *         return new MyIdempotencyStore(...);
 *     }
 *
 * }
 * </pre> The subclass inherits every test of the contract (JUnit Jupiter runs them as its
 * own): acquire, replay, mismatch and in-progress answers; completion, release and
 * extension by the owner only; lease lapse and takeover; fencing of a replaced owner;
 * expiry after the TTL; find and evict; byte-exact round trips of responses; scope
 * isolation; and races of many threads over fresh keys and over one lapsed lease, each
 * with exactly one winner. Subclasses may add tests of their own and may make the races
 * smaller or larger with {@link #raceThreads()}, {@link #raceKeys()} and
 * {@link #raceRounds()}.
 * <p>
 * {@link #createStore()} is called before each test. Tests use random keys, so a store
 * may be shared between tests and with other clients of the same server: a store backed
 * by a server may keep one client for the whole class and clean up its keys in an
 * {@code @AfterAll} method. A store that a test can bring near its time-outs is best
 * tested behind a {@link TcpProxy} too.
 * <p>
 * Time-based tests use real, short durations (see {@link #SHORT_LEASE}) because stores
 * measure time with their own server's clock: the store must honour leases and
 * time-to-live values of a few hundred milliseconds.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public abstract class AbstractIdempotencyStoreTests {

	/**
	 * A lease long enough never to lapse during a test.
	 */
	protected static final Duration LONG_LEASE = Duration.ofSeconds(30);

	/**
	 * The lease of the racing claims: longer than the longest a race may take (its
	 * futures time out after five minutes), so that only concurrency, never a lease
	 * lapsing on a slow or busy machine, could let a second racer win.
	 */
	protected static final Duration RACE_LEASE = Duration.ofMinutes(10);

	/**
	 * A record lifetime long enough never to end during a test.
	 */
	protected static final Duration LONG_TTL = Duration.ofMinutes(10);

	/**
	 * A lease that lapses within a test.
	 */
	protected static final Duration SHORT_LEASE = Duration.ofMillis(300);

	/**
	 * How long to wait for {@link #SHORT_LEASE} to lapse, with a margin for clocks that
	 * tick coarsely.
	 */
	protected static final Duration PAST_SHORT_LEASE = Duration.ofMillis(700);

	private IdempotencyStore store;

	/**
	 * Create the store under test. Called before each test.
	 * @return the store
	 * @throws Exception if the store cannot be created
	 */
	protected abstract IdempotencyStore createStore() throws Exception;

	/**
	 * Number of threads of the race tests.
	 * @return at least 64
	 */
	protected int raceThreads() {
		return 64;
	}

	/**
	 * Number of keys of each round of the race test.
	 * @return the number of keys
	 */
	protected int raceKeys() {
		return 1000;
	}

	/**
	 * Number of rounds of the race test, each with fresh keys. One round is already
	 * {@link #raceKeys()} races of {@link #raceThreads()} threads each; more rounds
	 * repeat them on a warmed-up store.
	 * @return the number of rounds, one by default
	 */
	protected int raceRounds() {
		return 1;
	}

	@BeforeEach
	void setUpStore() throws Exception {
		this.store = createStore();
	}

	/**
	 * Return the store under test.
	 * @return the store
	 */
	protected IdempotencyStore store() {
		return this.store;
	}

	@Test
	void acquireAbsentKeyAcquires() {
		OwnerToken token = OwnerToken.generate();
		AcquireResult result = this.store.acquire(newKey(), fingerprint("a"), token, LONG_LEASE, LONG_TTL);
		assertThat(result).isEqualTo(new AcquireResult.Acquired(token));
	}

	@Test
	void completedKeyWithSameFingerprintReplaysStoredResponse() {
		IdempotencyKey key = newKey();
		OwnerToken token = acquire(key, fingerprint("a"));
		StoredResponse response = response(201, "{\"id\":42}");
		Instant before = Instant.now();
		assertThat(this.store.complete(key, token, response, LONG_TTL)).isTrue();
		AcquireResult result = this.store.acquire(key, fingerprint("a"), OwnerToken.generate(), LONG_LEASE, LONG_TTL);
		assertThat(result).isInstanceOf(AcquireResult.Replay.class);
		AcquireResult.Replay replay = (AcquireResult.Replay) result;
		assertThat(replay.response()).isEqualTo(response);
		// the store's clock may differ from this JVM's a little
		assertThat(replay.expiresAt()).isBetween(before.plus(LONG_TTL).minusSeconds(5),
				Instant.now().plus(LONG_TTL).plusSeconds(5));
	}

	@Test
	void reportedTimeToLiveIsTheRemainingLifetime() {
		IdempotencyKey key = newKey();
		OwnerToken token = acquire(key, fingerprint("a"));
		assertThat(this.store.complete(key, token, response(201, "{}"), LONG_TTL)).isTrue();
		AcquireResult result = this.store.acquire(key, fingerprint("a"), OwnerToken.generate(), LONG_LEASE, LONG_TTL);
		assertThat(result).isInstanceOf(AcquireResult.Replay.class);
		// optional: a store that reports it measures
		// it by its own clock, never beyond the TTL
		Duration replayed = ((AcquireResult.Replay) result).timeToLive();
		if (replayed != null) {
			assertThat(replayed).isBetween(LONG_TTL.minusMinutes(1), LONG_TTL);
		}
		Duration found = this.store.find(key).orElseThrow().timeToLive();
		if (found != null) {
			assertThat(found).isBetween(LONG_TTL.minusMinutes(1), LONG_TTL);
		}
	}

	@Test
	void completedKeyWithOtherFingerprintIsMismatch() {
		IdempotencyKey key = newKey();
		OwnerToken token = acquire(key, fingerprint("a"));
		this.store.complete(key, token, response(200, "ok"), LONG_TTL);
		assertThat(this.store.acquire(key, fingerprint("b"), OwnerToken.generate(), LONG_LEASE, LONG_TTL))
			.isInstanceOf(AcquireResult.Mismatch.class);
	}

	@Test
	void processingKeyWithSameFingerprintIsInProgress() {
		IdempotencyKey key = newKey();
		acquire(key, fingerprint("a"));
		AcquireResult result = this.store.acquire(key, fingerprint("a"), OwnerToken.generate(), LONG_LEASE, LONG_TTL);
		assertThat(result).isInstanceOf(AcquireResult.InProgress.class);
		Duration retryAfter = ((AcquireResult.InProgress) result).retryAfter();
		assertThat(retryAfter).isPositive().isLessThanOrEqualTo(LONG_LEASE.plusSeconds(1));
	}

	@Test
	void processingKeyWithOtherFingerprintIsMismatch() {
		IdempotencyKey key = newKey();
		acquire(key, fingerprint("a"));
		assertThat(this.store.acquire(key, fingerprint("b"), OwnerToken.generate(), LONG_LEASE, LONG_TTL))
			.isInstanceOf(AcquireResult.Mismatch.class);
	}

	@Test
	void completeTwiceBySameOwnerIsNotAnError() {
		IdempotencyKey key = newKey();
		OwnerToken token = acquire(key, fingerprint("a"));
		StoredResponse first = response(201, "first");
		assertThat(this.store.complete(key, token, first, LONG_TTL)).isTrue();
		assertThat(this.store.complete(key, token, first, LONG_TTL)).isTrue();
		assertThat(replay(key, fingerprint("a")).response()).isEqualTo(first);
	}

	@Test
	void completeByAnotherTokenIsRejectedAndChangesNothing() {
		IdempotencyKey key = newKey();
		acquire(key, fingerprint("a"));
		assertThat(this.store.complete(key, OwnerToken.generate(), response(200, "intruder"), LONG_TTL)).isFalse();
		assertThat(this.store.acquire(key, fingerprint("a"), OwnerToken.generate(), LONG_LEASE, LONG_TTL))
			.isInstanceOf(AcquireResult.InProgress.class);
	}

	@Test
	void completeOfAbsentKeyIsRejected() {
		IdempotencyKey key = newKey();
		assertThat(this.store.complete(key, OwnerToken.generate(), response(200, "x"), LONG_TTL)).isFalse();
		assertThat(this.store.find(key)).isEmpty();
	}

	@Test
	void releaseByOwnerMakesKeyAbsent() {
		IdempotencyKey key = newKey();
		OwnerToken token = acquire(key, fingerprint("a"));
		assertThat(this.store.release(key, token)).isTrue();
		assertThat(this.store.find(key)).isEmpty();
		OwnerToken next = OwnerToken.generate();
		assertThat(this.store.acquire(key, fingerprint("b"), next, LONG_LEASE, LONG_TTL))
			.isEqualTo(new AcquireResult.Acquired(next));
	}

	@Test
	void releaseByAnotherTokenIsRejected() {
		IdempotencyKey key = newKey();
		acquire(key, fingerprint("a"));
		assertThat(this.store.release(key, OwnerToken.generate())).isFalse();
		assertThat(this.store.find(key)).isPresent();
	}

	@Test
	void releaseOfCompletedKeyIsRejected() {
		IdempotencyKey key = newKey();
		OwnerToken token = acquire(key, fingerprint("a"));
		this.store.complete(key, token, response(200, "done"), LONG_TTL);
		assertThat(this.store.release(key, token)).isFalse();
		assertThat(replay(key, fingerprint("a")).response().bodyBytes()).isEqualTo(bytes("done"));
	}

	@Test
	void extendKeepsTheLeaseAlive() throws InterruptedException {
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		this.store.acquire(key, fingerprint("a"), token, SHORT_LEASE, LONG_TTL);
		assertThat(this.store.extend(key, token, LONG_LEASE)).isTrue();
		sleep(PAST_SHORT_LEASE);
		assertThat(this.store.acquire(key, fingerprint("a"), OwnerToken.generate(), LONG_LEASE, LONG_TTL))
			.isInstanceOf(AcquireResult.InProgress.class);
	}

	@Test
	void extendByAnotherTokenIsRejected() {
		IdempotencyKey key = newKey();
		acquire(key, fingerprint("a"));
		assertThat(this.store.extend(key, OwnerToken.generate(), LONG_LEASE)).isFalse();
		assertThat(this.store.extend(newKey(), OwnerToken.generate(), LONG_LEASE)).isFalse();
	}

	@Test
	void extendOfCompletedKeyIsRejected() {
		IdempotencyKey key = newKey();
		OwnerToken token = acquire(key, fingerprint("a"));
		this.store.complete(key, token, response(200, "done"), LONG_TTL);
		assertThat(this.store.extend(key, token, LONG_LEASE)).isFalse();
	}

	@Test
	void lapsedLeaseIsTakenOverBySameFingerprint() throws InterruptedException {
		IdempotencyKey key = newKey();
		this.store.acquire(key, fingerprint("a"), OwnerToken.generate(), SHORT_LEASE, LONG_TTL);
		sleep(PAST_SHORT_LEASE);
		OwnerToken next = OwnerToken.generate();
		assertThat(this.store.acquire(key, fingerprint("a"), next, LONG_LEASE, LONG_TTL))
			.isEqualTo(new AcquireResult.Acquired(next));
		assertThat(this.store.find(key)).get().extracting(IdempotencyRecord::owner).isEqualTo(next);
	}

	@Test
	void lapsedLeaseWithOtherFingerprintIsMismatch() throws InterruptedException {
		IdempotencyKey key = newKey();
		this.store.acquire(key, fingerprint("a"), OwnerToken.generate(), SHORT_LEASE, LONG_TTL);
		sleep(PAST_SHORT_LEASE);
		assertThat(this.store.acquire(key, fingerprint("b"), OwnerToken.generate(), LONG_LEASE, LONG_TTL))
			.isInstanceOf(AcquireResult.Mismatch.class);
	}

	@Test
	void ownerWhoseLeaseWasTakenOverIsFencedOut() throws InterruptedException {
		IdempotencyKey key = newKey();
		OwnerToken old = OwnerToken.generate();
		this.store.acquire(key, fingerprint("a"), old, SHORT_LEASE, LONG_TTL);
		sleep(PAST_SHORT_LEASE);
		OwnerToken current = acquire(key, fingerprint("a"));
		assertThat(this.store.extend(key, old, LONG_LEASE)).isFalse();
		assertThat(this.store.complete(key, old, response(200, "late"), LONG_TTL)).isFalse();
		assertThat(this.store.release(key, old)).isFalse();
		assertThat(this.store.complete(key, current, response(201, "current"), LONG_TTL)).isTrue();
		assertThat(this.store.complete(key, old, response(200, "later"), LONG_TTL)).isFalse();
		assertThat(replay(key, fingerprint("a")).response().bodyBytes()).isEqualTo(bytes("current"));
	}

	@Test
	void lapsedLeaseThatNobodyTookOverStillBelongsToItsOwner() throws InterruptedException {
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		this.store.acquire(key, fingerprint("a"), token, SHORT_LEASE, LONG_TTL);
		sleep(PAST_SHORT_LEASE);
		assertThat(this.store.complete(key, token, response(201, "slow"), LONG_TTL)).isTrue();
		assertThat(replay(key, fingerprint("a")).response().bodyBytes()).isEqualTo(bytes("slow"));
	}

	@Test
	void completedRecordExpiresAfterItsTtl() throws InterruptedException {
		IdempotencyKey key = newKey();
		OwnerToken token = acquire(key, fingerprint("a"));
		this.store.complete(key, token, response(200, "short-lived"), SHORT_LEASE);
		sleep(PAST_SHORT_LEASE);
		assertThat(this.store.find(key)).isEmpty();
		OwnerToken next = OwnerToken.generate();
		assertThat(this.store.acquire(key, fingerprint("b"), next, LONG_LEASE, LONG_TTL))
			.isEqualTo(new AcquireResult.Acquired(next));
	}

	@Test
	void abandonedProcessingRecordExpiresAfterItsTtl() throws InterruptedException {
		IdempotencyKey key = newKey();
		this.store.acquire(key, fingerprint("a"), OwnerToken.generate(), Duration.ofMillis(200), SHORT_LEASE);
		sleep(PAST_SHORT_LEASE);
		assertThat(this.store.find(key)).isEmpty();
		OwnerToken next = OwnerToken.generate();
		assertThat(this.store.acquire(key, fingerprint("b"), next, LONG_LEASE, LONG_TTL))
			.isEqualTo(new AcquireResult.Acquired(next));
	}

	@Test
	void findReturnsProcessingRecord() {
		IdempotencyKey key = newKey();
		OwnerToken token = acquire(key, fingerprint("a"));
		Optional<IdempotencyRecord> found = this.store.find(key);
		assertThat(found).isPresent();
		IdempotencyRecord record = found.get();
		assertThat(record.key()).isEqualTo(key);
		assertThat(record.fingerprint()).isEqualTo(fingerprint("a"));
		assertThat(record.status()).isEqualTo(IdempotencyStatus.PROCESSING);
		assertThat(record.owner()).isEqualTo(token);
		assertThat(record.leaseExpiresAt()).isNotNull();
		assertThat(record.response()).isNull();
		assertThat(record.expiresAt()).isAfter(Instant.now());
	}

	@Test
	void findReturnsCompletedRecord() {
		IdempotencyKey key = newKey();
		OwnerToken token = acquire(key, fingerprint("a"));
		StoredResponse response = response(202, "accepted");
		this.store.complete(key, token, response, LONG_TTL);
		IdempotencyRecord record = this.store.find(key).orElseThrow();
		assertThat(record.status()).isEqualTo(IdempotencyStatus.COMPLETED);
		assertThat(record.response()).isEqualTo(response);
		assertThat(record.leaseExpiresAt()).isNull();
	}

	@Test
	void findOfAbsentKeyIsEmpty() {
		assertThat(this.store.find(newKey())).isEmpty();
	}

	@Test
	void evictDeletesAnyRecord() {
		IdempotencyKey processing = newKey();
		acquire(processing, fingerprint("a"));
		IdempotencyKey completed = newKey();
		this.store.complete(completed, acquire(completed, fingerprint("a")), response(200, "x"), LONG_TTL);
		assertThat(this.store.evict(processing)).isTrue();
		assertThat(this.store.evict(completed)).isTrue();
		assertThat(this.store.evict(newKey())).isFalse();
		assertThat(this.store.find(processing)).isEmpty();
		assertThat(this.store.find(completed)).isEmpty();
		OwnerToken next = OwnerToken.generate();
		assertThat(this.store.acquire(completed, fingerprint("b"), next, LONG_LEASE, LONG_TTL))
			.isEqualTo(new AcquireResult.Acquired(next));
	}

	@Test
	void responsesRoundTripExactly() {
		List<HttpHeader> headers = List.of(new HttpHeader("Content-Type", "application/json;charset=UTF-8"),
				new HttpHeader("X-Trace", "one"), new HttpHeader("x-trace", "two"), new HttpHeader("Location", "/p/ü"),
				new HttpHeader("X-Empty", ""));
		byte[] large = new byte[256 * 1024];
		ThreadLocalRandom.current().nextBytes(large);
		List<StoredResponse> responses = List.of(new StoredResponse(201, headers, large),
				new StoredResponse(204, List.of(), new byte[0]), new StoredResponse(402, headers, bytes("{\"e\":1}")),
				StoredResponse.withoutBody(200, headers));
		for (StoredResponse response : responses) {
			IdempotencyKey key = newKey();
			this.store.complete(key, acquire(key, fingerprint("a")), response, LONG_TTL);
			StoredResponse replayed = replay(key, fingerprint("a")).response();
			assertThat(replayed).isEqualTo(response);
			assertThat(replayed.headers()).containsExactlyElementsOf(response.headers());
			assertThat(replayed.isBodyRetained()).isEqualTo(response.isBodyRetained());
		}
	}

	@Test
	void sameKeyInDifferentScopesIsIndependent() {
		String clientKey = UUID.randomUUID().toString();
		IdempotencyKey alice = new IdempotencyKey("alice-" + clientKey, clientKey);
		IdempotencyKey bob = new IdempotencyKey("bob-" + clientKey, clientKey);
		IdempotencyKey global = IdempotencyKey.global(clientKey);
		this.store.complete(alice, acquire(alice, fingerprint("a")), response(201, "alice"), LONG_TTL);
		OwnerToken bobToken = OwnerToken.generate();
		assertThat(this.store.acquire(bob, fingerprint("b"), bobToken, LONG_LEASE, LONG_TTL))
			.isEqualTo(new AcquireResult.Acquired(bobToken));
		OwnerToken globalToken = OwnerToken.generate();
		assertThat(this.store.acquire(global, fingerprint("a"), globalToken, LONG_LEASE, LONG_TTL))
			.isEqualTo(new AcquireResult.Acquired(globalToken));
		assertThat(replay(alice, fingerprint("a")).response().bodyBytes()).isEqualTo(bytes("alice"));
	}

	@Test
	void concurrentAcquisitionsOfEachKeyHaveExactlyOneWinner() throws Exception {
		int threads = raceThreads();
		int keysPerRound = raceKeys();
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		try {
			for (int round = 0; round < raceRounds(); round++) {
				List<IdempotencyKey> keys = new ArrayList<>();
				for (int i = 0; i < keysPerRound; i++) {
					keys.add(newKey());
				}
				AtomicIntegerArray winners = new AtomicIntegerArray(keysPerRound);
				AtomicIntegerArray answers = new AtomicIntegerArray(keysPerRound);
				CountDownLatch start = new CountDownLatch(1);
				List<Future<?>> futures = new ArrayList<>();
				for (int t = 0; t < threads; t++) {
					boolean reversed = (t % 2) == 1;
					futures.add(executor.submit(() -> {
						start.await();
						for (int n = 0; n < keysPerRound; n++) {
							int i = reversed ? keysPerRound - 1 - n : n;
							AcquireResult result = this.store.acquire(keys.get(i), fingerprint("race"),
									OwnerToken.generate(), RACE_LEASE, LONG_TTL);
							answers.incrementAndGet(i);
							if (result instanceof AcquireResult.Acquired) {
								winners.incrementAndGet(i);
							}
							else {
								assertThat(result).isInstanceOf(AcquireResult.InProgress.class);
							}
						}
						return null;
					}));
				}
				start.countDown();
				for (Future<?> future : futures) {
					future.get(5, TimeUnit.MINUTES);
				}
				for (int i = 0; i < keysPerRound; i++) {
					assertThat(answers.get(i)).isEqualTo(threads);
					assertThat(winners.get(i)).as("acquisitions of key %d in round %d", i, round).isEqualTo(1);
				}
			}
		}
		finally {
			executor.shutdownNow();
		}
	}

	@Test
	void concurrentTakeoversOfALapsedLeaseHaveExactlyOneWinner() throws Exception {
		int threads = raceThreads();
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		try {
			// five lapsed leases, one per round: claimed together, so that one wait
			// lets all of them lapse
			List<IdempotencyKey> lapsed = new ArrayList<>();
			for (int round = 0; round < 5; round++) {
				IdempotencyKey key = newKey();
				this.store.acquire(key, fingerprint("a"), OwnerToken.generate(), SHORT_LEASE, LONG_TTL);
				lapsed.add(key);
			}
			sleep(PAST_SHORT_LEASE);
			for (int round = 0; round < lapsed.size(); round++) {
				IdempotencyKey key = lapsed.get(round);
				CountDownLatch start = new CountDownLatch(1);
				List<Future<Boolean>> futures = new ArrayList<>();
				for (int t = 0; t < threads; t++) {
					futures.add(executor.submit(() -> {
						start.await();
						return this.store.acquire(key, fingerprint("a"), OwnerToken.generate(), RACE_LEASE,
								LONG_TTL) instanceof AcquireResult.Acquired;
					}));
				}
				start.countDown();
				int won = 0;
				for (Future<Boolean> future : futures) {
					won += future.get(1, TimeUnit.MINUTES) ? 1 : 0;
				}
				assertThat(won).as("takeovers in round %d", round).isEqualTo(1);
			}
		}
		finally {
			executor.shutdownNow();
		}
	}

	/**
	 * Return a new random key in a random scope.
	 * @return the key
	 */
	protected static IdempotencyKey newKey() {
		return new IdempotencyKey("scope-" + ThreadLocalRandom.current().nextInt(4), UUID.randomUUID().toString());
	}

	/**
	 * Return a fingerprint derived from the given text.
	 * @param text any text
	 * @return the fingerprint
	 */
	protected static RequestFingerprint fingerprint(String text) {
		byte[] bytes = new byte[RequestFingerprint.LENGTH];
		byte[] source = bytes(text);
		System.arraycopy(source, 0, bytes, 0, Math.min(source.length, bytes.length));
		bytes[RequestFingerprint.LENGTH - 1] = (byte) source.length;
		return RequestFingerprint.of(bytes);
	}

	/**
	 * Return a JSON response with the given status and body.
	 * @param status the status
	 * @param body the body text
	 * @return the response
	 */
	protected static StoredResponse response(int status, String body) {
		return new StoredResponse(status, List.of(new HttpHeader("Content-Type", "application/json")), bytes(body));
	}

	private OwnerToken acquire(IdempotencyKey key, RequestFingerprint fingerprint) {
		OwnerToken token = OwnerToken.generate();
		assertThat(this.store.acquire(key, fingerprint, token, LONG_LEASE, LONG_TTL))
			.isEqualTo(new AcquireResult.Acquired(token));
		return token;
	}

	private AcquireResult.Replay replay(IdempotencyKey key, RequestFingerprint fingerprint) {
		AcquireResult result = this.store.acquire(key, fingerprint, OwnerToken.generate(), LONG_LEASE, LONG_TTL);
		assertThat(result).isInstanceOf(AcquireResult.Replay.class);
		return (AcquireResult.Replay) result;
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	private static void sleep(Duration duration) throws InterruptedException {
		Thread.sleep(duration.toMillis());
	}

	static <T> List<T> shuffled(List<T> list) {
		List<T> copy = new ArrayList<>(list);
		Collections.shuffle(copy);
		return copy;
	}

}
