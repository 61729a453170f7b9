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
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.IdempotencyStatus;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.engine.CompletionOutcome;
import dev.idempotency.core.engine.Decision;
import dev.idempotency.core.engine.IdempotencyEngine;
import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.IdempotencyStoreException;
import dev.idempotency.core.store.InMemoryIdempotencyStore;
import dev.idempotency.spring.store.FreshKeyClaim;
import dev.idempotency.test.ForwardingIdempotencyStore;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link TieredIdempotencyStore} over two in-memory stores with injected
 * faults.
 *
 * @author Idempotency contributors
 */
class TieredIdempotencyStoreTests {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration TTL = Duration.ofHours(1);

	private static final StoredResponse RESPONSE = new StoredResponse(201,
			List.of(new HttpHeader("Content-Type", "application/json")),
			"{\"id\":42}".getBytes(StandardCharsets.UTF_8));

	private static final AtomicInteger keys = new AtomicInteger();

	private final List<String> journal = Collections.synchronizedList(new ArrayList<>());

	private final InMemoryIdempotencyStore fastMemory = new InMemoryIdempotencyStore();

	private final InMemoryIdempotencyStore durableMemory = new InMemoryIdempotencyStore();

	private final FaultInjectingStore fast = new FaultInjectingStore("fast", this.fastMemory, this.journal);

	private final FaultInjectingStore durable = new FaultInjectingStore("durable", this.durableMemory, this.journal);

	private final MutableClock clock = new MutableClock();

	private final RecordingListener listener = new RecordingListener();

	private final TieredIdempotencyStore store = new TieredIdempotencyStore(this.fast, this.durable);

	private final IdempotencyKey key = newKey();

	private final RequestFingerprint fingerprint = fingerprint(1);

	@BeforeEach
	void setUp() {
		this.store.setClock(this.clock);
		this.store.setListener(this.listener);
	}

	@Test
	void firstRequestClaimsBothTiersAndCompletesDurableFirst() {
		OwnerToken token = OwnerToken.generate();
		assertThat(this.store.acquire(this.key, this.fingerprint, token, LEASE, TTL))
			.isEqualTo(new AcquireResult.Acquired(token));
		assertThat(this.store.complete(this.key, token, RESPONSE, TTL)).isTrue();
		assertThat(this.journal).containsExactly("fast.acquire", "durable.acquire", "durable.complete",
				"fast.complete");
		assertThat(this.fastMemory.find(this.key)).get()
			.satisfies((record) -> assertThat(record.status()).isEqualTo(IdempotencyStatus.COMPLETED));
		assertThat(this.durableMemory.find(this.key)).get()
			.satisfies((record) -> assertThat(record.response()).isEqualTo(RESPONSE));
		assertThat(this.listener.fallbacks).isEmpty();
	}

