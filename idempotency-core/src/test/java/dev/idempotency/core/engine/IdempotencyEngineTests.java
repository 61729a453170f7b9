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

package dev.idempotency.core.engine;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.core.HttpHeader;
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
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ExecutionMode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Tests for {@link IdempotencyEngine} and {@link Execution}. Each test has its own store
 * and engine, so they run side by side: several wait out a lease or a heartbeat, and one
 * after the other they kept a test JVM waiting for about twelve seconds.
 *
 * @author Idempotency contributors
 */
@org.junit.jupiter.api.parallel.Execution(ExecutionMode.CONCURRENT)
class IdempotencyEngineTests {

	private static final IdempotencyPolicy POLICY = IdempotencyPolicy.defaults();

	private static final IdempotencyPolicy SHORT_LEASE = IdempotencyPolicy.builder()
		.lockTimeout(Duration.ofMillis(300))
		.build();

	private final InMemoryIdempotencyStore memory = new InMemoryIdempotencyStore();

	private final ControllableStore store = new ControllableStore(this.memory);

	private final IdempotencyEngine engine = new IdempotencyEngine(this.store);

	@AfterEach
	void closeEngine() {
		this.engine.close();
	}

	@Test
	void firstRequestExecutesAndRetryReplays() {
		IdempotencyKey key = newKey();
		Execution execution = execute(key, "a", POLICY);
		StoredResponse response = response(201, "created");
		assertThat(execution.complete(response)).isEqualTo(CompletionOutcome.STORED);
		assertThat(execution.outcome()).contains(CompletionOutcome.STORED);
		Decision retry = this.engine.begin(key, fingerprint("a"), POLICY);
		assertThat(retry).isInstanceOf(Decision.Replay.class);
		assertThat(((Decision.Replay) retry).response()).isEqualTo(response);
	}

	@Test
	void otherFingerprintIsMismatch() {
		IdempotencyKey key = newKey();
		execute(key, "a", POLICY);
		assertThat(this.engine.begin(key, fingerprint("b"), POLICY)).isInstanceOf(Decision.Mismatch.class);
	}

	@Test
	void duplicateWhileRunningIsInProgressWithWholeSecondsRetryAfter() {
		IdempotencyKey key = newKey();
		execute(key, "a", POLICY);
		Decision duplicate = this.engine.begin(key, fingerprint("a"), POLICY);
		assertThat(duplicate).isInstanceOf(Decision.InProgress.class);
		Duration retryAfter = ((Decision.InProgress) duplicate).retryAfter();
		assertThat(retryAfter.getNano()).isZero();
		assertThat(retryAfter).isBetween(Duration.ofSeconds(1), POLICY.lockTimeout());
	}

	@Test
	void tryBeginDecidesNothingWhileTheWaitGoesOnAndTellsTheListenerOnlyTheFinalDecision() {
		IdempotencyKey key = newKey();
		Execution owner = execute(key, "a", POLICY);
		List<Decision> told = new CopyOnWriteArrayList<>();
		this.engine.setListener(new IdempotencyListener() {

			@Override
			public void onDecision(IdempotencyKey decided, IdempotencyPolicy policy, Decision decision) {
				told.add(decision);
			}

		});
		long waitDeadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
		assertThat(this.engine.tryBegin(key, fingerprint("a"), POLICY, waitDeadline)).isNull();
		assertThat(told).isEmpty();
		assertThat(IdempotencyEngine.inFlightPollMillis(1, waitDeadline)).isEqualTo(10);
		assertThat(IdempotencyEngine.inFlightPollMillis(3, waitDeadline)).isEqualTo(40);
		assertThat(IdempotencyEngine.inFlightPollMillis(40, waitDeadline)).isEqualTo(250);
		assertThat(IdempotencyEngine.inFlightPollMillis(40, System.nanoTime())).isEqualTo(1);
		// the wait is over: the key still in progress is the decision
		Decision ended = this.engine.tryBegin(key, fingerprint("a"), POLICY, System.nanoTime());
		assertThat(ended).isInstanceOf(Decision.InProgress.class);
		owner.complete(response(201, "created"));
		Decision replay = this.engine.tryBegin(key, fingerprint("a"), POLICY, waitDeadline);
		assertThat(replay).isInstanceOf(Decision.Replay.class);
		assertThat(told).containsExactly(ended, replay);
	}

