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
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Level;
import java.util.logging.Logger;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.IdempotencyStoreException;
import org.jspecify.annotations.Nullable;

/**
 * Handle of one execution of a handler under an owned key. While it is open a heartbeat
 * extends the lease, so a slow handler keeps its key, up to the policy's
 * {@link IdempotencyPolicy#maxExecutionTime() maximum execution time}: past it the lease
 * is no longer renewed, so that a hung handler's key can be taken over. It ends with
 * exactly one of {@link #complete(StoredResponse)}, {@link #release()} or
 * {@link #close()}.
 * <p>
 * Use it with try-with-resources so that a handler that throws releases the key:
 * <pre class="code">
 * if (engine.begin(key, fingerprint, policy) instanceof Decision.Execute execute) {
 *     try (Execution execution = execute.execution()) {
 *         StoredResponse response = handler.handle();
 *         execution.complete(response);
 *     }
 * }
 * </pre>
 * <p>
 * Thread-safe: the handler may finish on another thread than the one that began it (as
 * asynchronous servlet requests do). Only the first call that ends the execution has an
 * effect.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class Execution implements AutoCloseable {

	private static final Logger logger = Logger.getLogger(Execution.class.getName());

	private static final long[] COMPLETE_BACKOFF_MILLIS = { 0, 25, 100 };

	// a transactional policy's completion runs in the caller's transaction, which a
	// failed statement aborts (or whose connection or time is gone): a second attempt
	// could only fail again, and would hide the first failure's cause
	private static final long[] COMPLETE_ONCE = { 0 };

	private final IdempotencyEngine engine;

	private final IdempotencyKey key;

	private final IdempotencyPolicy policy;

	private final OwnerToken token;

	private final AtomicBoolean finished = new AtomicBoolean();

	private final long beatPeriodNanos;

	private final long maxExecutionNanos;

	private volatile long startedNanos;

	// the beat running now, if any
	private final AtomicReference<@Nullable Beat> beat = new AtomicReference<>();

	private volatile long nextBeatNanos;

	// set once, by the first refused renewal: an abandoned beat and its
	// successor may both be refused, and the loss is still one event
	private final AtomicBoolean ownershipLost = new AtomicBoolean();

	private volatile @Nullable CompletionOutcome outcome;

	private volatile @Nullable IdempotencyStoreException failure;

	Execution(IdempotencyEngine engine, IdempotencyKey key, IdempotencyPolicy policy, OwnerToken token) {
		this.engine = engine;
		this.key = key;
		this.policy = policy;
		this.token = token;
		this.beatPeriodNanos = TimeUnit.MILLISECONDS.toNanos(Math.max(1, policy.lockTimeout().toMillis() / 3));
		this.maxExecutionNanos = saturatedNanos(policy.maxExecutionTime());
	}

	private static long saturatedNanos(Duration duration) {
		try {
			return duration.toNanos();
		}
		catch (ArithmeticException ex) {
			return Long.MAX_VALUE;
		}
	}

	void startHeartbeat() {
		this.startedNanos = System.nanoTime();
		this.nextBeatNanos = this.startedNanos + this.beatPeriodNanos;
		this.engine.heartbeats().start(this);
	}

	/**
	 * Return the time between two heartbeats: a third of the lock timeout.
	 * @return the period in nanoseconds
	 */
	long beatPeriodNanos() {
		return this.beatPeriodNanos;
	}

	/**
	 * Claim the beat that is due at the given time, unless the execution has ended, the
	 * beat is not due yet, or the previous beat is still running and younger than a
	 * period. A previous beat older than a period is abandoned (and interrupted): the
	 * lease it was renewing is two thirds gone, and waiting for it would let it lapse.
	 * @param now the current {@link System#nanoTime()}
	 * @return the beat the caller must run, or {@code null}
	 */
	@Nullable Beat claimBeat(long now) {
		if (this.finished.get() || now - this.nextBeatNanos < 0) {
			return null;
		}
		if (now - this.startedNanos >= this.maxExecutionNanos) {
			// a hung handler must not hold its key for ever: the
			// lease lapses, and another request may take it over
			stopHeartbeat();
			logger.warning(() -> "Handler of key '" + this.key + "' has run for longer than the policy's max"
					+ " execution time (" + this.policy.maxExecutionTime() + "): its lease is no longer renewed and"
					+ " lapses within " + this.policy.lockTimeout() + ", after which another request may take the"
					+ " key over; if it completes after that, its outcome is rejected");
			return null;
		}
		Beat running = this.beat.get();
		if (running != null && now - running.startedNanos < this.beatPeriodNanos) {
			return null;
		}
		Beat next = new Beat(now);
		if (!this.beat.compareAndSet(running, next)) {
			return null;
		}
		if (running != null) {
			logger.warning(() -> "Heartbeat of key '" + this.key + "' has not returned for "
					+ TimeUnit.NANOSECONDS.toMillis(now - running.startedNanos)
					+ " ms: abandoning it and starting the next one");
			running.interrupt();
		}
		this.nextBeatNanos = now + this.beatPeriodNanos;
		return next;
	}

	/**
	 * Return the key this execution owns.
	 * @return the key
	 */
	public IdempotencyKey key() {
		return this.key;
	}

	/**
	 * Return the policy this execution runs under.
	 * @return the policy
	 */
	public IdempotencyPolicy policy() {
		return this.policy;
	}

	/**
	 * Return this execution's fencing token.
	 * @return the token
	 */
	public OwnerToken token() {
		return this.token;
	}

	/**
	 * Return whether a heartbeat found that another caller took the key over. The handler
	 * keeps running (it cannot be stopped safely), but its completion will be rejected.
	 * @return {@code true} if ownership was lost
	 */
	public boolean isOwnershipLost() {
		return this.ownershipLost.get();
	}

	/**
	 * Return how this execution ended, if it has.
	 * @return the outcome, or empty while running
	 */
	public Optional<CompletionOutcome> outcome() {
		return Optional.ofNullable(this.outcome);
	}

	/**
	 * Return why the store failed, when this execution ended
	 * {@link CompletionOutcome#FAILED}: the last failure of its completion or release.
	 * @return the failure, or empty unless the execution ended so
	 * @since 0.1.0
	 */
	public Optional<IdempotencyStoreException> failure() {
		return Optional.ofNullable(this.failure);
	}

	/**
	 * Return the expiry to advertise for a response completed now: the current time plus
	 * the policy's TTL.
	 * @return the instant
	 */
	public Instant advertisedExpiry() {
		return this.engine.clock().instant().plus(this.policy.ttl());
	}

	/**
	 * End the execution with the handler's response: store it, or release the key if its
	 * status is in the policy's non-storable set.
	 * @param response the handler's response, never {@code null}
	 * @return the outcome
	 * @throws IllegalStateException if the execution has already ended
	 */
	public CompletionOutcome complete(StoredResponse response) {
		finish();
		if (this.policy.nonStorableStatuses().contains(response.status())) {
			return end(doRelease());
		}
		return end(doComplete(response));
	}

	/**
	 * End the execution without storing anything: the key becomes absent and the next
	 * request runs the handler.
	 * @return the outcome
	 * @throws IllegalStateException if the execution has already ended
	 */
	public CompletionOutcome release() {
		finish();
		return end(doRelease());
	}

	/**
	 * End the execution whose claim was made in the caller's transaction (a
	 * {@link IdempotencyPolicy#transactional() transactional} policy), after that
	 * transaction rolled back: the claim vanished with it, so the store is not asked to
	 * release it (a store that keeps a copy of the claim outside the transaction releases
	 * that copy when it learns of the rollback). The outcome is
	 * {@link CompletionOutcome#RELEASED}. Has no effect once the execution has ended.
	 * @since 0.1.0
	 */
	public void rolledBack() {
		if (this.finished.compareAndSet(false, true)) {
			stopHeartbeat();
			end(CompletionOutcome.RELEASED);
		}
	}

	/**
	 * Release the key unless the execution has already ended. Never throws.
	 */
	@Override
	public void close() {
		if (this.finished.compareAndSet(false, true)) {
			stopHeartbeat();
			end(doRelease());
		}
	}

	private void finish() {
		if (!this.finished.compareAndSet(false, true)) {
			throw new IllegalStateException("Execution for key '" + this.key + "' has already ended");
		}
		stopHeartbeat();
	}

	private CompletionOutcome end(CompletionOutcome outcome) {
		this.outcome = outcome;
		this.engine.listener().onCompletion(this.key, this.policy, outcome);
		return outcome;
	}

	private CompletionOutcome doComplete(StoredResponse response) {
		IdempotencyStore store = this.engine.store();
		IdempotencyStoreException failure = null;
		for (long backoff : this.policy.transactional() ? COMPLETE_ONCE : COMPLETE_BACKOFF_MILLIS) {
			if (backoff > 0 && !pause(backoff)) {
				break;
			}
			try {
				if (store.complete(this.key, this.token, response, this.policy.ttl())) {
					return CompletionOutcome.STORED;
				}
				logger.warning(() -> "Completion of key '" + this.key + "' rejected: another request took the key "
						+ "over after this one's lease lapsed; its response was not stored");
				return CompletionOutcome.FENCED;
			}
			catch (IdempotencyStoreException ex) {
				failure = ex;
				this.engine.listener().onStoreFailure(this.key, "complete", ex);
			}
		}
		IdempotencyStoreException cause = failure;
		this.failure = cause;
		logger.log(Level.SEVERE, cause, () -> "Could not store the response of key '" + this.key
				+ "': the record stays in progress until its lease lapses");
		return CompletionOutcome.FAILED;
	}

	private CompletionOutcome doRelease() {
		try {
			return this.engine.store().release(this.key, this.token) ? CompletionOutcome.RELEASED
					: CompletionOutcome.FENCED;
		}
		catch (IdempotencyStoreException ex) {
			this.failure = ex;
			this.engine.listener().onStoreFailure(this.key, "release", ex);
			logger.log(Level.WARNING, ex,
					() -> "Could not release key '" + this.key + "': it stays in progress until its lease lapses");
			return CompletionOutcome.FAILED;
		}
	}

	private void extendLease() {
		try {
			Duration lease = this.policy.lockTimeout();
			if (!this.engine.store().extend(this.key, this.token, lease) && !this.finished.get()
					&& this.ownershipLost.compareAndSet(false, true)) {
				stopHeartbeat();
				logger.warning(() -> "Lost ownership of key '" + this.key + "' while its handler was running");
				this.engine.listener().onOwnershipLost(this.key, this.policy);
			}
		}
		catch (IdempotencyStoreException ex) {
			this.engine.listener().onStoreFailure(this.key, "extend", ex);
			logger.log(Level.WARNING, ex, () -> "Heartbeat of key '" + this.key + "' failed; will try again");
		}
	}

	private void stopHeartbeat() {
		this.engine.heartbeats().stop(this);
	}

	private static boolean pause(long millis) {
		try {
			Thread.sleep(millis);
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	/**
	 * One renewal of the lease, run on a beat thread after {@link #claimBeat(long)}.
	 */
	final class Beat implements Runnable {

		private final long startedNanos;

		private volatile @Nullable Thread thread;

		Beat(long startedNanos) {
			this.startedNanos = startedNanos;
		}

		@Override
		public void run() {
			// a pooled thread may carry the interrupt meant for an abandoned beat
			Thread.interrupted();
			this.thread = Thread.currentThread();
			try {
				if (!Execution.this.finished.get()) {
					extendLease();
				}
			}
			finally {
				this.thread = null;
				Thread.interrupted();
				abandon();
			}
		}

		/**
		 * Let the next sweep start another beat, unless a newer one already replaced this
		 * one.
		 */
		void abandon() {
			Execution.this.beat.compareAndSet(this, null);
		}

		void interrupt() {
			Thread running = this.thread;
			if (running != null) {
				running.interrupt();
			}
		}

	}

}
