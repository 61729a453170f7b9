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

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.InMemoryIdempotencyStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link Heartbeats}: one sweep for every execution, beats only for executions
 * that outlive a period, never two beats of one execution at once while the first is
 * useful, and a stuck renewal that delays no other key. Nothing here depends on how fast
 * the machine is: counts are awaited, not timed, and beat claims are given their times.
 *
 * @author Idempotency contributors
 */
class HeartbeatsTests {

	private static final IdempotencyPolicy SHORT_LEASE = IdempotencyPolicy.builder()
		.lockTimeout(Duration.ofMillis(300))
		.build();

	private static final Duration PATIENCE = Duration.ofSeconds(30);

	private final CountingScheduler scheduler = new CountingScheduler();

	private final CountDownLatch release = new CountDownLatch(1);

	private final IdempotencyEngineTests.ControllableStore store = new IdempotencyEngineTests.ControllableStore(
			new InMemoryIdempotencyStore());

	private final IdempotencyEngine engine = new IdempotencyEngine(this.store);

	HeartbeatsTests() {
		this.store.extendGate = this.release;
		this.scheduler.setRemoveOnCancelPolicy(true);
		this.engine.setHeartbeatScheduler(this.scheduler);
	}

	@AfterEach
	void shutDown() {
		this.release.countDown();
		this.engine.close();
		this.scheduler.shutdownNow();
	}

	@Test
	void oneScheduledSweepServesEveryRunningExecution() {
		List<Execution> executions = new ArrayList<>();
		for (int i = 0; i < 500; i++) {
			executions.add(begin(SHORT_LEASE));
		}
		assertThat(this.engine.heartbeats().size()).isEqualTo(500);
		assertThat(this.scheduler.sweepsScheduled).hasValue(1);
		for (Execution execution : executions) {
			execution.complete(new StoredResponse(200, List.of(), new byte[0]));
		}
		assertThat(this.engine.heartbeats().size()).isZero();
		assertThat(this.scheduler.sweepsScheduled).hasValue(1);
	}

	@Test
	void executionThatEndsBeforeItsFirstBeatIsNeverBeaten() {
		this.release.countDown();
		Execution execution = begin(SHORT_LEASE);
		execution.complete(new StoredResponse(200, List.of(), new byte[0]));
		// whenever the sweep runs, an ended execution is not in it, nor claimable
		this.engine.heartbeats().sweep();
		assertThat(execution.claimBeat(System.nanoTime() + TimeUnit.DAYS.toNanos(1))).isNull();
		assertThat(this.store.extendCalls).hasValue(0);
	}

	@Test
	void longRunningExecutionIsBeatenOncePerPeriodAndKeepsItsKey() throws InterruptedException {
		this.release.countDown();
		Execution execution = begin(SHORT_LEASE);
		awaitAtLeast(this.store.extendCalls, 4);
		execution.complete(new StoredResponse(200, List.of(), new byte[0]));
		assertThat(this.store.maxConcurrentExtends).hasValue(1);
		assertThat(execution.isOwnershipLost()).isFalse();
	}

	@Test
	void shorterLeaseThanAnySeenBeforeSpeedsUpTheSweep() throws InterruptedException {
		this.release.countDown();
		// a 30 s lock timeout first: swept every 2.5 s, far too rarely for a 300 ms lease
		Execution slow = begin(IdempotencyPolicy.defaults());
		Execution fast = begin(SHORT_LEASE);
		assertThat(this.scheduler.sweepsScheduled).hasValue(2);
		awaitAtLeast(this.store.extendCalls, 3);
		fast.release();
		slow.release();
	}

	@Test
	void beatIsNotDoubledWhileYoungerThanAPeriodAndIsAbandonedAfter() {
		Execution execution = begin(SHORT_LEASE);
		long period = execution.beatPeriodNanos();
		long start = System.nanoTime() + period;
		Execution.Beat first = execution.claimBeat(start);
		assertThat(first).isNotNull();
		// still running (never run, here) and younger than a period: not doubled
		assertThat(execution.claimBeat(start + period - 1)).isNull();
		// a period old: abandoned, the next beat starts
		Execution.Beat second = execution.claimBeat(start + period);
		assertThat(second).isNotNull().isNotSameAs(first);
		// the abandoned beat ending late does not free the slot of the running one
		first.abandon();
		assertThat(execution.claimBeat(start + period + period / 2)).isNull();
		second.abandon();
		assertThat(execution.claimBeat(start + 2 * period)).isNotNull();
	}

	@Test
	void twoBeatsRefusedTogetherLoseTheKeyOnce() throws InterruptedException {
		AtomicInteger lost = new AtomicInteger();
		this.engine.setListener(new IdempotencyListener() {

			@Override
			public void onOwnershipLost(IdempotencyKey key, IdempotencyPolicy policy) {
				lost.incrementAndGet();
			}

		});
		Execution execution = begin(SHORT_LEASE);
		long period = execution.beatPeriodNanos();
		long start = System.nanoTime() + period;
		// a slow beat, abandoned after a period
		// while its renewal still waits on the store
		Execution.Beat slow = execution.claimBeat(start);
		Execution.Beat next = execution.claimBeat(start + period);
		assertThat(slow).isNotNull();
		assertThat(next).isNotNull();
		Thread slowThread = new Thread(slow);
		Thread nextThread = new Thread(next);
		slowThread.start();
		nextThread.start();
		awaitAtLeast(this.store.extendCalls, 2);
		// the key vanishes: both renewals are refused at once
		assertThat(this.store.evict(execution.key())).isTrue();
		this.release.countDown();
		slowThread.join(PATIENCE.toMillis());
		nextThread.join(PATIENCE.toMillis());
		assertThat(execution.isOwnershipLost()).isTrue();
		assertThat(lost).hasValue(1);
		execution.release();
	}

