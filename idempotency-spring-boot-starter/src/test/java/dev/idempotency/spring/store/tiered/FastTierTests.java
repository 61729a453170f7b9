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

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.IdempotencyStatus;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.IdempotencyStoreException;
import dev.idempotency.core.store.InMemoryIdempotencyStore;
import dev.idempotency.test.ForwardingIdempotencyStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link FastTier}: which calls ask the circuit breaker, what reaches the fast
 * store, what is reported to the listener, and the lifetimes given to the fast tier.
 *
 * @author Idempotency contributors
 */
class FastTierTests {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration TTL = Duration.ofHours(1);

	private static final StoredResponse RESPONSE = new StoredResponse(200, List.of(),
			"{}".getBytes(StandardCharsets.UTF_8));

	private final List<String> journal = Collections.synchronizedList(new ArrayList<>());

	private final InMemoryIdempotencyStore memory = new InMemoryIdempotencyStore();

	private final TtlRecordingStore ttls = new TtlRecordingStore(this.memory);

	private final FaultInjectingStore store = new FaultInjectingStore("fast", this.ttls, this.journal);

	private final MutableClock clock = new MutableClock();

	private final TieredIdempotencyStoreTests.RecordingListener listener = new TieredIdempotencyStoreTests.RecordingListener();

	private final FastTier fast = new FastTier(this.store);

	private final IdempotencyKey key = TieredIdempotencyStoreTests.newKey();

	private final RequestFingerprint fingerprint = TieredIdempotencyStoreTests.fingerprint(1);

	private final OwnerToken token = OwnerToken.generate();

	@BeforeEach
	void setUp() {
		this.fast.setClock(this.clock);
		this.fast.setListener(this.listener);
	}

	@AfterEach
	void shutdown() {
		this.fast.shutdown();
	}

	@Test
	void healthyCallsReachTheStoreAndReportNothing() {
		assertThat(this.fast.acquire(this.key, this.fingerprint, this.token, LEASE, TTL))
			.isEqualTo(new AcquireResult.Acquired(this.token));
		assertThat(this.fast.complete(this.key, this.token, RESPONSE, TTL)).isEqualTo(FastTier.Outcome.APPLIED);
		assertThat(this.fast.complete(this.key, OwnerToken.generate(), RESPONSE, TTL))
			.isEqualTo(FastTier.Outcome.REFUSED);
		assertThat(this.fast.find(this.key, Optional.empty())).get()
			.satisfies((record) -> assertThat(record.status()).isEqualTo(IdempotencyStatus.COMPLETED));
		assertThat(this.journal).containsExactly("fast.acquire", "fast.complete", "fast.complete", "fast.find");
		assertThat(this.listener.fallbacks).isEmpty();
		assertThat(this.fast.getBreaker().getState()).isEqualTo(CircuitBreakerState.CLOSED);
	}

	@Test
	void failuresAreReportedAnsweredWithoutTheFastTierAndOpenTheBreaker() {
		Optional<IdempotencyRecord> otherwise = Optional.empty();
		this.store.setDown(true);
		assertThat(this.fast.acquire(this.key, this.fingerprint, this.token, LEASE, TTL)).isNull();
		assertThat(this.fast.complete(this.key, this.token, RESPONSE, TTL)).isEqualTo(FastTier.Outcome.UNAVAILABLE);
		assertThat(this.fast.find(this.key, otherwise)).isSameAs(otherwise);
		assertThat(this.listener.fallbacks).containsExactly("acquire:failed", "complete:failed", "find:failed");
		assertThat(this.fast.getBreaker().getState()).isEqualTo(CircuitBreakerState.OPEN);
		assertThat(this.listener.transitions).containsExactly("CLOSED->OPEN");
	}

	@Test
	void successResetsTheFailureCount() {
		this.store.setFailing("release", true);
		this.fast.release(this.key, this.token);
		assertThat(this.fast.getBreaker().getConsecutiveFailures()).isEqualTo(1);
		this.fast.acquire(this.key, this.fingerprint, this.token, LEASE, TTL);
		assertThat(this.fast.getBreaker().getConsecutiveFailures()).isZero();
		assertThat(this.listener.fallbacks).containsExactly("release:failed");
	}

