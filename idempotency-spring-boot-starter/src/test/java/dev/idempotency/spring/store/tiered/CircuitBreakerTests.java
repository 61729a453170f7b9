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

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link CircuitBreaker}.
 *
 * @author Idempotency contributors
 */
class CircuitBreakerTests {

	private final MutableClock clock = new MutableClock();

	private final List<String> transitions = Collections.synchronizedList(new ArrayList<>());

	private final CircuitBreaker breaker = new CircuitBreaker((from, to) -> this.transitions.add(from + "->" + to));

	CircuitBreakerTests() {
		this.breaker.setClock(this.clock);
	}

	@Test
	void opensAfterThresholdOfConsecutiveFailures() {
		assertThat(this.breaker.onFailure()).isNull();
		assertThat(this.breaker.onFailure()).isNull();
		assertThat(this.breaker.getState()).isEqualTo(CircuitBreakerState.CLOSED);
		assertThat(this.breaker.onFailure()).isEqualTo(CircuitBreakerState.CLOSED);
		assertThat(this.breaker.getState()).isEqualTo(CircuitBreakerState.OPEN);
		assertThat(this.breaker.tryAcquirePermission()).isFalse();
		assertThat(this.transitions).containsExactly("CLOSED->OPEN");
	}

	@Test
	void successResetsFailureCount() {
		this.breaker.onFailure();
		this.breaker.onFailure();
		this.breaker.onSuccess();
		assertThat(this.breaker.getConsecutiveFailures()).isZero();
		this.breaker.onFailure();
		this.breaker.onFailure();
		assertThat(this.breaker.getState()).isEqualTo(CircuitBreakerState.CLOSED);
	}

	@Test
	void halfOpenAdmitsOneTrialAfterOpenDuration() {
		open();
		this.clock.advance(Duration.ofMillis(4999));
		assertThat(this.breaker.tryAcquirePermission()).isFalse();
		this.clock.advance(Duration.ofMillis(1));
		assertThat(this.breaker.tryAcquirePermission()).isTrue();
		assertThat(this.breaker.getState()).isEqualTo(CircuitBreakerState.HALF_OPEN);
		assertThat(this.breaker.tryAcquirePermission()).isFalse();
		this.breaker.onSuccess();
		assertThat(this.breaker.getState()).isEqualTo(CircuitBreakerState.CLOSED);
		assertThat(this.breaker.tryAcquirePermission()).isTrue();
		assertThat(this.transitions).containsExactly("CLOSED->OPEN", "OPEN->HALF_OPEN", "HALF_OPEN->CLOSED");
	}

	@Test
	void failedTrialOpensAgainForAnotherOpenDuration() {
		open();
		this.clock.advance(Duration.ofSeconds(5));
		assertThat(this.breaker.tryAcquirePermission()).isTrue();
		assertThat(this.breaker.onFailure()).isEqualTo(CircuitBreakerState.HALF_OPEN);
		assertThat(this.breaker.getState()).isEqualTo(CircuitBreakerState.OPEN);
		this.clock.advance(Duration.ofSeconds(4));
		assertThat(this.breaker.tryAcquirePermission()).isFalse();
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(this.breaker.tryAcquirePermission()).isTrue();
	}

	@Test
	void silentTrialIsReplacedAfterAnotherOpenDuration() {
		open();
		this.clock.advance(Duration.ofSeconds(5));
		assertThat(this.breaker.tryAcquirePermission()).isTrue();
		this.clock.advance(Duration.ofSeconds(4));
		assertThat(this.breaker.tryAcquirePermission()).isFalse();
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(this.breaker.tryAcquirePermission()).isTrue();
		assertThat(this.breaker.getState()).isEqualTo(CircuitBreakerState.HALF_OPEN);
	}

	@Test
	void lateOutcomesWhileOpenChangeNothing() {
		open();
		this.breaker.onSuccess();
		assertThat(this.breaker.getState()).isEqualTo(CircuitBreakerState.OPEN);
		assertThat(this.breaker.onFailure()).isNull();
		assertThat(this.transitions).containsExactly("CLOSED->OPEN");
	}

	@Test
	void clockSetBackwardsDoesNotKeepBreakerOpen() {
		open();
		this.clock.advance(Duration.ofHours(-1));
		assertThat(this.breaker.tryAcquirePermission()).isTrue();
	}

	@Test
	void concurrentCallersGetExactlyOneTrial() throws Exception {
		int threads = 32;
		for (int round = 0; round < 50; round++) {
			open();
			this.clock.advance(Duration.ofSeconds(5));
			CountDownLatch start = new CountDownLatch(1);
			ExecutorService executor = Executors.newFixedThreadPool(threads);
			try {
				List<Future<Boolean>> permissions = new ArrayList<>();
				for (int i = 0; i < threads; i++) {
					permissions.add(executor.submit(() -> {
						start.await();
						return this.breaker.tryAcquirePermission();
					}));
				}
				start.countDown();
				int granted = 0;
				for (Future<Boolean> permission : permissions) {
					granted += permission.get(1, TimeUnit.MINUTES) ? 1 : 0;
				}
				assertThat(granted).isOne();
			}
			finally {
				executor.shutdownNow();
			}
			this.breaker.onSuccess();
			assertThat(this.breaker.getState()).isEqualTo(CircuitBreakerState.CLOSED);
		}
	}

	@Test
	void concurrentFailuresOpenOnce() throws Exception {
		this.breaker.setFailureThreshold(10);
		ExecutorService executor = Executors.newFixedThreadPool(16);
		try {
			List<Future<?>> tasks = new ArrayList<>();
			for (int i = 0; i < 16; i++) {
				tasks.add(executor.submit(() -> {
					for (int j = 0; j < 100; j++) {
						this.breaker.onFailure();
					}
				}));
			}
			for (Future<?> task : tasks) {
				task.get(1, TimeUnit.MINUTES);
			}
		}
		finally {
			executor.shutdownNow();
		}
		assertThat(this.transitions).containsExactly("CLOSED->OPEN");
	}

	@Test
	void rejectsInvalidSettings() {
		assertThatIllegalArgumentException().isThrownBy(() -> this.breaker.setFailureThreshold(0));
		assertThatIllegalArgumentException().isThrownBy(() -> this.breaker.setOpenDuration(Duration.ZERO));
	}

	private void open() {
		while (this.breaker.getState() != CircuitBreakerState.OPEN) {
			this.breaker.onFailure();
		}
	}

}
