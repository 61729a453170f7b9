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
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledThreadPoolExecutor;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.InMemoryIdempotencyStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link Heartbeats}: one sweep for every execution, beats only for executions
 * that outlive a period, never two beats of one execution at once.
 *
 * @author Idempotency contributors
 */
class HeartbeatsTests {

	private static final IdempotencyPolicy SHORT_LEASE = IdempotencyPolicy.builder()
		.lockTimeout(Duration.ofMillis(300))
		.build();

	private final ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(2);

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
		assertThat(this.scheduler.getQueue()).hasSize(1);
		for (Execution execution : executions) {
			execution.complete(new StoredResponse(200, List.of(), new byte[0]));
		}
		assertThat(this.engine.heartbeats().size()).isZero();
		assertThat(this.scheduler.getQueue()).hasSize(1);
	}

	@Test
	void executionThatEndsBeforeItsFirstBeatIsNeverBeaten() throws InterruptedException {
		this.release.countDown();
		Execution execution = begin(SHORT_LEASE);
		execution.complete(new StoredResponse(200, List.of(), new byte[0]));
		Thread.sleep(400);
		assertThat(this.store.extendCalls).hasValue(0);
	}

	@Test
	void longRunningExecutionIsBeatenAboutOncePerPeriod() throws InterruptedException {
		this.release.countDown();
		Execution execution = begin(SHORT_LEASE);
		// period 100 ms, swept every 25 ms: about 9 beats in 950 ms; fewer only on a busy
		// machine
		Thread.sleep(950);
		execution.complete(new StoredResponse(200, List.of(), new byte[0]));
		assertThat(this.store.extendCalls.get()).isBetween(4, 10);
		assertThat(execution.isOwnershipLost()).isFalse();
	}

	@Test
	void shorterLeaseThanAnySeenBeforeSpeedsUpTheSweep() throws InterruptedException {
		this.release.countDown();
		// a 30 s lock timeout first: swept every 2.5 s
		Execution slow = begin(IdempotencyPolicy.defaults());
		Execution fast = begin(SHORT_LEASE);
		Thread.sleep(600);
		assertThat(this.store.extendCalls.get()).isGreaterThanOrEqualTo(3);
		assertThat(this.scheduler.getQueue()).hasSize(1);
		fast.release();
		slow.release();
	}

	@Test
	void beatStillRunningWhenTheNextFallsDueIsNotDoubled() throws InterruptedException {
		Execution execution = begin(SHORT_LEASE);
		// the first beat blocks in the store for 4 periods
		Thread.sleep(450);
		assertThat(this.store.extendCalls).hasValue(1);
		this.release.countDown();
		Thread.sleep(250);
		execution.complete(new StoredResponse(200, List.of(), new byte[0]));
		assertThat(this.store.maxConcurrentExtends).hasValue(1);
		assertThat(this.store.extendCalls.get()).isGreaterThanOrEqualTo(2);
	}

	@Test
	void executionStartedAfterTheEngineClosedRunsWithoutHeartbeat() {
		this.engine.close();
		this.scheduler.shutdownNow();
		Execution execution = begin(SHORT_LEASE);
		assertThat(execution.complete(new StoredResponse(201, List.of(), new byte[0])))
			.isEqualTo(CompletionOutcome.STORED);
	}

	private Execution begin(IdempotencyPolicy policy) {
		Decision decision = this.engine.begin(IdempotencyKey.global(UUID.randomUUID().toString()),
				RequestFingerprint.of(new byte[RequestFingerprint.LENGTH]), policy);
		assertThat(decision).isInstanceOf(Decision.Execute.class);
		return ((Decision.Execute) decision).execution();
	}

}