	@Test
	void inProgressRetryAfterIsOneSecondByDefaultNotTheRemainingLease() {
		IdempotencyKey key = newKey();
		execute(key, "a", POLICY);
		Decision duplicate = this.engine.begin(key, fingerprint("a"), POLICY);
		assertThat(((Decision.InProgress) duplicate).retryAfter()).isEqualTo(Duration.ofSeconds(1));
	}

	@Test
	void inProgressRetryAfterIsConfigurableInWholeSeconds() {
		IdempotencyKey key = newKey();
		IdempotencyPolicy policy = IdempotencyPolicy.builder().inProgressRetryAfter(Duration.ofMillis(4200)).build();
		execute(key, "a", policy);
		Decision duplicate = this.engine.begin(key, fingerprint("a"), policy);
		assertThat(((Decision.InProgress) duplicate).retryAfter()).isEqualTo(Duration.ofSeconds(5));
		IdempotencyPolicy zero = IdempotencyPolicy.builder().inProgressRetryAfter(Duration.ZERO).build();
		Decision again = this.engine.begin(key, fingerprint("a"), zero);
		assertThat(((Decision.InProgress) again).retryAfter()).isEqualTo(Duration.ofSeconds(1));
	}

	@Test
	void inProgressRetryAfterIsNeverLongerThanTheRemainingLease() {
		IdempotencyKey key = newKey();
		IdempotencyPolicy policy = IdempotencyPolicy.builder()
			.lockTimeout(Duration.ofSeconds(3))
			.inProgressRetryAfter(Duration.ofMinutes(1))
			.build();
		execute(key, "a", policy);
		Decision duplicate = this.engine.begin(key, fingerprint("a"), policy);
		// the lease is 3 seconds and a heartbeat may just have renewed it
		assertThat(((Decision.InProgress) duplicate).retryAfter()).isBetween(Duration.ofSeconds(1),
				Duration.ofSeconds(3));
	}

	@Test
	void inProgressRetryAfterOfAnOwnerKnownToBeGoneIsTheStoresWaitAtMostTheLockTimeout() {
		IdempotencyPolicy policy = IdempotencyPolicy.builder().lockTimeout(Duration.ofSeconds(4)).build();
		// a takeover's confirmation: nothing frees the key before it
		assertThat(IdempotencyEngine.inProgressRetryAfter(policy,
				new AcquireResult.InProgress(Duration.ofMillis(3200), true)))
			.isEqualTo(Duration.ofSeconds(4));
		assertThat(IdempotencyEngine.inProgressRetryAfter(policy,
				new AcquireResult.InProgress(Duration.ofMillis(1500), true)))
			.isEqualTo(Duration.ofSeconds(2));
		// never more than the policy allows, never less than a second
		assertThat(IdempotencyEngine.inProgressRetryAfter(policy,
				new AcquireResult.InProgress(Duration.ofSeconds(9), true)))
			.isEqualTo(Duration.ofSeconds(4));
		assertThat(IdempotencyEngine.inProgressRetryAfter(policy,
				new AcquireResult.InProgress(Duration.ofMillis(200), true)))
			.isEqualTo(Duration.ofSeconds(1));
		// a live owner usually ends long before its lease
		assertThat(IdempotencyEngine.inProgressRetryAfter(policy,
				new AcquireResult.InProgress(Duration.ofMillis(3200), false)))
			.isEqualTo(Duration.ofSeconds(1));
	}