	@Test
	void hotReplayTouchesOnlyFastTier() {
		completeFirstRequest();
		this.journal.clear();
		AcquireResult result = this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL);
		assertThat(result).isInstanceOfSatisfying(AcquireResult.Replay.class,
				(replay) -> assertThat(replay.response()).isEqualTo(RESPONSE));
		assertThat(this.journal).containsExactly("fast.acquire");
	}

	@Test
	void aFastClaimWhoseReplyWasLostIsReleasedSoThatLaterRetriesAreReplayed() {
		completeFirstRequest();
		this.fastMemory.evict(this.key);
		this.fastMemory.setClock(this.clock);
		// the claim lands in the fast tier, but its reply never comes back (a time-out
		// after the server applied it): the durable tier answers
		this.fast.setLosingReplies("acquire", true);
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Replay.class);
		this.fast.setLosingReplies("acquire", false);
		await().atMost(Duration.ofSeconds(30)).until(() -> this.fastMemory.find(this.key).isEmpty());
		// long past a fresh claim's age: a claim left behind would answer "in progress"
		this.clock.advance(Duration.ofSeconds(5));
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Replay.class);
		assertThat(this.fastMemory.find(this.key)).get()
			.satisfies((record) -> assertThat(record.status()).isEqualTo(IdempotencyStatus.COMPLETED));
	}

	@Test
	void aFastClaimWhoseReplyWasLostUnderARunningHandlerLeavesItsCompletionToBothTiers() {
		this.fast.setLosingReplies("acquire", true);
		OwnerToken token = OwnerToken.generate();
		assertThat(this.store.acquire(this.key, this.fingerprint, token, LEASE, TTL))
			.isEqualTo(new AcquireResult.Acquired(token));
		this.fast.setLosingReplies("acquire", false);
		await().atMost(Duration.ofSeconds(30)).until(() -> this.fastMemory.find(this.key).isEmpty());
		// the durable claim holds the key meanwhile
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.InProgress.class);
		assertThat(this.store.complete(this.key, token, RESPONSE, TTL)).isTrue();
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOfSatisfying(AcquireResult.Replay.class,
					(replay) -> assertThat(replay.response()).isEqualTo(RESPONSE));
		assertThat(this.fastMemory.find(this.key)).get()
			.satisfies((record) -> assertThat(record.status()).isEqualTo(IdempotencyStatus.COMPLETED));
	}

	@Test
	void replayAfterFastTierLostTheRecordComesFromDurableTierAndRewarmsIt() {
		completeFirstRequest();
		this.fastMemory.evict(this.key);
		this.journal.clear();
		AcquireResult result = this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL);
		assertThat(result).isInstanceOfSatisfying(AcquireResult.Replay.class,
				(replay) -> assertThat(replay.response()).isEqualTo(RESPONSE));
		assertThat(this.journal).containsExactly("fast.acquire", "durable.acquire", "fast.complete");
		IdempotencyRecord durableRecord = this.durableMemory.find(this.key).orElseThrow();
		IdempotencyRecord fastRecord = this.fastMemory.find(this.key).orElseThrow();
		assertThat(fastRecord.response()).isEqualTo(RESPONSE);
		assertThat(fastRecord.expiresAt()).isBeforeOrEqualTo(durableRecord.expiresAt().plusSeconds(1));
		assertThat(fastRecord.expiresAt()).isAfter(durableRecord.expiresAt().minusSeconds(60));
		this.journal.clear();
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Replay.class);
		assertThat(this.journal).containsExactly("fast.acquire");
	}

	@Test
	void handlerRunsOnceThroughEngineWhenFastTierLosesItsData() {
		IdempotencyPolicy policy = IdempotencyPolicy.defaults();
		try (IdempotencyEngine engine = new IdempotencyEngine(this.store)) {
			Decision first = engine.begin(this.key, this.fingerprint, policy);
			assertThat(first).isInstanceOf(Decision.Execute.class);
			CompletionOutcome outcome = ((Decision.Execute) first).execution().complete(RESPONSE);
			assertThat(outcome).isNotNull();
			this.fastMemory.evict(this.key);
			Decision retry = engine.begin(this.key, this.fingerprint, policy);
			assertThat(retry).isInstanceOfSatisfying(Decision.Replay.class,
					(replay) -> assertThat(replay.response()).isEqualTo(RESPONSE));
		}
	}

	@Test
	void rewarmIsCappedByFastTtl() {
		this.store.setFastTtl(Duration.ofMinutes(1));
		completeFirstRequest();
		Instant cap = Instant.now().plus(Duration.ofMinutes(1)).plusSeconds(5);
		assertThat(this.fastMemory.find(this.key).orElseThrow().expiresAt()).isBefore(cap);
		assertThat(this.durableMemory.find(this.key).orElseThrow().expiresAt()).isAfter(cap);
		this.fastMemory.evict(this.key);
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Replay.class);
		assertThat(this.fastMemory.find(this.key).orElseThrow().expiresAt()).isBefore(cap);
	}

	@Test
	void rewarmReleasesFastClaimWhenRecordHasNoTimeLeft() {
		completeFirstRequest();
		this.fastMemory.evict(this.key);
		// by the application's clock the durable record has already expired
		this.clock.advance(TTL.plusMinutes(1));
		this.journal.clear();
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Replay.class);
		assertThat(this.journal).containsExactly("fast.acquire", "durable.acquire", "fast.release");
		assertThat(this.fastMemory.find(this.key)).isEmpty();
	}

	@Test
	void fastTierInProgressOfAClaimPastItsFirstMomentsAnswersWithoutDurableTier() {
		this.fastMemory.setClock(this.clock);
		OwnerToken owner = OwnerToken.generate();
		this.store.acquire(this.key, this.fingerprint, owner, LEASE, TTL);
		this.clock.advance(TieredIdempotencyStore.FRESH_CLAIM);
		this.journal.clear();
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.InProgress.class);
		assertThat(this.journal).containsExactly("fast.acquire");
	}

	@Test
	void fastTierInProgressOfAFreshClaimIsCheckedInTheDurableTier() {
		OwnerToken owner = OwnerToken.generate();
		this.store.acquire(this.key, this.fingerprint, owner, LEASE, TTL);
		this.journal.clear();
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.InProgress.class);
		assertThat(this.journal).containsExactly("fast.acquire", "durable.find");
		// a claim whose request has not ended is kept
		assertThat(this.fastMemory.find(this.key).orElseThrow().owner()).isEqualTo(owner);
	}

	@Test
	void freshFastClaimOfAKeyTheDurableTierHasCompletedIsAnsweredWithTheReplay() {
		// the fast tier lost the completed record, and a retry's claim, which copies it
		// back, is there: its duplicates get the replay, not "in progress"
		completeFirstRequest();
		this.fastMemory.evict(this.key);
		this.fastMemory.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL);
		this.journal.clear();
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOfSatisfying(AcquireResult.Replay.class,
					(replay) -> assertThat(replay.response()).isEqualTo(RESPONSE));
		assertThat(this.journal).containsExactly("fast.acquire", "durable.find", "fast.evict");
		// another fingerprint is a mismatch, as the durable tier confirms
		assertThat(this.store.acquire(this.key, fingerprint(9), OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Mismatch.class);
	}

	@Test
	void aClaimWhoseOwnerDiedAfterCompletingTheDurableTierIsDroppedByTheFirstDuplicateThatReplays() {
		// the owner completed the durable tier, then died before the fast one (a crash
		// between the commit and the fast completion): its claim is left, young
		this.fastMemory.setClock(this.clock);
		OwnerToken owner = OwnerToken.generate();
		this.store.acquire(this.key, this.fingerprint, owner, LEASE, TTL);
		assertThat(this.durableMemory.complete(this.key, owner, RESPONSE, TTL)).isTrue();
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Replay.class);
		// a duplicate after the claim's first moments is replayed too, not told that the
		// key is in progress until the dead owner's lease lapses
		this.clock.advance(TieredIdempotencyStore.FRESH_CLAIM);
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOfSatisfying(AcquireResult.Replay.class,
					(replay) -> assertThat(replay.response()).isEqualTo(RESPONSE));
		assertThat(this.fastMemory.find(this.key).orElseThrow().status()).isEqualTo(IdempotencyStatus.COMPLETED);
		this.journal.clear();
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Replay.class);
		assertThat(this.journal).containsExactly("fast.acquire");
	}

	@Test
	void freshFastClaimWhoseDurableCheckFailsIsAnsweredInProgress() {
		completeFirstRequest();
		this.fastMemory.evict(this.key);
		this.fastMemory.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL);
		this.durable.setFailing("find", true);
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.InProgress.class);
	}

	@Test
	void mismatchIsConfirmedByDurableTier() {
		completeFirstRequest();
		this.journal.clear();
		assertThat(this.store.acquire(this.key, fingerprint(2), OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Mismatch.class);
		assertThat(this.journal).containsExactly("fast.acquire", "durable.acquire");
		assertThat(this.fastMemory.find(this.key)).isPresent();
	}

	@Test
	void staleFastClaimWithOtherFingerprintDoesNotRefuseFreedKey() {
		// a claim whose release never reached the fast tier
		this.fastMemory.acquire(this.key, fingerprint(2), OwnerToken.generate(), LEASE, TTL);
		OwnerToken token = OwnerToken.generate();
		assertThat(this.store.acquire(this.key, this.fingerprint, token, LEASE, TTL))
			.isEqualTo(new AcquireResult.Acquired(token));
		assertThat(this.fastMemory.find(this.key)).isEmpty();
		assertThat(this.store.complete(this.key, token, RESPONSE, TTL)).isTrue();
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Replay.class);
		this.journal.clear();
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Replay.class);
		assertThat(this.journal).containsExactly("fast.acquire");
	}

	@Test
	void fastRecordLostWhileProcessingAnswersInProgressAndUndoesFastClaim() {
		OwnerToken owner = OwnerToken.generate();
		this.store.acquire(this.key, this.fingerprint, owner, LEASE, TTL);
		this.fastMemory.evict(this.key);
		this.journal.clear();
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.InProgress.class);
		assertThat(this.journal).containsExactly("fast.acquire", "durable.acquire", "fast.release");
		assertThat(this.fastMemory.find(this.key)).isEmpty();
		// the owner still completes; the next request re-warms the fast tier
		assertThat(this.store.complete(this.key, owner, RESPONSE, TTL)).isTrue();
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Replay.class);
		assertThat(this.fastMemory.find(this.key).orElseThrow().status()).isEqualTo(IdempotencyStatus.COMPLETED);
	}

	@Test
	void fastTierDownFallsBackToDurableTierAndOpensBreaker() {
		this.fast.setDown(true);
		for (int i = 0; i < 3; i++) {
			assertThat(this.store.getCircuitBreakerState()).isEqualTo(CircuitBreakerState.CLOSED);
			OwnerToken token = OwnerToken.generate();
			IdempotencyKey other = newKey();
			assertThat(this.store.acquire(other, this.fingerprint, token, LEASE, TTL))
				.isEqualTo(new AcquireResult.Acquired(token));
		}
		assertThat(this.store.getCircuitBreakerState()).isEqualTo(CircuitBreakerState.OPEN);
		assertThat(this.listener.transitions).containsExactly("CLOSED->OPEN");
		assertThat(this.listener.fallbacks).containsExactly("acquire:failed", "acquire:failed", "acquire:failed");
		this.fast.resetCalls();
		OwnerToken token = OwnerToken.generate();
		assertThat(this.store.acquire(this.key, this.fingerprint, token, LEASE, TTL))
			.isEqualTo(new AcquireResult.Acquired(token));
		assertThat(this.store.extend(this.key, token, LEASE)).isTrue();
		assertThat(this.store.complete(this.key, token, RESPONSE, TTL)).isTrue();
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Replay.class);
		assertThat(this.fast.totalCalls()).isZero();
		assertThat(this.listener.fallbacks).endsWith("acquire:skipped", "extend:skipped", "complete:skipped",
				"acquire:skipped");
	}

	@Test
	void halfOpenTrialClosesBreakerOnceFastTierRecovers() {
		openBreaker();
		this.fast.setDown(false);
		this.clock.advance(Duration.ofSeconds(4));
		this.fast.resetCalls();
		this.store.acquire(newKey(), this.fingerprint, OwnerToken.generate(), LEASE, TTL);
		assertThat(this.fast.totalCalls()).isZero();
		this.clock.advance(Duration.ofSeconds(1));
		OwnerToken token = OwnerToken.generate();
		assertThat(this.store.acquire(this.key, this.fingerprint, token, LEASE, TTL))
			.isEqualTo(new AcquireResult.Acquired(token));
		assertThat(this.fast.calls("acquire")).isOne();
		assertThat(this.store.getCircuitBreakerState()).isEqualTo(CircuitBreakerState.CLOSED);
		assertThat(this.listener.transitions).containsExactly("CLOSED->OPEN", "OPEN->HALF_OPEN", "HALF_OPEN->CLOSED");
		this.store.complete(this.key, token, RESPONSE, TTL);
		this.journal.clear();
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Replay.class);
		assertThat(this.journal).containsExactly("fast.acquire");
	}

	@Test
	void failedHalfOpenTrialOpensBreakerAgain() {
		openBreaker();
		this.clock.advance(Duration.ofSeconds(5));
		this.fast.resetCalls();
		OwnerToken token = OwnerToken.generate();
		assertThat(this.store.acquire(this.key, this.fingerprint, token, LEASE, TTL))
			.isEqualTo(new AcquireResult.Acquired(token));
		assertThat(this.fast.calls("acquire")).isOne();
		assertThat(this.store.getCircuitBreakerState()).isEqualTo(CircuitBreakerState.OPEN);
		this.store.acquire(newKey(), this.fingerprint, OwnerToken.generate(), LEASE, TTL);
		assertThat(this.fast.calls("acquire")).isOne();
		assertThat(this.listener.transitions).containsExactly("CLOSED->OPEN", "OPEN->HALF_OPEN", "HALF_OPEN->OPEN");
	}

	@Test
	void successResetsConsecutiveFailures() {
		this.fast.setDown(true);
		this.store.acquire(newKey(), this.fingerprint, OwnerToken.generate(), LEASE, TTL);
		this.store.acquire(newKey(), this.fingerprint, OwnerToken.generate(), LEASE, TTL);
		assertThat(this.store.getConsecutiveFastFailures()).isEqualTo(2);
		this.fast.setDown(false);
		this.store.acquire(newKey(), this.fingerprint, OwnerToken.generate(), LEASE, TTL);
		assertThat(this.store.getConsecutiveFastFailures()).isZero();
		this.fast.setDown(true);
		this.store.acquire(newKey(), this.fingerprint, OwnerToken.generate(), LEASE, TTL);
		this.store.acquire(newKey(), this.fingerprint, OwnerToken.generate(), LEASE, TTL);
		assertThat(this.store.getCircuitBreakerState()).isEqualTo(CircuitBreakerState.CLOSED);
	}

	@Test
	void failureThresholdIsConfigurable() {
		this.store.setFailureThreshold(1);
		this.fast.setDown(true);
		this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL);
		assertThat(this.store.getCircuitBreakerState()).isEqualTo(CircuitBreakerState.OPEN);
	}

	@Test
	void keyClaimedWhileBreakerWasOpenIsNotDuplicatedAfterItCloses() {
		openBreaker();
		OwnerToken owner = OwnerToken.generate();
		assertThat(this.store.acquire(this.key, this.fingerprint, owner, LEASE, TTL))
			.isEqualTo(new AcquireResult.Acquired(owner));
		this.fast.setDown(false);
		this.clock.advance(Duration.ofSeconds(5));
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.InProgress.class);
		assertThat(this.store.getCircuitBreakerState()).isEqualTo(CircuitBreakerState.CLOSED);
		assertThat(this.fastMemory.find(this.key)).isEmpty();
		assertThat(this.store.extend(this.key, owner, LEASE)).isTrue();
		// the fast tier is renewed in the background: let it land before the journal is
		// cleared, or a busy machine records it among the calls of the last acquire
		awaitUntil(() -> this.journal.contains("fast.extend"));
		assertThat(this.store.complete(this.key, owner, RESPONSE, TTL)).isTrue();
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Replay.class);
		this.journal.clear();
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Replay.class);
		assertThat(this.journal).containsExactly("fast.acquire");
	}

	@Test
	void durableTierDownFailsAcquireAndReleasesFastClaim() {
		this.durable.setDown(true);
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL));
		assertThat(this.journal).containsExactly("fast.acquire", "durable.acquire", "fast.release");
		assertThat(this.fastMemory.find(this.key)).isEmpty();
		assertThat(this.store.getCircuitBreakerState()).isEqualTo(CircuitBreakerState.CLOSED);
		assertThat(this.listener.fallbacks).isEmpty();
	}

	@Test
	void bothTiersDownFailsAcquire() {
		this.fast.setDown(true);
		this.durable.setDown(true);
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL));
	}

	@Test
	void hotReplayIsServedWhileDurableTierIsDown() {
		completeFirstRequest();
		this.durable.setDown(true);
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Replay.class);
	}

	@Test
	void fencedDurableCompletionReturnsFalseAndLeavesFastTierAlone() {
		OwnerToken owner = OwnerToken.generate();
		this.store.acquire(this.key, this.fingerprint, owner, LEASE, TTL);
		// another caller has taken the durable record over
		this.durableMemory.evict(this.key);
		this.durableMemory.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL);
		this.journal.clear();
		assertThat(this.store.complete(this.key, owner, RESPONSE, TTL)).isFalse();
		assertThat(this.journal).containsExactly("durable.complete");
		assertThat(this.fastMemory.find(this.key).orElseThrow().status()).isEqualTo(IdempotencyStatus.PROCESSING);
	}

	@Test
	void durableCompletionFailureIsThrownAndLeavesFastTierAlone() {
		OwnerToken owner = OwnerToken.generate();
		this.store.acquire(this.key, this.fingerprint, owner, LEASE, TTL);
		this.durable.setFailing("complete", true);
		this.journal.clear();
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> this.store.complete(this.key, owner, RESPONSE, TTL));
		assertThat(this.journal).containsExactly("durable.complete");
	}

	@Test
	void fastCompletionFailureIsSwallowedAndLeftClaimLapses() {
		Duration lease = Duration.ofMillis(300);
		OwnerToken owner = OwnerToken.generate();
		this.store.acquire(this.key, this.fingerprint, owner, lease, TTL);
		this.fast.setFailing("complete", true);
		assertThat(this.store.complete(this.key, owner, RESPONSE, TTL)).isTrue();
		assertThat(this.store.getConsecutiveFastFailures()).isOne();
		assertThat(this.listener.fallbacks).containsExactly("complete:failed");
		this.fast.setFailing("complete", false);
		// the fast tier still holds the claim, a young one: the durable tier is asked,
		// and
		// the duplicate gets the replay; it never runs
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), lease, TTL))
			.isInstanceOf(AcquireResult.Replay.class);
		// once the left claim lapses, the fast tier gets the record back
		await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
			assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), lease, TTL))
				.isInstanceOf(AcquireResult.Replay.class);
			assertThat(this.fastMemory.find(this.key).orElseThrow().status()).isEqualTo(IdempotencyStatus.COMPLETED);
		});
	}

	@Test
	void fastCompletionThatFindsNoClaimIsIgnored() {
		OwnerToken owner = OwnerToken.generate();
		this.store.acquire(this.key, this.fingerprint, owner, LEASE, TTL);
		this.fastMemory.evict(this.key);
		assertThat(this.store.complete(this.key, owner, RESPONSE, TTL)).isTrue();
		assertThat(this.store.getConsecutiveFastFailures()).isZero();
		assertThat(this.fastMemory.find(this.key)).isEmpty();
	}

	@Test
	void releaseFreesBothTiers() {
		OwnerToken owner = OwnerToken.generate();
		this.store.acquire(this.key, this.fingerprint, owner, LEASE, TTL);
		this.journal.clear();
		assertThat(this.store.release(this.key, owner)).isTrue();
		assertThat(this.journal).containsExactly("durable.release", "fast.release");
		assertThat(this.fastMemory.find(this.key)).isEmpty();
		assertThat(this.durableMemory.find(this.key)).isEmpty();
		OwnerToken next = OwnerToken.generate();
		assertThat(this.store.acquire(this.key, fingerprint(2), next, LEASE, TTL))
			.isEqualTo(new AcquireResult.Acquired(next));
	}

	@Test
	void releaseAnswerIsDurableTiers() {
		OwnerToken owner = OwnerToken.generate();
		this.store.acquire(this.key, this.fingerprint, owner, LEASE, TTL);
		this.durableMemory.evict(this.key);
		assertThat(this.store.release(this.key, owner)).isFalse();
		assertThat(this.fastMemory.find(this.key)).isEmpty();
	}

	@Test
	void releaseSurvivesFastTierFailure() {
		OwnerToken owner = OwnerToken.generate();
		this.store.acquire(this.key, this.fingerprint, owner, LEASE, TTL);
		this.fast.setFailing("release", true);
		assertThat(this.store.release(this.key, owner)).isTrue();
		assertThat(this.listener.fallbacks).containsExactly("release:failed");
	}

	@Test
	void releaseFailureOfDurableTierIsThrown() {
		OwnerToken owner = OwnerToken.generate();
		this.store.acquire(this.key, this.fingerprint, owner, LEASE, TTL);
		this.durable.setFailing("release", true);
		this.journal.clear();
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> this.store.release(this.key, owner));
		// the fast claim is released all the same: the durable tier, which answers every
		// claim first, still holds the key if its release did not happen
		assertThat(this.journal).containsExactly("durable.release", "fast.release");
		assertThat(this.fastMemory.find(this.key)).isEmpty();
	}

	@Test
	void extendExtendsBothTiers() {
		OwnerToken owner = OwnerToken.generate();
		this.store.acquire(this.key, this.fingerprint, owner, Duration.ofSeconds(1), TTL);
		Instant before = this.fastMemory.find(this.key).orElseThrow().leaseExpiresAt();
		this.journal.clear();
		assertThat(this.store.extend(this.key, owner, LEASE)).isTrue();
		// the fast tier's renewal runs in the background, after the durable one
		awaitUntil(() -> this.journal.contains("fast.extend"));
		assertThat(this.journal).containsExactly("durable.extend", "fast.extend");
		awaitUntil(() -> this.fastMemory.find(this.key).orElseThrow().leaseExpiresAt().isAfter(before));
	}

	@Test
	void extendRejectedByDurableTierLeavesFastTierAlone() {
		OwnerToken owner = OwnerToken.generate();
		this.store.acquire(this.key, this.fingerprint, owner, LEASE, TTL);
		this.durableMemory.evict(this.key);
		this.journal.clear();
		assertThat(this.store.extend(this.key, owner, LEASE)).isFalse();
		assertThat(this.journal).containsExactly("durable.extend");
	}

	@Test
	void extendFailureOfDurableTierIsThrownAndLeavesFastTierAlone() {
		OwnerToken owner = OwnerToken.generate();
		this.store.acquire(this.key, this.fingerprint, owner, LEASE, TTL);
		this.durable.setFailing("extend", true);
		this.journal.clear();
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> this.store.extend(this.key, owner, LEASE));
		assertThat(this.journal).containsExactly("durable.extend");
	}

	@Test
	void extendSurvivesFastTierFailure() {
		OwnerToken owner = OwnerToken.generate();
		this.store.acquire(this.key, this.fingerprint, owner, LEASE, TTL);
		this.fast.setFailing("extend", true);
		assertThat(this.store.extend(this.key, owner, LEASE)).isTrue();
		awaitUntil(() -> !this.listener.fallbacks.isEmpty());
		assertThat(this.listener.fallbacks).containsExactly("extend:failed");
	}

	static void awaitUntil(BooleanSupplier condition) {
		long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		while (!condition.getAsBoolean()) {
			assertThat(System.nanoTime()).as("condition met in time").isLessThan(deadline);
			try {
				Thread.sleep(5);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
	}

	@Test
	void findReadsDurableTier() {
		OwnerToken owner = OwnerToken.generate();
		this.store.acquire(this.key, this.fingerprint, owner, LEASE, TTL);
		this.fastMemory.evict(this.key);
		this.journal.clear();
		assertThat(this.store.find(this.key)).get().satisfies((record) -> assertThat(record.owner()).isEqualTo(owner));
		assertThat(this.journal).containsExactly("durable.find");
	}

	@Test
	void findFallsBackToFastTierWhenDurableTierFails() {
		completeFirstRequest();
		this.durable.setDown(true);
		assertThat(this.store.find(this.key)).get()
			.satisfies((record) -> assertThat(record.response()).isEqualTo(RESPONSE));
		this.fast.setDown(true);
		assertThatExceptionOfType(IdempotencyStoreException.class).isThrownBy(() -> this.store.find(this.key))
			.satisfies((ex) -> assertThat(ex.getSuppressed()).hasSize(1));
	}

	@Test
	void evictDeletesFromDurableTierFirstThenFastTier() {
		completeFirstRequest();
		this.journal.clear();
		assertThat(this.store.evict(this.key)).isTrue();
		assertThat(this.journal).containsExactly("durable.evict", "fast.evict");
		assertThat(this.fastMemory.find(this.key)).isEmpty();
		assertThat(this.durableMemory.find(this.key)).isEmpty();
		assertThat(this.store.evict(this.key)).isFalse();
	}

	@Test
	void evictReportsRecordHeldByOneTierOnly() {
		completeFirstRequest();
		this.fastMemory.evict(this.key);
		assertThat(this.store.evict(this.key)).isTrue();
		completeFirstRequest();
		this.durableMemory.evict(this.key);
		assertThat(this.store.evict(this.key)).isTrue();
	}

	@Test
	void evictFailsWhenFastTierFailsEvenWhileBreakerIsOpen() {
		completeFirstRequest();
		openBreaker();
		assertThatExceptionOfType(IdempotencyStoreException.class).isThrownBy(() -> this.store.evict(this.key));
		assertThat(this.durableMemory.find(this.key)).isEmpty();
		this.fast.setDown(false);
		assertThat(this.store.evict(this.key)).isTrue();
		assertThat(this.fastMemory.find(this.key)).isEmpty();
	}

	@Test
	void damagedFastCopyIsReplayedFromTheDurableTierAndDropped() {
		completeFirstRequest();
		TieredIdempotencyStore tiered = new TieredIdempotencyStore(new UnreadableResponses(this.fastMemory),
				this.durable);
		this.journal.clear();
		assertThat(tiered.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOfSatisfying(AcquireResult.Replay.class,
					(replay) -> assertThat(replay.response()).isEqualTo(RESPONSE));
		assertThat(this.journal).containsExactly("durable.find");
		// dropped, so that the next request copies the intact record back
		assertThat(this.fastMemory.find(this.key)).isEmpty();
		assertThat(this.store.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Replay.class);
		assertThat(this.fastMemory.find(this.key))
			.hasValueSatisfying((record) -> assertThat(record.response()).isEqualTo(RESPONSE));
	}

	@Test
	void damagedCopiesInBothTiersAreAnsweredAsUnreadable() {
		completeFirstRequest();
		TieredIdempotencyStore tiered = new TieredIdempotencyStore(new UnreadableResponses(this.fastMemory),
				new UnreadableResponses(this.durableMemory));
		assertThat(tiered.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOfSatisfying(AcquireResult.Replay.class,
					(replay) -> assertThat(replay.response()).isEqualTo(StoredResponse.unreadable()));
		assertThat(this.fastMemory.find(this.key)).isPresent();
	}

	@Test
	void unreadableDurableRecordIsNotCopiedIntoTheFastTier() {
		completeFirstRequest();
		this.fastMemory.evict(this.key);
		TieredIdempotencyStore tiered = new TieredIdempotencyStore(this.fast,
				new UnreadableResponses(this.durableMemory));
		this.journal.clear();
		assertThat(tiered.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOfSatisfying(AcquireResult.Replay.class,
					(replay) -> assertThat(replay.response()).isEqualTo(StoredResponse.unreadable()));
		assertThat(this.journal).containsExactly("fast.acquire", "fast.release");
		assertThat(this.fastMemory.find(this.key)).isEmpty();
	}

	private void completeFirstRequest() {
		OwnerToken token = OwnerToken.generate();
		assertThat(this.store.acquire(this.key, this.fingerprint, token, LEASE, TTL))
			.isEqualTo(new AcquireResult.Acquired(token));
		assertThat(this.store.complete(this.key, token, RESPONSE, TTL)).isTrue();
	}

	private void openBreaker() {
		this.fast.setDown(true);
		int failures = 0;
		while (this.store.getCircuitBreakerState() != CircuitBreakerState.OPEN) {
			this.store.acquire(newKey(), this.fingerprint, OwnerToken.generate(), LEASE, TTL);
			failures++;
		}
		// each failed claim but the one that opened the breaker is released in the
		// background: those releases must not be counted as the calls of what follows
		int released = failures - 1;
		await().atMost(Duration.ofSeconds(10)).until(() -> this.fast.calls("release") >= released);
	}

	@Test
	void asynchronousClaimCommitNeedsADurableTierThatOffersIt() {
		TieredIdempotencyStore store = new TieredIdempotencyStore(new InMemoryIdempotencyStore(),
				new InMemoryDurableTier());
		assertThat(store.getClaimCommit()).isEqualTo(ClaimCommit.SYNCHRONOUS);
		assertThatIllegalArgumentException().isThrownBy(() -> store.setClaimCommit(ClaimCommit.ASYNCHRONOUS))
			.withMessageContaining("AsynchronousClaimCommit")
			.withMessageContaining(InMemoryDurableTier.class.getName());
		assertThat(store.getClaimCommit()).isEqualTo(ClaimCommit.SYNCHRONOUS);
	}

	@Test
	void keyTheFastTierGrantedIsClaimedAsFreshInTheDurableTier() {
		FreshClaimsDurableTier durableTier = new FreshClaimsDurableTier();
		TieredIdempotencyStore tiered = new TieredIdempotencyStore(this.fast, durableTier);
		OwnerToken token = OwnerToken.generate();
		assertThat(tiered.acquire(this.key, this.fingerprint, token, LEASE, TTL))
			.isEqualTo(new AcquireResult.Acquired(token));
		assertThat(tiered.complete(this.key, token, RESPONSE, TTL)).isTrue();
		// the fast tier lost the record: it grants the key again, the durable tier
		// answers the replay all the same
		this.fastMemory.evict(this.key);
		assertThat(tiered.acquire(this.key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOfSatisfying(AcquireResult.Replay.class,
					(replay) -> assertThat(replay.response()).isEqualTo(RESPONSE));
		assertThat(durableTier.claims).containsExactly("acquireFresh", "acquireFresh");
		// a mismatch the fast tier reports is confirmed by a plain acquire, and while
		// the fast tier is down every claim is
		assertThat(tiered.acquire(this.key, fingerprint(2), OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Mismatch.class);
		this.fast.setDown(true);
		assertThat(tiered.acquire(newKey(), this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Acquired.class);
		assertThat(durableTier.claims).containsExactly("acquireFresh", "acquireFresh", "acquire", "acquire");
	}

	static IdempotencyKey newKey() {
		return IdempotencyKey.global("tiered-" + keys.incrementAndGet());
	}

	static RequestFingerprint fingerprint(int seed) {
		byte[] bytes = new byte[RequestFingerprint.LENGTH];
		bytes[0] = (byte) seed;
		return RequestFingerprint.of(bytes);
	}

	static final class RecordingListener implements TieredStoreListener {

		final List<String> fallbacks = Collections.synchronizedList(new ArrayList<>());

		final List<String> transitions = Collections.synchronizedList(new ArrayList<>());

		@Override
		public void onFallback(String operation, @Nullable Exception exception) {
			this.fallbacks.add(operation + ":" + ((exception != null) ? "failed" : "skipped"));
		}

		@Override
		public void onBreakerStateChange(CircuitBreakerState from, CircuitBreakerState to) {
			this.transitions.add(from + "->" + to);
		}

	}

	/**
	 * A durable tier with a claim for fresh keys, recording which claim each call made.
	 */
	private static final class FreshClaimsDurableTier extends ForwardingIdempotencyStore implements FreshKeyClaim {

		final List<String> claims = Collections.synchronizedList(new ArrayList<>());

		FreshClaimsDurableTier() {
			super(new InMemoryIdempotencyStore());
		}

		@Override
		public AcquireResult acquireFresh(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
				Duration lease, Duration ttl) {
			this.claims.add("acquireFresh");
			return delegate().acquire(key, fingerprint, token, lease, ttl);
		}

		@Override
		public AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
				Duration lease, Duration ttl) {
			this.claims.add("acquire");
			return delegate().acquire(key, fingerprint, token, lease, ttl);
		}

	}

	/**
	 * A store whose completed records have responses that cannot be decoded, as a store
	 * reports a damaged record.
	 */
	private static final class UnreadableResponses extends ForwardingIdempotencyStore {

		UnreadableResponses(IdempotencyStore delegate) {
			super(delegate);
		}

		@Override
		public AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
				Duration lease, Duration ttl) {
			AcquireResult result = delegate().acquire(key, fingerprint, token, lease, ttl);
			return (result instanceof AcquireResult.Replay replay)
					? new AcquireResult.Replay(StoredResponse.unreadable(), replay.expiresAt(), replay.timeToLive())
					: result;
		}

		@Override
		public Optional<IdempotencyRecord> find(IdempotencyKey key) {
			return delegate().find(key)
				.map((record) -> (record.response() != null) ? new IdempotencyRecord(record.key(), record.fingerprint(),
						record.status(), record.owner(), record.createdAt(), record.leaseExpiresAt(),
						record.expiresAt(), StoredResponse.unreadable(), record.timeToLive()) : record);
		}

	}

}