	@Test
	void openBreakerSkipsBestEffortCallsWithoutReachingTheStore() {
		openBreaker();
		assertThat(this.fast.acquire(this.key, this.fingerprint, this.token, LEASE, TTL)).isNull();
		assertThat(this.fast.complete(this.key, this.token, RESPONSE, TTL)).isEqualTo(FastTier.Outcome.UNAVAILABLE);
		this.fast.release(this.key, this.token);
		this.fast.extendInBackground(this.key, this.token, LEASE);
		Optional<IdempotencyRecord> otherwise = Optional.empty();
		assertThat(this.fast.find(this.key, otherwise)).isSameAs(otherwise);
		assertThat(this.journal).isEmpty();
		assertThat(this.listener.fallbacks).containsExactly("acquire:skipped", "complete:skipped", "release:skipped",
				"extend:skipped", "find:skipped");
	}

	@Test
	void halfOpenTrialGoesThroughAndItsSuccessClosesTheBreaker() {
		openBreaker();
		this.clock.advance(Duration.ofSeconds(5));
		assertThat(this.fast.acquire(this.key, this.fingerprint, this.token, LEASE, TTL))
			.isEqualTo(new AcquireResult.Acquired(this.token));
		assertThat(this.fast.getBreaker().getState()).isEqualTo(CircuitBreakerState.CLOSED);
		assertThat(this.listener.transitions).containsExactly("CLOSED->OPEN", "OPEN->HALF_OPEN", "HALF_OPEN->CLOSED");
	}

