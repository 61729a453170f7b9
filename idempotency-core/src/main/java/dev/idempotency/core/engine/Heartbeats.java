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
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;

/**
 * The heartbeats of the running executions of one engine.
 * <p>
 * A scheduled task per execution would cost every request a lock, a heap insertion and a
 * removal in the scheduler's queue, and often a wake-up of a scheduler thread, although
 * nearly every handler ends long before its first beat. Instead an execution joins a set
 * when it starts and leaves it when it ends, and one periodic sweep hands the beats that
 * are due to a pool of beat threads.
 * <p>
 * The sweep runs {@value #SWEEPS_PER_PERIOD} times per shortest beat period seen so far,
 * so a beat is late by a quarter of its period at most: with a period of a third of the
 * lease, every beat happens within 5/12 of the lease after the previous one.
 * <p>
 * <b>A stuck renewal delays only its own key.</b> The sweep never calls the store: every
 * beat runs on a thread of its own from the beat pool, so a store call that hangs (a
 * paused server, a dead connection without a socket time-out, a pool waiting for a
 * connection) holds one thread and one key. A beat still running when the next one falls
 * due is left alone for one period (it is not doubled); a beat older than a period has
 * outlived its usefulness (the lease it was renewing is two thirds gone), so it is
 * abandoned, interrupted, and the next beat starts beside it. The pool grows to
 * {@value #MAX_BEAT_THREADS} threads; past that a due beat waits for the next sweep. Idle
 * beat threads end after a minute, so an engine whose handlers end before their first
 * beat keeps none.
 * <p>
 * Thread-safe.
 *
 * @author Idempotency contributors
 */
final class Heartbeats {

	static final int SWEEPS_PER_PERIOD = 4;

	static final int MAX_BEAT_THREADS = 256;

	private static final long MIN_SWEEP_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

	private final Set<Execution> running = ConcurrentHashMap.newKeySet();

	private final ThreadPoolExecutor beats;

	private volatile long sweepNanos = Long.MAX_VALUE;

	private volatile ScheduledExecutorService scheduler;

	// guarded by this
	private @Nullable ScheduledFuture<?> sweep;

	Heartbeats(ScheduledExecutorService scheduler) {
		this.scheduler = Objects.requireNonNull(scheduler, "'scheduler' must not be null");
		AtomicInteger count = new AtomicInteger();
		this.beats = new ThreadPoolExecutor(0, MAX_BEAT_THREADS, 60, TimeUnit.SECONDS, new SynchronousQueue<>(),
				(runnable) -> {
					Thread thread = new Thread(runnable, "idempotency-beat-" + count.incrementAndGet());
					thread.setDaemon(true);
					return thread;
				});
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
	 * Stop beating for an execution. A beat already running may still finish; the
	 * execution ignores it once it has ended.
	 * @param execution the execution
	 */
	void stop(Execution execution) {
		this.running.remove(execution);
	}

	/**
	 * Use another scheduler for the sweep.
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
	 * Stop the sweep and the beat threads. Running executions lose their heartbeat.
	 */
	synchronized void shutdown() {
		ScheduledFuture<?> current = this.sweep;
		if (current != null) {
			current.cancel(false);
			this.sweep = null;
		}
		this.sweepNanos = Long.MAX_VALUE;
		this.beats.shutdownNow();
	}

	/**
	 * Return the number of executions beating now.
	 * @return the count
	 */
	int size() {
		return this.running.size();
	}

	/**
	 * Return the executor of the beats, for tests.
	 * @return the executor
	 */
	Executor beats() {
		return this.beats;
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

	void sweep() {
		long now = System.nanoTime();
		for (Execution execution : this.running) {
			Execution.Beat beat = execution.claimBeat(now);
			if (beat != null) {
				try {
					this.beats.execute(beat);
				}
				catch (RejectedExecutionException ex) {
					// every beat thread is busy (or the engine closed):
					// the next sweep tries again
					beat.abandon();
				}
			}
		}
	}

}
