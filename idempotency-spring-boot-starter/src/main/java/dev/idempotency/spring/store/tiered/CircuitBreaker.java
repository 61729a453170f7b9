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

import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;

import org.jspecify.annotations.Nullable;

/**
 * Lock-free circuit breaker over consecutive failures.
 * <p>
 * {@code CLOSED} counts consecutive failures (a success resets the count) and opens at
 * the threshold. {@code OPEN} refuses every permission until the open duration has
 * passed; the first caller after that moves the breaker to {@code HALF_OPEN} and is the
 * only one allowed through. The trial's success closes the breaker, its failure opens it
 * again. A trial that never reports (its caller died) is replaced by a new one after
 * another open duration, so the breaker cannot stay half-open forever.
 * <p>
 * The whole state is one immutable snapshot swapped by compare-and-set, so every
 * transition happens exactly once. The healthy path (closed, no failures) reads one
 * volatile field and writes nothing.
 *
 * @author Idempotency contributors
 */
final class CircuitBreaker {

	private static final Snapshot HEALTHY = new Snapshot(CircuitBreakerState.CLOSED, 0, 0);

	private final AtomicReference<Snapshot> snapshot = new AtomicReference<>(HEALTHY);

	private final BiConsumer<CircuitBreakerState, CircuitBreakerState> transitions;

	private volatile int failureThreshold = 3;

	private volatile long openMillis = 5000;

	private volatile Clock clock = Clock.systemUTC();

	/**
	 * Create a closed breaker.
	 * @param transitions called after each state change with the previous and the new
	 * state
	 */
	CircuitBreaker(BiConsumer<CircuitBreakerState, CircuitBreakerState> transitions) {
		this.transitions = transitions;
	}

	void setFailureThreshold(int failureThreshold) {
		if (failureThreshold < 1) {
			throw new IllegalArgumentException("'failureThreshold' must be at least 1");
		}
		this.failureThreshold = failureThreshold;
	}

	int getFailureThreshold() {
		return this.failureThreshold;
	}

	void setOpenDuration(Duration openDuration) {
		Objects.requireNonNull(openDuration, "'openDuration' must not be null");
		if (openDuration.isNegative() || openDuration.isZero()) {
			throw new IllegalArgumentException("'openDuration' must be positive");
		}
		this.openMillis = openDuration.toMillis();
	}

	Duration getOpenDuration() {
		return Duration.ofMillis(this.openMillis);
	}

	void setClock(Clock clock) {
		this.clock = Objects.requireNonNull(clock, "'clock' must not be null");
	}

	CircuitBreakerState getState() {
		return this.snapshot.get().state();
	}

	int getConsecutiveFailures() {
		return this.snapshot.get().failures();
	}

	/**
	 * Ask whether the guarded resource may be called now. A caller that gets {@code true}
	 * must report the call's outcome with {@link #onSuccess()} or {@link #onFailure()}.
	 * @return {@code true} if the call may go ahead
	 */
	boolean tryAcquirePermission() {
		Snapshot current = this.snapshot.get();
		if (current.state() == CircuitBreakerState.CLOSED) {
			return true;
		}
		long now = this.clock.millis();
		while (true) {
			if (current.state() == CircuitBreakerState.CLOSED) {
				return true;
			}
			// OPEN waits for the open duration; HALF_OPEN has a trial in flight,
			// unless that trial has been silent for a whole open duration
			if (!elapsed(current.since(), now)) {
				return false;
			}
			Snapshot trial = new Snapshot(CircuitBreakerState.HALF_OPEN, current.failures(), now);
			if (this.snapshot.compareAndSet(current, trial)) {
				if (current.state() != CircuitBreakerState.HALF_OPEN) {
					this.transitions.accept(current.state(), CircuitBreakerState.HALF_OPEN);
				}
				return true;
			}
			current = this.snapshot.get();
		}
	}

	/**
	 * Report a successful call: reset the failure count, and close a half-open breaker. A
	 * late success while open (from a call admitted before the breaker opened) changes
	 * nothing: only a trial may close an open breaker.
	 */
	void onSuccess() {
		Snapshot current = this.snapshot.get();
		while (current != HEALTHY && current.state() != CircuitBreakerState.OPEN) {
			if (this.snapshot.compareAndSet(current, HEALTHY)) {
				if (current.state() != CircuitBreakerState.CLOSED) {
					this.transitions.accept(current.state(), CircuitBreakerState.CLOSED);
				}
				return;
			}
			current = this.snapshot.get();
		}
	}

	/**
	 * Report a failed call: count it, open a closed breaker at the threshold, and open a
	 * half-open breaker again. A late failure while open changes nothing.
	 * @return the state this failure moved the breaker from to {@code OPEN}, or
	 * {@code null} if the breaker did not open
	 */
	@Nullable CircuitBreakerState onFailure() {
		while (true) {
			Snapshot current = this.snapshot.get();
			Snapshot next;
			if (current.state() == CircuitBreakerState.OPEN) {
				return null;
			}
			int failures = current.failures() + 1;
			if (current.state() == CircuitBreakerState.HALF_OPEN || failures >= this.failureThreshold) {
				next = new Snapshot(CircuitBreakerState.OPEN, failures, this.clock.millis());
			}
			else {
				next = new Snapshot(CircuitBreakerState.CLOSED, failures, 0);
			}
			if (this.snapshot.compareAndSet(current, next)) {
				if (next.state() != current.state()) {
					this.transitions.accept(current.state(), next.state());
					return current.state();
				}
				return null;
			}
		}
	}

	private boolean elapsed(long since, long now) {
		// a clock set backwards must not keep the breaker open for as long as the jump
		return now - since >= this.openMillis || now < since;
	}

	private record Snapshot(CircuitBreakerState state, int failures, long since) {

	}

}
