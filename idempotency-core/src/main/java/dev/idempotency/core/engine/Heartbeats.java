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

import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

/**
 * The heartbeats of the running executions of one engine.
 * <p>
 * A scheduled task per execution would cost every request a lock, a heap insertion and a
 * removal in the scheduler's queue, and often a wake-up of a scheduler thread, although
 * nearly every handler ends long before its first beat. Instead an execution joins a set
 * when it starts and leaves it when it ends, and one periodic sweep runs the beats that
 * are due on the scheduler's threads.
 * <p>
 * The sweep runs {@value #SWEEPS_PER_PERIOD} times per shortest beat period seen so far,
 * so a beat is late by a quarter of its period at most: with a period of a third of the
 * lease, every beat happens within 5/12 of the lease after the previous one. A beat still
 * running when the next one falls due (a slow store) is not doubled: the next sweep tries
 * again.
 * <p>
 * Thread-safe.
 *
 * @author Idempotency contributors
 */
final class Heartbeats {

	static final int SWEEPS_PER_PERIOD = 4;

	private static final long MIN_SWEEP_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

	private final Set<Execution> running = ConcurrentHashMap.newKeySet();

	private volatile long sweepNanos = Long.MAX_VALUE;

	private volatile ScheduledExecutorService scheduler;

	// guarded by this
	private @Nullable ScheduledFuture<?> sweep;

	Heartbeats(ScheduledExecutorService scheduler) {
		this.scheduler = Objects.requireNonNull(scheduler, "'scheduler' must not be null");
	}

	/**
	 * Start beating for an execution, first after one period.
	 * @param execution the execution, whose {@link Execution#beatPeriodNanos() period} is
	 * fixed
	 */
	void start(Execution execution) {
		this.running.add(execution);
		long wanted = Math.max(MIN_SWEEP_NANOS, execution.beatPeriodNanos() / SWEEPS_PER_PERIOD);
		if (wanted < this.sweepNanos) {
			schedule(wanted);
		}
	}

	/**
	 * Stop beating for an execution. A beat already handed to the scheduler may still
	 * run; the execution ignores it once it has ended.
	 * @param execution the execution
	 */
	void stop(Execution execution) {
		this.running.remove(execution);
	}

	/**
	 * Use another scheduler for the sweep and the beats.
	 * @param scheduler the scheduler
	 */
	synchronized void setScheduler(ScheduledExecutorService scheduler) {
		this.scheduler = scheduler;
		ScheduledFuture<?> current = this.sweep;
		if (current != null) {
			current.cancel(false);
			this.sweep = null;
			long interval = this.sweepNanos;
			this.sweepNanos = Long.MAX_VALUE;
			schedule(interval);
		}
	}

	/**
	 * Stop the sweep. Running executions lose their heartbeat.
	 */
	synchronized void shutdown() {
		ScheduledFuture<?> current = this.sweep;
		if (current != null) {
			current.cancel(false);
			this.sweep = null;
		}
		this.sweepNanos = Long.MAX_VALUE;
	}

	/**
	 * Return the number of executions beating now.
	 * @return the count
	 */
	int size() {
		return this.running.size();
	}

	private synchronized void schedule(long interval) {
		if (interval >= this.sweepNanos) {
			return;
		}
		ScheduledFuture<?> previous = this.sweep;
		try {
			this.sweep = this.scheduler.scheduleWithFixedDelay(this::sweep, interval, interval, TimeUnit.NANOSECONDS);
		}
		catch (RejectedExecutionException ex) {
			// the engine was closed: executions keep running, without heartbeat
			return;
		}
		this.sweepNanos = interval;
		if (previous != null) {
			previous.cancel(false);
		}
	}

	private void sweep() {
		long now = System.nanoTime();
		for (Execution execution : this.running) {
			if (execution.claimBeat(now)) {
				try {
					this.scheduler.execute(execution::beat);
				}
				catch (RejectedExecutionException ex) {
					execution.beatDone();
				}
			}
		}
	}

}