	@Test
	void stuckRenewalsOfTwoKeysDelayNoOtherKey() throws InterruptedException {
		Duration lockTimeout = Duration.ofSeconds(1);
		IdempotencyPolicy policy = IdempotencyPolicy.builder().lockTimeout(lockTimeout).build();
		HangingStore hanging = new HangingStore();
		// the engine's own scheduler, as in production
		IdempotencyEngine engine = new IdempotencyEngine(hanging);
		try {
			Map<IdempotencyKey, Execution> healthy = new ConcurrentHashMap<>();
			for (int i = 0; i < 50; i++) {
				IdempotencyKey key = IdempotencyKey.global("key-" + i + "-" + UUID.randomUUID());
				if (i < 2) {
					hanging.hung.add(key);
				}
				Decision decision = engine.begin(key, RequestFingerprint.of(new byte[RequestFingerprint.LENGTH]),
						policy);
				Execution execution = ((Decision.Execute) decision).execution();
				if (i >= 2) {
					healthy.put(key, execution);
				}
			}
			// three lock timeouts: nine beats of every healthy key
			long deadline = System.nanoTime() + PATIENCE.toNanos();
			while (healthy.keySet().stream().anyMatch((key) -> hanging.extendCount(key) < 9)) {
				assertThat(System.nanoTime()).as("healthy keys still renewed while two renewals hang")
					.isLessThan(deadline);
				Thread.sleep(20);
			}
			assertThat(hanging.stuck.get()).as("hung renewals (abandoned ones included)").isGreaterThanOrEqualTo(2);
			for (Map.Entry<IdempotencyKey, Execution> entry : healthy.entrySet()) {
				assertThat(entry.getValue().isOwnershipLost()).isFalse();
				AcquireResult duplicate = hanging.acquire(entry.getKey(),
						RequestFingerprint.of(new byte[RequestFingerprint.LENGTH]), OwnerToken.generate(), lockTimeout,
						policy.ttl());
				assertThat(duplicate).as("duplicate of %s", entry.getKey())
					.isInstanceOf(AcquireResult.InProgress.class);
			}
		}
		finally {
			hanging.unblock.countDown();
			engine.close();
		}
	}

	private static void awaitAtLeast(AtomicInteger counter, int count) throws InterruptedException {
		long deadline = System.nanoTime() + PATIENCE.toNanos();
		while (counter.get() < count) {
			assertThat(System.nanoTime()).as("%d beats", count).isLessThan(deadline);
			Thread.sleep(10);
		}
	}

	private Execution begin(IdempotencyPolicy policy) {
		Decision decision = this.engine.begin(IdempotencyKey.global(UUID.randomUUID().toString()),
				RequestFingerprint.of(new byte[RequestFingerprint.LENGTH]), policy);
		assertThat(decision).isInstanceOf(Decision.Execute.class);
		return ((Decision.Execute) decision).execution();
	}

	/**
	 * Scheduler that counts the periodic sweeps scheduled on it.
	 */
	static final class CountingScheduler extends ScheduledThreadPoolExecutor {

		final AtomicInteger sweepsScheduled = new AtomicInteger();

		CountingScheduler() {
			super(1);
		}

		@Override
		public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay,
				TimeUnit unit) {
			this.sweepsScheduled.incrementAndGet();
			return super.scheduleWithFixedDelay(command, initialDelay, delay, unit);
		}

	}

	/**
	 * In-memory store whose renewals of some keys never return (until the test ends), as
	 * a store call does on a paused server without a socket time-out.
	 */
	static final class HangingStore extends InMemoryIdempotencyStore {

		final Set<IdempotencyKey> hung = ConcurrentHashMap.newKeySet();

		final CountDownLatch unblock = new CountDownLatch(1);

		final AtomicInteger stuck = new AtomicInteger();

		private final Map<IdempotencyKey, AtomicInteger> extendCounts = new ConcurrentHashMap<>();

		@Override
		public boolean extend(IdempotencyKey key, OwnerToken token, Duration lease) {
			if (this.hung.contains(key)) {
				this.stuck.incrementAndGet();
				// uninterruptibly, as a blocked socket read is
				boolean interrupted = false;
				while (this.unblock.getCount() > 0) {
					try {
						this.unblock.await();
					}
					catch (InterruptedException ex) {
						interrupted = true;
					}
				}
				if (interrupted) {
					Thread.currentThread().interrupt();
				}
			}
			boolean extended = super.extend(key, token, lease);
			this.extendCounts.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
			return extended;
		}

		int extendCount(IdempotencyKey key) {
			AtomicInteger count = this.extendCounts.get(key);
			return (count != null) ? count.get() : 0;
		}

	}

}