	@Test
	void claimsHeldByTheFastTierAloneFailWhileTheBreakerIsOpen() {
		openBreaker();
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> this.fast.releaseClaim(this.key, this.token))
			.withMessageContaining("circuit breaker is open");
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> this.fast.extendClaim(this.key, this.token, LEASE))
			.withMessageContaining("circuit breaker is open");
		assertThat(this.journal).isEmpty();
		assertThat(this.listener.fallbacks).isEmpty();
	}

	@Test
	void failureOfAClaimHeldByTheFastTierAloneIsReportedAndThrown() {
		this.fast.acquire(this.key, this.fingerprint, this.token, LEASE, TTL);
		assertThat(this.fast.extendClaim(this.key, this.token, LEASE)).isTrue();
		this.store.setFailing("release", true);
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> this.fast.releaseClaim(this.key, this.token))
			.withMessage("fast is down");
		assertThat(this.listener.fallbacks).containsExactly("release:failed");
	}

	@Test
	void followUpsAreMadeWhileTheBreakerIsOpenAndDoNotCloseIt() {
		this.fast.acquire(this.key, this.fingerprint, this.token, LEASE, TTL);
		openBreaker();
		assertThat(this.fast.recheck(FastTier.COMPLETE, this.key)).isPresent();
		assertThat(this.fast.undoClaim(this.key, this.token)).isNull();
		this.fast.drop(FastTier.ACQUIRE, this.key);
		assertThat(this.journal).containsExactly("fast.find", "fast.release", "fast.evict");
		assertThat(this.fast.getBreaker().getState()).isEqualTo(CircuitBreakerState.OPEN);
		assertThat(this.listener.fallbacks).isEmpty();
	}

	@Test
	void followUpFailuresAreReportedUnderTheOperationTheyFinish() {
		this.store.setDown(true);
		assertThat(this.fast.undoClaim(this.key, this.token)).isInstanceOf(IdempotencyStoreException.class);
		this.fast.drop(FastTier.COMPLETE, this.key);
		assertThat(this.fast.recheck(FastTier.COMPLETE, this.key)).isEmpty();
		assertThat(this.listener.fallbacks).containsExactly("acquire:failed", "complete:failed", "complete:failed");
	}

	@Test
	void evictIsTriedWhileTheBreakerIsOpenAndItsFailureIsThrown() {
		this.fast.acquire(this.key, this.fingerprint, this.token, LEASE, TTL);
		openBreaker();
		assertThat(this.fast.evict(this.key)).isTrue();
		this.store.setDown(true);
		assertThatExceptionOfType(IdempotencyStoreException.class).isThrownBy(() -> this.fast.evict(this.key));
		assertThat(this.journal).containsExactly("fast.evict", "fast.evict");
		assertThat(this.listener.fallbacks).containsExactly("evict:failed");
	}

	@Test
	void findInsteadAnswersForTheDurableTierOrThrowsItsFailure() {
		this.fast.acquire(this.key, this.fingerprint, this.token, LEASE, TTL);
		assertThat(this.fast.findInstead(this.key, new IdempotencyStoreException("durable is down"))).isPresent();
		IdempotencyStoreException durableFailure = new IdempotencyStoreException("durable is down");
		this.store.setDown(true);
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> this.fast.findInstead(this.key, durableFailure))
			.isSameAs(durableFailure)
			.satisfies((ex) -> assertThat(ex.getSuppressed()).extracting(Throwable::getMessage)
				.containsExactly("fast is down"));
		assertThat(this.listener.fallbacks).containsExactly("find:failed");
	}

	@Test
	void findInsteadFailsWithoutCountingAFallbackWhileTheBreakerIsOpen() {
		openBreaker();
		IdempotencyStoreException durableFailure = new IdempotencyStoreException("durable is down");
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> this.fast.findInstead(this.key, durableFailure))
			.isSameAs(durableFailure)
			.satisfies((ex) -> assertThat(ex.getSuppressed()).isEmpty());
		assertThat(this.journal).isEmpty();
		assertThat(this.listener.fallbacks).isEmpty();
	}

	@Test
	void capShortensRecordsButNeverAClaimBelowItsLease() {
		this.fast.setTtlCap(Duration.ofSeconds(10));
		this.fast.acquire(this.key, this.fingerprint, this.token, LEASE, TTL);
		this.fast.complete(this.key, this.token, RESPONSE, TTL);
		this.fast.setTtlCap(Duration.ofMinutes(10));
		this.fast.acquire(TieredIdempotencyStoreTests.newKey(), this.fingerprint, this.token, LEASE, TTL);
		this.fast.complete(this.key, this.token, RESPONSE, Duration.ofMinutes(1));
		assertThat(this.ttls.ttls).containsExactly(LEASE, Duration.ofSeconds(10), Duration.ofMinutes(10),
				Duration.ofMinutes(1));
	}

	@Test
	void rewarmLivesNoLongerThanTheDurableRecordInWholeMilliseconds() {
		this.fast.acquire(this.key, this.fingerprint, this.token, LEASE, TTL);
		Duration remaining = Duration.ofMinutes(10).plusNanos(700_000);
		long askedAt = System.nanoTime();
		this.fast.rewarm(this.key, this.token, replay(RESPONSE, remaining), TTL, askedAt);
		Duration warmTtl = this.ttls.ttls.get(1);
		assertThat(warmTtl).isLessThanOrEqualTo(Duration.ofMinutes(10)).isGreaterThan(Duration.ofMinutes(9));
		assertThat(warmTtl.getNano() % 1_000_000).isZero();
		assertThat(this.memory.find(this.key)).get()
			.satisfies((record) -> assertThat(record.status()).isEqualTo(IdempotencyStatus.COMPLETED));
	}

	@Test
	void rewarmIsCappedLikeAnyRecord() {
		this.fast.setTtlCap(Duration.ofMinutes(1));
		this.fast.acquire(this.key, this.fingerprint, this.token, LEASE, TTL);
		this.fast.rewarm(this.key, this.token, replay(RESPONSE, Duration.ofMinutes(10)), TTL, System.nanoTime());
		assertThat(this.ttls.ttls).containsExactly(Duration.ofMinutes(1), Duration.ofMinutes(1));
	}

	@Test
	void rewarmReleasesTheClaimWhenNoTimeIsLeft() {
		this.fast.acquire(this.key, this.fingerprint, this.token, LEASE, TTL);
		this.fast.rewarm(this.key, this.token, replay(RESPONSE, Duration.ofNanos(900_000)), TTL, System.nanoTime());
		assertThat(this.journal).containsExactly("fast.acquire", "fast.release");
		assertThat(this.memory.find(this.key)).isEmpty();
	}

	@Test
	void rewarmReleasesTheClaimWhenTheResponseCannotBeRead() {
		this.fast.acquire(this.key, this.fingerprint, this.token, LEASE, TTL);
		this.fast.rewarm(this.key, this.token, replay(StoredResponse.unreadable(), Duration.ofMinutes(10)), TTL,
				System.nanoTime());
		assertThat(this.journal).containsExactly("fast.acquire", "fast.release");
		assertThat(this.memory.find(this.key)).isEmpty();
	}

	@Test
	void rewarmThatFailsReleasesTheClaimSoThatItTurnsNoRetryAway() {
		this.fast.acquire(this.key, this.fingerprint, this.token, LEASE, TTL);
		this.store.setFailing("complete", true);
		this.fast.rewarm(this.key, this.token, replay(RESPONSE, Duration.ofMinutes(10)), TTL, System.nanoTime());
		assertThat(this.journal).containsExactly("fast.acquire", "fast.complete", "fast.release");
		assertThat(this.memory.find(this.key)).isEmpty();
	}

	@Test
	void rewarmMeasuresARecordWithoutReportedLifetimeByTheClock() {
		this.fast.acquire(this.key, this.fingerprint, this.token, LEASE, TTL);
		AcquireResult.Replay replay = new AcquireResult.Replay(RESPONSE, this.clock.instant().plusSeconds(42));
		this.fast.rewarm(this.key, this.token, replay, TTL, System.nanoTime());
		assertThat(this.ttls.ttls).containsExactly(TTL, Duration.ofSeconds(42));
	}

	@Test
	void renewalRunsInTheBackgroundOneAtATimePerOwner() throws InterruptedException {
		CountDownLatch entered = new CountDownLatch(1);
		CountDownLatch resume = new CountDownLatch(1);
		AtomicReference<Thread> renewer = new AtomicReference<>();
		FaultInjectingStore hanging = new FaultInjectingStore("fast", this.memory, this.journal) {

			@Override
			public boolean extend(IdempotencyKey key, OwnerToken token, Duration lease) {
				renewer.compareAndSet(null, Thread.currentThread());
				entered.countDown();
				try {
					resume.await(30, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				return super.extend(key, token, lease);
			}

		};
		FastTier renewing = new FastTier(hanging);
		renewing.setListener(this.listener);
		try {
			renewing.acquire(this.key, this.fingerprint, this.token, LEASE, TTL);
			renewing.extendInBackground(this.key, this.token, LEASE);
			assertThat(entered.await(30, TimeUnit.SECONDS)).isTrue();
			assertThat(renewer.get()).isNotSameAs(Thread.currentThread());
			renewing.extendInBackground(this.key, this.token, LEASE);
			assertThat(this.listener.fallbacks).containsExactly("extend:skipped");
			resume.countDown();
			await().atMost(Duration.ofSeconds(30)).until(() -> {
				renewing.extendInBackground(this.key, this.token, LEASE);
				return hanging.calls("extend") >= 2;
			});
		}
		finally {
			resume.countDown();
			renewing.shutdown();
		}
	}

	private void openBreaker() {
		this.store.setDown(true);
		while (this.fast.getBreaker().getState() != CircuitBreakerState.OPEN) {
			this.fast.release(this.key, this.token);
		}
		this.store.setDown(false);
		this.journal.clear();
		this.listener.fallbacks.clear();
	}

	private AcquireResult.Replay replay(StoredResponse response, Duration timeToLive) {
		return new AcquireResult.Replay(response, this.clock.instant().plus(timeToLive), timeToLive);
	}

	/**
	 * Records the TTL of every claim and completion it is given.
	 */
	private static final class TtlRecordingStore extends ForwardingIdempotencyStore {

		final List<Duration> ttls = Collections.synchronizedList(new ArrayList<>());

		TtlRecordingStore(IdempotencyStore delegate) {
			super(delegate);
		}

		@Override
		public AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
				Duration lease, Duration ttl) {
			this.ttls.add(ttl);
			return delegate().acquire(key, fingerprint, token, lease, ttl);
		}

		@Override
		public boolean complete(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
			this.ttls.add(ttl);
			return delegate().complete(key, token, response, ttl);
		}

	}

}