	@Test
	void negativeInProgressRetryAfterIsRefused() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> IdempotencyPolicy.builder().inProgressRetryAfter(Duration.ofSeconds(-1)).build());
	}

	@Test
	void heartbeatKeepsTheLeaseOfASlowHandler() throws InterruptedException {
		// a beat every 500 ms: a beat may come a whole second late, as on a busy
		// machine, before the lease lapses
		IdempotencyPolicy lease = IdempotencyPolicy.builder().lockTimeout(Duration.ofMillis(1500)).build();
		IdempotencyKey key = newKey();
		Execution execution = execute(key, "a", lease);
		// the handler runs four times longer than its lease
		for (int i = 0; i < 6; i++) {
			Thread.sleep(1000);
			assertThat(this.engine.begin(key, fingerprint("a"), lease)).isInstanceOf(Decision.InProgress.class);
		}
		assertThat(this.store.extendCalls.get()).isGreaterThanOrEqualTo(3);
		assertThat(execution.isOwnershipLost()).isFalse();
		assertThat(execution.complete(response(200, "slow"))).isEqualTo(CompletionOutcome.STORED);
	}

	@Test
	void aHungHandlerStopsRenewingItsLeaseAfterTheMaxExecutionTimeAndIsTakenOver() throws InterruptedException {
		IdempotencyKey key = newKey();
		// the default maximum: ten lock timeouts, 3 s
		Execution hung = execute(key, "a", SHORT_LEASE);
		long started = System.nanoTime();
		Decision decision = this.engine.begin(key, fingerprint("a"), SHORT_LEASE);
		while (!(decision instanceof Decision.Execute) && System.nanoTime() - started < 8_000_000_000L) {
			assertThat(decision).isInstanceOf(Decision.InProgress.class);
			Thread.sleep(100);
			decision = this.engine.begin(key, fingerprint("a"), SHORT_LEASE);
		}
		long waitedMillis = (System.nanoTime() - started) / 1_000_000;
		assertThat(decision).isInstanceOf(Decision.Execute.class);
		assertThat(waitedMillis).isGreaterThanOrEqualTo(3000);
		Execution takeover = ((Decision.Execute) decision).execution();
		assertThat(takeover.complete(response(200, "second"))).isEqualTo(CompletionOutcome.STORED);
		// the hung handler ends at last: fenced
		assertThat(hung.complete(response(200, "first"))).isEqualTo(CompletionOutcome.FENCED);
	}

	@Test
	void theMaxExecutionTimeIsTenLockTimeoutsByDefaultAndCanBeSet() {
		assertThat(IdempotencyPolicy.defaults().maxExecutionTime()).isEqualTo(Duration.ofMinutes(5));
		assertThat(SHORT_LEASE.maxExecutionTime()).isEqualTo(Duration.ofSeconds(3));
		assertThat(IdempotencyPolicy.builder().maxExecutionTime(Duration.ofHours(1)).build().maxExecutionTime())
			.isEqualTo(Duration.ofHours(1));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> IdempotencyPolicy.builder().maxExecutionTime(Duration.ZERO).build());
	}

	@Test
	void transactionalExecutionRenewsNoLease() throws InterruptedException {
		IdempotencyPolicy transactional = IdempotencyPolicy.builder()
			.name("transactional")
			.lockTimeout(Duration.ofMillis(300))
			.ttl(Duration.ofMinutes(1))
			.transactional(true)
			.build();
		IdempotencyKey key = newKey();
		Execution execution = execute(key, "a", transactional);
		// three leases long: a heartbeat would have renewed it at least twice by now
		Thread.sleep(900);
		assertThat(this.store.extendCalls.get()).isZero();
		assertThat(execution.complete(response(201, "done"))).isEqualTo(CompletionOutcome.STORED);
		assertThat(this.store.extendCalls.get()).isZero();
	}

	@Test
	void storeThatFailedBeforeBeginIsAnsweredByTheFailureMode() {
		IdempotencyStoreException failure = new IdempotencyStoreException("no connection");
		Decision closed = this.engine.storeFailed(newKey(), POLICY, failure);
		assertThat(closed).isInstanceOf(Decision.Unavailable.class);
		assertThat(((Decision.Unavailable) closed).retryAfter()).isEqualTo(Duration.ofSeconds(1));
		IdempotencyPolicy open = IdempotencyPolicy.builder().onStoreFailure(StoreFailureMode.FAIL_OPEN).build();
		assertThat(this.engine.storeFailed(newKey(), open, failure)).isInstanceOf(Decision.Unprotected.class);
	}

	@Test
	void handlerThatThrowsReleasesTheKey() {
		IdempotencyKey key = newKey();
		try (Execution execution = execute(key, "a", POLICY)) {
			throw new IllegalStateException("handler failed");
		}
		catch (IllegalStateException ex) {
			assertThat(ex).hasMessage("handler failed");
		}
		assertThat(this.memory.find(key)).isEmpty();
		assertThat(this.engine.begin(key, fingerprint("a"), POLICY)).isInstanceOf(Decision.Execute.class);
	}

	@Test
	void nonStorableStatusesReleaseTheKey() {
		for (int status : new int[] { 500, 502, 503, 504, 408, 429 }) {
			IdempotencyKey key = newKey();
			Execution execution = execute(key, "a", POLICY);
			assertThat(execution.complete(response(status, "transient"))).as("status %d", status)
				.isEqualTo(CompletionOutcome.RELEASED);
			assertThat(this.engine.begin(key, fingerprint("a"), POLICY)).as("status %d", status)
				.isInstanceOf(Decision.Execute.class);
		}
	}

	@Test
	void deterministicClientErrorsAreStored() {
		for (int status : new int[] { 400, 402, 404, 409, 422 }) {
			IdempotencyKey key = newKey();
			assertThat(execute(key, "a", POLICY).complete(response(status, "rejected")))
				.isEqualTo(CompletionOutcome.STORED);
			assertThat(this.engine.begin(key, fingerprint("a"), POLICY)).isInstanceOf(Decision.Replay.class);
		}
	}

	@Test
	void ownerWhoseLeaseWasTakenOverIsFencedOut() throws Exception {
		IdempotencyKey key = newKey();
		List<String> events = new CopyOnWriteArrayList<>();
		this.engine.setListener(new IdempotencyListener() {

			@Override
			public void onOwnershipLost(IdempotencyKey lost, IdempotencyPolicy policy) {
				events.add("lost");
			}

			@Override
			public void onCompletion(IdempotencyKey completed, IdempotencyPolicy policy, CompletionOutcome outcome) {
				events.add(outcome.name());
			}

		});
		this.store.failExtend = true;
		Execution old = execute(key, "a", SHORT_LEASE);
		Thread.sleep(700);
		try (IdempotencyEngine other = new IdempotencyEngine(this.memory)) {
			Execution current = execute(other, key, "a", SHORT_LEASE);
			this.store.failExtend = false;
			awaitOwnershipLost(old);
			// the heartbeat's thread marks the loss before it tells the listener
			for (int i = 0; i < 100 && !events.contains("lost"); i++) {
				Thread.sleep(50);
			}
			assertThat(old.complete(response(200, "late"))).isEqualTo(CompletionOutcome.FENCED);
			assertThat(current.complete(response(201, "current"))).isEqualTo(CompletionOutcome.STORED);
		}
		Decision replay = this.engine.begin(key, fingerprint("a"), POLICY);
		assertThat(((Decision.Replay) replay).response().bodyBytes()).isEqualTo(bytes("current"));
		assertThat(events).containsSubsequence("lost", "FENCED");
	}

	@Test
	void storeFailureFailsClosedByDefault() {
		this.store.failAcquire = true;
		Decision decision = this.engine.begin(newKey(), fingerprint("a"), POLICY);
		assertThat(decision).isInstanceOf(Decision.Unavailable.class);
		assertThat(((Decision.Unavailable) decision).retryAfter()).isEqualTo(Duration.ofSeconds(1));
	}

	@Test
	void storeFailureCanFailOpen() {
		this.store.failAcquire = true;
		IdempotencyPolicy open = IdempotencyPolicy.builder().onStoreFailure(StoreFailureMode.FAIL_OPEN).build();
		assertThat(this.engine.begin(newKey(), fingerprint("a"), open)).isInstanceOf(Decision.Unprotected.class);
	}

	@Test
	void failedCompletionIsRetriedThenReported() {
		IdempotencyKey key = newKey();
		Execution execution = execute(key, "a", POLICY);
		this.store.failComplete = 2;
		assertThat(execution.complete(response(201, "ok"))).isEqualTo(CompletionOutcome.STORED);
		IdempotencyKey other = newKey();
		Execution failing = execute(other, "a", POLICY);
		this.store.failComplete = 10;
		assertThat(failing.complete(response(201, "ok"))).isEqualTo(CompletionOutcome.FAILED);
	}

	@Test
	void failedCompletionOfATransactionalPolicyIsTriedOnceAndReportsItsOwnFailure() {
		IdempotencyPolicy transactional = IdempotencyPolicy.builder()
			.name("transactional")
			.ttl(Duration.ofMinutes(1))
			.transactional(true)
			.build();
		Execution execution = execute(newKey(), "a", transactional);
		// one failure, which the default mode's second attempt would get past: in the
		// caller's aborted transaction a second attempt can only fail again
		this.store.failComplete = 1;
		assertThat(execution.complete(response(201, "ok"))).isEqualTo(CompletionOutcome.FAILED);
		assertThat(this.store.failComplete).as("attempts left unmade").isZero();
		assertThat(execution.failure()).hasValueSatisfying((failure) -> assertThat(failure).hasMessage("store down"));
	}

	@Test
	void inFlightWaitAnswersWithTheFirstResponse() throws Exception {
		IdempotencyKey key = newKey();
		Execution first = execute(key, "a", POLICY);
		IdempotencyPolicy waiting = IdempotencyPolicy.builder().inFlightWait(Duration.ofSeconds(5)).build();
		CompletableFuture<Decision> duplicate = CompletableFuture
			.supplyAsync(() -> this.engine.begin(key, fingerprint("a"), waiting));
		Thread.sleep(150);
		assertThat(duplicate).isNotDone();
		first.complete(response(201, "first"));
		Decision decision = duplicate.get(5, TimeUnit.SECONDS);
		assertThat(decision).isInstanceOf(Decision.Replay.class);
		assertThat(((Decision.Replay) decision).response().bodyBytes()).isEqualTo(bytes("first"));
	}

	@Test
	void duplicatesWaitingForOneKeyTakeTurnsAtTheStore() throws Exception {
		IdempotencyKey key = newKey();
		Execution first = execute(key, "a", POLICY);
		Duration wait = Duration.ofMillis(600);
		IdempotencyPolicy waiting = IdempotencyPolicy.builder().inFlightWait(wait).build();
		int duplicates = 50;
		ExecutorService executor = Executors.newFixedThreadPool(duplicates);
		long start = System.nanoTime();
		long elapsed;
		try {
			this.store.acquireCalls.set(0);
			List<Future<Decision>> answers = new ArrayList<>();
			for (int i = 0; i < duplicates; i++) {
				answers.add(executor.submit(() -> this.engine.begin(key, fingerprint("a"), waiting)));
			}
			for (Future<Decision> answer : answers) {
				assertThat(answer.get(10, TimeUnit.SECONDS)).isInstanceOf(Decision.InProgress.class);
			}
			elapsed = System.nanoTime() - start;
		}
		finally {
			executor.shutdownNow();
		}
		// each duplicate's first try and its last (past its deadline), and between them
		// one try of the key per turn, however slowly the threads started: polling on
		// its own, each would have made eight (10, 20, 40, 80, 160 and 250 ms apart)
		long turns = elapsed / IdempotencyEngine.POLL_SPACING_NANOS + 1;
		assertThat(this.store.acquireCalls.get()).isLessThanOrEqualTo(2 * duplicates + (int) turns);
		first.complete(response(201, "first"));
		assertThat(this.engine.begin(key, fingerprint("a"), waiting)).isInstanceOf(Decision.Replay.class);
	}

	@Test
	void afterAReplayTheWaitingDuplicatesTryAtOnceInsteadOfTakingTurns() throws Exception {
		this.engine.setPollSpacing(Duration.ofMinutes(5));
		IdempotencyKey key = newKey();
		Execution first = execute(key, "a", POLICY);
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		// a waiting duplicate's later try takes the key's turn
		assertThat(this.engine.tryBegin(key, fingerprint("a"), POLICY, deadline, 2)).isNull();
		first.complete(response(201, "first"));
		// a new request finds the replay
		assertThat(this.engine.tryBegin(key, fingerprint("a"), POLICY, deadline)).isInstanceOf(Decision.Replay.class);
		// a waiting duplicate's try is under way at the store, slowly...
		CountDownLatch gate = new CountDownLatch(1);
		this.store.acquireGate = gate;
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			Future<Decision> slow = executor
				.submit(() -> this.engine.tryBegin(key, fingerprint("a"), POLICY, deadline, 3));
			long waitedFor = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
			while (!this.store.acquireGateTaken.get() && System.nanoTime() < waitedFor) {
				Thread.sleep(1);
			}
			assertThat(this.store.acquireGateTaken).as("the slow try at the store").isTrue();
			// ...and another one goes to the store too, rather than wait for a turn: the
			// key's request has ended, so there is no heartbeat to leave connections for
			this.store.acquireCalls.set(0);
			assertThat(this.engine.tryBegin(key, fingerprint("a"), POLICY, deadline, 3))
				.isInstanceOf(Decision.Replay.class);
			assertThat(this.store.acquireCalls.get()).isOne();
			gate.countDown();
			assertThat(slow.get(10, TimeUnit.SECONDS)).isInstanceOf(Decision.Replay.class);
		}
		finally {
			gate.countDown();
			executor.shutdownNow();
		}
	}

	@Test
	void laterTriesWithinTheWaitMayBeDeferredButTheFirstAndTheLastAskTheStore() {
		this.engine.setPollSpacing(Duration.ofMinutes(5));
		IdempotencyKey key = newKey();
		execute(key, "a", POLICY);
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		// a second try takes the key's turn, and the next one within the spacing waits
		assertThat(this.engine.tryBegin(key, fingerprint("a"), POLICY, deadline, 2)).isNull();
		this.store.acquireCalls.set(0);
		assertThat(this.engine.tryBegin(key, fingerprint("a"), POLICY, deadline, 3)).isNull();
		assertThat(this.store.acquireCalls.get()).as("a try within the key's turn").isZero();
		// a first try always asks, and so does a try past the deadline, which answers
		assertThat(this.engine.tryBegin(key, fingerprint("a"), POLICY, deadline)).isNull();
		assertThat(this.store.acquireCalls.get()).isOne();
		assertThat(this.engine.tryBegin(key, fingerprint("a"), POLICY, System.nanoTime() - 1, 4))
			.isInstanceOf(Decision.InProgress.class);
		assertThat(this.store.acquireCalls.get()).isEqualTo(2);
	}

	@Test
	void inFlightWaitGivesUpAfterItsLimit() {
		IdempotencyKey key = newKey();
		execute(key, "a", POLICY);
		IdempotencyPolicy waiting = IdempotencyPolicy.builder().inFlightWait(Duration.ofMillis(200)).build();
		long start = System.nanoTime();
		assertThat(this.engine.begin(key, fingerprint("a"), waiting)).isInstanceOf(Decision.InProgress.class);
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(200));
	}

	@Test
	void anExecutionEndsOnce() {
		Execution execution = execute(newKey(), "a", POLICY);
		execution.complete(response(200, "ok"));
		assertThatIllegalStateException().isThrownBy(() -> execution.complete(response(200, "again")));
		assertThatIllegalStateException().isThrownBy(execution::release);
		execution.close();
		assertThat(execution.outcome()).contains(CompletionOutcome.STORED);
	}

	@Test
	void advertisedExpiryIsNowPlusTtl() {
		Execution execution = execute(newKey(), "a", POLICY);
		assertThat(execution.advertisedExpiry()).isBetween(Instant.now().plus(POLICY.ttl()).minusSeconds(1),
				Instant.now().plus(POLICY.ttl()).plusSeconds(1));
	}

	@Test
	void throwingListenerNeitherChangesTheOutcomeNorHoldsTheKey() {
		ThrowingListener listener = new ThrowingListener();
		this.engine.setListener(listener);
		IdempotencyKey key = newKey();
		Execution execution = execute(key, "a", POLICY);
		StoredResponse response = response(201, "created");
		assertThat(execution.complete(response)).isEqualTo(CompletionOutcome.STORED);
		assertThat(this.memory.find(key))
			.hasValueSatisfying((record) -> assertThat(record.status()).isEqualTo(IdempotencyStatus.COMPLETED));
		Decision retry = this.engine.begin(key, fingerprint("a"), POLICY);
		assertThat(retry).isInstanceOf(Decision.Replay.class);
		assertThat(((Decision.Replay) retry).response()).isEqualTo(response);
		assertThat(listener.calls).containsExactly("decision", "completion", "decision");
	}

	@Test
	void throwingListenerLetsAFailedHandlerReleaseTheKey() {
		ThrowingListener listener = new ThrowingListener();
		this.engine.setListener(listener);
		IdempotencyKey key = newKey();
		execute(key, "a", POLICY).close();
		assertThat(this.memory.find(key)).isEmpty();
		execute(key, "a", POLICY).release();
		assertThat(this.memory.find(key)).isEmpty();
	}

	@Test
	void throwingListenerDoesNotChangeStoreFailureDecisions() {
		ThrowingListener listener = new ThrowingListener();
		this.engine.setListener(listener);
		this.store.failAcquire = true;
		assertThat(this.engine.begin(newKey(), fingerprint("a"), POLICY)).isInstanceOf(Decision.Unavailable.class);
		this.store.failAcquire = false;
		IdempotencyKey key = newKey();
		Execution execution = execute(key, "a", POLICY);
		this.store.failComplete = 1;
		assertThat(execution.complete(response(201, "ok"))).isEqualTo(CompletionOutcome.STORED);
		assertThat(this.engine.begin(key, fingerprint("a"), POLICY)).isInstanceOf(Decision.Replay.class);
		assertThat(listener.calls).contains("store-failure:acquire", "store-failure:complete");
	}

	@Test
	void throwingListenerIsToldOfLostOwnershipAndTheExecutionIsFenced() throws Exception {
		ThrowingListener listener = new ThrowingListener();
		this.engine.setListener(listener);
		IdempotencyKey key = newKey();
		this.store.failExtend = true;
		Execution old = execute(key, "a", SHORT_LEASE);
		Thread.sleep(700);
		try (IdempotencyEngine other = new IdempotencyEngine(this.memory)) {
			Execution current = execute(other, key, "a", SHORT_LEASE);
			this.store.failExtend = false;
			awaitOwnershipLost(old);
			assertThat(old.complete(response(200, "late"))).isEqualTo(CompletionOutcome.FENCED);
			assertThat(current.complete(response(201, "current"))).isEqualTo(CompletionOutcome.STORED);
		}
		assertThat(listener.calls).contains("store-failure:extend", "ownership-lost");
	}

	private Execution execute(IdempotencyKey key, String fingerprint, IdempotencyPolicy policy) {
		return execute(this.engine, key, fingerprint, policy);
	}

	private static Execution execute(IdempotencyEngine engine, IdempotencyKey key, String fingerprint,
			IdempotencyPolicy policy) {
		Decision decision = engine.begin(key, fingerprint(fingerprint), policy);
		assertThat(decision).isInstanceOf(Decision.Execute.class);
		return ((Decision.Execute) decision).execution();
	}

	private static void awaitOwnershipLost(Execution execution) throws InterruptedException {
		for (int i = 0; i < 50 && !execution.isOwnershipLost(); i++) {
			Thread.sleep(50);
		}
		assertThat(execution.isOwnershipLost()).isTrue();
	}

	private static IdempotencyKey newKey() {
		return IdempotencyKey.global(UUID.randomUUID().toString());
	}

	private static RequestFingerprint fingerprint(String text) {
		byte[] bytes = new byte[RequestFingerprint.LENGTH];
		bytes[0] = (byte) text.hashCode();
		bytes[1] = (byte) (text.hashCode() >> 8);
		return RequestFingerprint.of(bytes);
	}

	private static StoredResponse response(int status, String body) {
		return new StoredResponse(status, List.of(new HttpHeader("Content-Type", "text/plain")), bytes(body));
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	/**
	 * Listener that records each call and then throws, as a broken metrics or tracing
	 * listener would.
	 */
	static final class ThrowingListener implements IdempotencyListener {

		final List<String> calls = new CopyOnWriteArrayList<>();

		@Override
		public void onDecision(IdempotencyKey key, IdempotencyPolicy policy, Decision decision) {
			this.calls.add("decision");
			throw new IllegalStateException("listener failed on decision");
		}

		@Override
		public void onCompletion(IdempotencyKey key, IdempotencyPolicy policy, CompletionOutcome outcome) {
			this.calls.add("completion");
			throw new IllegalStateException("listener failed on completion");
		}

		@Override
		public void onOwnershipLost(IdempotencyKey key, IdempotencyPolicy policy) {
			this.calls.add("ownership-lost");
			throw new IllegalStateException("listener failed on ownership lost");
		}

		@Override
		public void onStoreFailure(IdempotencyKey key, String operation, IdempotencyStoreException failure) {
			this.calls.add("store-failure:" + operation);
			throw new IllegalStateException("listener failed on store failure");
		}

	}

	/**
	 * Store that delegates to a real in-memory store and fails on command.
	 */
	static final class ControllableStore implements IdempotencyStore {

		private final IdempotencyStore delegate;

		volatile boolean failAcquire;

		volatile boolean failExtend;

		volatile int failComplete;

		final AtomicInteger extendCalls = new AtomicInteger();

		final AtomicInteger acquireCalls = new AtomicInteger();

		final AtomicInteger maxConcurrentExtends = new AtomicInteger();

		private final AtomicInteger concurrentExtends = new AtomicInteger();

		// when set, extensions wait for it to open (at most 5 seconds)
		volatile @Nullable CountDownLatch extendGate;

		// when set, the next acquisition waits for it to open (at most 5 seconds)
		volatile @Nullable CountDownLatch acquireGate;

		final AtomicBoolean acquireGateTaken = new AtomicBoolean();

		ControllableStore(IdempotencyStore delegate) {
			this.delegate = delegate;
		}

		@Override
		public AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
				Duration lease, Duration ttl) {
			this.acquireCalls.incrementAndGet();
			if (this.failAcquire) {
				throw new IdempotencyStoreException("store down");
			}
			CountDownLatch gate = this.acquireGate;
			if (gate != null && this.acquireGateTaken.compareAndSet(false, true)) {
				try {
					if (!gate.await(5, TimeUnit.SECONDS)) {
						throw new IdempotencyStoreException("acquisition gate never opened");
					}
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new IdempotencyStoreException("interrupted", ex);
				}
			}
			return this.delegate.acquire(key, fingerprint, token, lease, ttl);
		}

		@Override
		public boolean complete(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
			if (this.failComplete > 0) {
				this.failComplete--;
				throw new IdempotencyStoreException("store down");
			}
			return this.delegate.complete(key, token, response, ttl);
		}

		@Override
		public boolean release(IdempotencyKey key, OwnerToken token) {
			return this.delegate.release(key, token);
		}

		@Override
		public boolean extend(IdempotencyKey key, OwnerToken token, Duration lease) {
			if (this.failExtend) {
				throw new IdempotencyStoreException("store paused");
			}
			this.extendCalls.incrementAndGet();
			this.maxConcurrentExtends.accumulateAndGet(this.concurrentExtends.incrementAndGet(), Math::max);
			try {
				CountDownLatch gate = this.extendGate;
				if (gate != null && !gate.await(5, TimeUnit.SECONDS)) {
					throw new IdempotencyStoreException("extension gate never opened");
				}
				return this.delegate.extend(key, token, lease);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IdempotencyStoreException("interrupted", ex);
			}
			finally {
				this.concurrentExtends.decrementAndGet();
			}
		}

		@Override
		public Optional<IdempotencyRecord> find(IdempotencyKey key) {
			return this.delegate.find(key);
		}

		@Override
		public boolean evict(IdempotencyKey key) {
			return this.delegate.evict(key);
		}

	}

}
