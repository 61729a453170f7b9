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

import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;
import java.util.logging.Logger;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.EncryptingIdempotencyStore;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.IdempotencyStoreException;
import org.jspecify.annotations.Nullable;

/**
 * Framework-free idempotency engine: decides for each request whether to run its handler,
 * replay a stored response or refuse, and keeps the owner's lease alive while the handler
 * runs. Web filters and message listeners are thin adapters over it.
 * <p>
 * A request goes through {@link #begin}; on {@link Decision.Execute} the adapter runs the
 * handler and ends the returned {@link Execution}. Every decision about the key is made
 * atomically by the {@link IdempotencyStore}; the engine adds the policy: the
 * non-storable statuses, the wait for in-flight duplicates, the store-failure mode and
 * the heartbeat.
 * <p>
 * Thread-safe. The engine owns a one-thread scheduler for the heartbeat sweep unless one
 * is given, and a pool of beat threads, so that a renewal stuck in the store delays only
 * its own key; {@link #close()} stops what it owns.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class IdempotencyEngine implements AutoCloseable {

	private static final Logger logger = Logger.getLogger(IdempotencyEngine.class.getName());

	private static final Duration MIN_RETRY_AFTER = Duration.ofSeconds(1);

	private static final long FIRST_POLL_MILLIS = 10;

	private static final long MAX_POLL_MILLIS = 250;

	// the least time between two tries of one key by its waiting duplicates, in this
	// engine
	static final long POLL_SPACING_NANOS = TimeUnit.MILLISECONDS.toNanos(25);

	private long pollSpacingNanos = POLL_SPACING_NANOS;

	// past this many keys with waiting duplicates, the record of their last tries is
	// forgotten (which costs a few extra tries, never a wrong answer)
	private static final int MAX_POLLED_KEYS = 10_000;

	private final IdempotencyStore store;

	private Clock clock = Clock.systemUTC();

	private IdempotencyListener listener = IdempotencyListener.NONE;

	private volatile ScheduledExecutorService scheduler;

	private volatile boolean ownsScheduler;

	private final Heartbeats heartbeats;

	private final AtomicBoolean sealedWarned = new AtomicBoolean();

	// per key in progress with duplicates waiting for it: when the last of their tries
	// went to the store (System.nanoTime())
	private final ConcurrentHashMap<IdempotencyKey, Long> lastPolls = new ConcurrentHashMap<>();

	// per key whose waiting duplicates were answered by a replay: when
	// (System.nanoTime())
	private final ConcurrentHashMap<IdempotencyKey, Long> replayedAt = new ConcurrentHashMap<>();

	// how long after a replay the later tries of a key's waiting duplicates go to the
	// store without taking turns: two of their longest pauses, so that each is tried
	private static final long REPLAYED_NANOS = TimeUnit.MILLISECONDS.toNanos(2 * MAX_POLL_MILLIS);

	/**
	 * Create an engine over the given store.
	 * @param store the store, never {@code null}
	 */
	public IdempotencyEngine(IdempotencyStore store) {
		this.store = Objects.requireNonNull(store, "'store' must not be null");
		this.scheduler = newScheduler();
		this.ownsScheduler = true;
		this.heartbeats = new Heartbeats(this.scheduler);
	}

	/**
	 * Set the clock used for the expiry advertised on first responses. Defaults to the
	 * system UTC clock. Decisions never use it: they use the store's clock.
	 * @param clock the clock, never {@code null}
	 */
	public void setClock(Clock clock) {
		this.clock = Objects.requireNonNull(clock, "'clock' must not be null");
	}

	/**
	 * Set the listener told about decisions and completions. Defaults to
	 * {@link IdempotencyListener#NONE}. A listener that throws is logged and otherwise
	 * ignored: it never changes a decision or an outcome, and never leaves a key held.
	 * @param listener the listener, never {@code null}
	 */
	public void setListener(IdempotencyListener listener) {
		Objects.requireNonNull(listener, "'listener' must not be null");
		this.listener = (listener == IdempotencyListener.NONE) ? listener : new IsolatingListener(listener);
	}

	/**
	 * Use the given scheduler for the heartbeat sweep instead of the engine's own, which
	 * is shut down. The sweep only hands due beats to the engine's beat threads; it never
	 * calls the store. The caller keeps responsibility for the given scheduler's
	 * lifecycle.
	 * @param scheduler the scheduler, never {@code null}
	 */
	public void setHeartbeatScheduler(ScheduledExecutorService scheduler) {
		Objects.requireNonNull(scheduler, "'scheduler' must not be null");
		ScheduledExecutorService previous = this.scheduler;
		boolean owned = this.ownsScheduler;
		this.scheduler = scheduler;
		this.ownsScheduler = false;
		this.heartbeats.setScheduler(scheduler);
		if (owned) {
			previous.shutdown();
		}
	}

	/**
	 * Set the least time between two tries of one key by its waiting duplicates, for
	 * tests.
	 * @param spacing the spacing
	 */
	void setPollSpacing(Duration spacing) {
		this.pollSpacingNanos = spacing.toNanos();
	}

	/**
	 * Return the store this engine decides with.
	 * @return the store
	 */
	public IdempotencyStore store() {
		return this.store;
	}

	/**
	 * Decide what to do with a request.
	 * @param key the request's key, never {@code null}
	 * @param fingerprint the request's fingerprint, never {@code null}
	 * @param policy the endpoint's policy, never {@code null}
	 * @return the decision, never {@code null}; {@link Decision.Execute} holds an open
	 * execution that the caller must end
	 */
	public Decision begin(IdempotencyKey key, RequestFingerprint fingerprint, IdempotencyPolicy policy) {
		Decision decision = decide(key, fingerprint, policy);
		this.listener.onDecision(key, policy, decision);
		return decision;
	}

	/**
	 * Decide for a request whose store failed before {@link #begin} could ask it, as
	 * {@code begin} decides when the store fails: by the policy's store-failure mode. An
	 * adapter that must prepare the store first (for example, begin the transaction of a
	 * {@link IdempotencyPolicy#transactional() transactional} policy) calls it when that
	 * preparation fails.
	 * @param key the request's key, never {@code null}
	 * @param policy the endpoint's policy, never {@code null}
	 * @param failure the store's failure, never {@code null}
	 * @return {@link Decision.Unavailable} or, for a fail-open policy,
	 * {@link Decision.Unprotected}
	 */
	public Decision storeFailed(IdempotencyKey key, IdempotencyPolicy policy, IdempotencyStoreException failure) {
		Objects.requireNonNull(failure, "'failure' must not be null");
		this.listener.onStoreFailure(key, "begin", failure);
		Decision decision = onStoreFailure(key, policy, failure);
		this.listener.onDecision(key, policy, decision);
		return decision;
	}

	/**
	 * Decide what to do with a request with its first try of the store, never waiting:
	 * {@link #tryBegin(IdempotencyKey, RequestFingerprint, IdempotencyPolicy, long, int)}
	 * for the first try.
	 * @param key the request's key, never {@code null}
	 * @param fingerprint the request's fingerprint, never {@code null}
	 * @param policy the endpoint's policy, never {@code null}
	 * @param waitDeadline the {@link System#nanoTime()} at which the wait for an
	 * in-flight duplicate ends: the time of the first try plus the policy's
	 * {@link IdempotencyPolicy#inFlightWait() in-flight wait}
	 * @return the decision, or {@code null} to try again; {@link Decision.Execute} holds
	 * an open execution that the caller must end
	 * @since 0.1.0
	 */
	public @Nullable Decision tryBegin(IdempotencyKey key, RequestFingerprint fingerprint, IdempotencyPolicy policy,
			long waitDeadline) {
		return tryBegin(key, fingerprint, policy, waitDeadline, 1);
	}

	/**
	 * Decide what to do with a request with one try of the store, never waiting: the
	 * counterpart of {@link #begin} for an adapter that waits for an in-flight duplicate
	 * without holding a thread. As long as the key is in progress and
	 * {@link System#nanoTime()} has not reached {@code waitDeadline}, nothing is decided
	 * (and the listener is told nothing): the method returns {@code null}, and the caller
	 * tries again after the pause of {@link #inFlightPollMillis}, without blocking. Once
	 * the deadline has passed, a key still in progress is answered with
	 * {@link Decision.InProgress}, as {@code begin} answers it when its wait ends.
	 * <p>
	 * As in {@code begin}, a later try ({@code tries} above one) within the wait may be
	 * answered {@code null} without asking the store, when another waiting duplicate of
	 * the same key tried it moments before: the duplicates of one key take turns, so that
	 * a crowd of them never fills the store's connections that the owner's heartbeat and
	 * completion need. The first try and the one after the deadline always ask the store.
	 * @param key the request's key, never {@code null}
	 * @param fingerprint the request's fingerprint, never {@code null}
	 * @param policy the endpoint's policy, never {@code null}
	 * @param waitDeadline the {@link System#nanoTime()} at which the wait for an
	 * in-flight duplicate ends: the time of the first try plus the policy's
	 * {@link IdempotencyPolicy#inFlightWait() in-flight wait}
	 * @param tries the number of this try, one for the first
	 * @return the decision, or {@code null} to try again; {@link Decision.Execute} holds
	 * an open execution that the caller must end
	 * @since 0.1.0
	 */
	public @Nullable Decision tryBegin(IdempotencyKey key, RequestFingerprint fingerprint, IdempotencyPolicy policy,
			long waitDeadline, int tries) {
		if (tries > 1 && !takeTurn(key, waitDeadline)) {
			return null;
		}
		Decision decision = tryOnce(key, fingerprint, policy);
		if (decision instanceof Decision.InProgress && System.nanoTime() - waitDeadline < 0) {
			return null;
		}
		this.listener.onDecision(key, policy, decision);
		return decision;
	}

	/**
	 * Return how long to pause before the next try of a request whose key was in progress
	 * at each of its tries so far, as {@link #begin} pauses: 10 ms after the first try,
	 * doubling up to 250 ms, and never much beyond the end of the wait.
	 * @param tries the tries made so far, at least one
	 * @param waitDeadline the {@link System#nanoTime()} at which the wait ends
	 * @return the pause, in milliseconds, at least one
	 * @since 0.1.0
	 */
	public static long inFlightPollMillis(int tries, long waitDeadline) {
		long poll = (tries >= 6) ? MAX_POLL_MILLIS : Math.min(MAX_POLL_MILLIS, FIRST_POLL_MILLIS << (tries - 1));
		long remainingMillis = TimeUnit.NANOSECONDS.toMillis(waitDeadline - System.nanoTime());
		return Math.max(1, Math.min(poll, remainingMillis + 1));
	}

	private Decision decide(IdempotencyKey key, RequestFingerprint fingerprint, IdempotencyPolicy policy) {
		long deadline = System.nanoTime() + policy.inFlightWait().toNanos();
		for (int tries = 1;; tries++) {
			if (tries > 1 && !takeTurn(key, deadline)) {
				sleepQuietly(inFlightPollMillis(tries, deadline));
				if (Thread.currentThread().isInterrupted()) {
					return tryOnce(key, fingerprint, policy);
				}
				continue;
			}
			Decision decision = tryOnce(key, fingerprint, policy);
			if (!(decision instanceof Decision.InProgress) || System.nanoTime() - deadline >= 0) {
				return decision;
			}
			sleepQuietly(inFlightPollMillis(tries, deadline));
			if (Thread.currentThread().isInterrupted()) {
				return decision;
			}
		}
	}

	private static void sleepQuietly(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	// Whether a later try of a waiting duplicate goes to the store now: the duplicates of
	// one key waiting in this engine take turns, one try per POLL_SPACING_NANOS between
	// them, whatever their number. A hundred of them polling each on its own would hold
	// as many of the store's connections (a pool of ten, say) as they like, and the
	// owner's heartbeat, waiting in the same pool behind them, could miss its lease:
	// the key would then be taken over and the handler run twice. A try past the
	// deadline always goes: it gives the answer. The turns of a key are forgotten when a
	// try finds it no longer in progress, or (a key whose duplicates all gave up) with
	// every other key's when too many are kept. Once a try is answered with a replay,
	// the key's request has ended, and no heartbeat of its waits for a connection: the
	// other duplicates' next tries go at once, each getting the replay within one pause,
	// instead of one per turn (a hundred of them over two and a half seconds).
	private boolean takeTurn(IdempotencyKey key, long deadline) {
		long now = System.nanoTime();
		if (now - deadline >= 0) {
			return true;
		}
		if (!this.replayedAt.isEmpty()) {
			Long replayed = this.replayedAt.get(key);
			if (replayed != null) {
				if (now - replayed < REPLAYED_NANOS) {
					return true;
				}
				this.replayedAt.remove(key, replayed);
			}
		}
		Long last = this.lastPolls.get(key);
		if (last == null) {
			if (this.lastPolls.size() >= MAX_POLLED_KEYS) {
				this.lastPolls.clear();
			}
			return this.lastPolls.putIfAbsent(key, now) == null;
		}
		return now - last >= this.pollSpacingNanos && this.lastPolls.replace(key, last, now);
	}

	// one try of the store
	private Decision tryOnce(IdempotencyKey key, RequestFingerprint fingerprint, IdempotencyPolicy policy) {
		OwnerToken token = OwnerToken.generate();
		AcquireResult result;
		try {
			result = this.store.acquire(key, fingerprint, token, policy.lockTimeout(), policy.ttl());
		}
		catch (IdempotencyStoreException ex) {
			this.listener.onStoreFailure(key, "acquire", ex);
			return onStoreFailure(key, policy, ex);
		}
		if (!(result instanceof AcquireResult.InProgress) && !this.lastPolls.isEmpty()
				&& this.lastPolls.remove(key) != null && result instanceof AcquireResult.Replay) {
			// the wait for this key is over: its turns are forgotten, and after a replay
			// the other duplicates try at once
			if (this.replayedAt.size() >= MAX_POLLED_KEYS) {
				this.replayedAt.clear();
			}
			this.replayedAt.put(key, System.nanoTime());
		}
		if (result instanceof AcquireResult.Acquired) {
			Execution execution = new Execution(this, key, policy, token);
			if (!policy.transactional()) {
				// the caller's transaction holds a transactional claim: no lease
				execution.startHeartbeat();
			}
			return new Decision.Execute(execution);
		}
		if (result instanceof AcquireResult.Replay replay) {
			return new Decision.Replay(replayable(key, replay.response()), replay.expiresAt());
		}
		if (result instanceof AcquireResult.Mismatch) {
			return new Decision.Mismatch();
		}
		return new Decision.InProgress(inProgressRetryAfter(policy, (AcquireResult.InProgress) result));
	}

	// An encrypted record that reached the engine undecrypted (encryption turned off
	// while it lived), or what is left of one whose status or headers were altered:
	// never replay the envelope, answer as for a record that cannot be read
	private StoredResponse replayable(IdempotencyKey key, StoredResponse response) {
		if (!EncryptingIdempotencyStore.isSealed(response)) {
			return response;
		}
		if (this.sealedWarned.compareAndSet(false, true)) {
			logger.warning(() -> "The stored response of key '" + key + "' is encrypted and no decryption is"
					+ " configured (idempotency.encryption): it is answered as unreadable, never replayed;"
					+ " this is logged once");
		}
		return StoredResponse.unreadable();
	}

	private Decision onStoreFailure(IdempotencyKey key, IdempotencyPolicy policy, IdempotencyStoreException ex) {
		if (policy.onStoreFailure() == StoreFailureMode.FAIL_OPEN) {
			logger.log(Level.WARNING, ex,
					() -> "Store unavailable: running key '" + key + "' WITHOUT idempotency protection (fail-open)");
			return new Decision.Unprotected(ex);
		}
		logger.log(Level.WARNING, ex, () -> "Store unavailable: refusing key '" + key + "' (fail-closed)");
		return new Decision.Unavailable(retryAfter(policy.unavailableRetryAfter()), ex);
	}

	// A live owner: the remaining lease only bounds the hint, since a handler usually
	// ends
	// long before its lease, and a retry told to wait out the lease would wait for
	// nothing. An owner known to be gone: nothing frees the key before the store's wait
	// (a takeover's confirmation), so that wait is the hint, at most the lock timeout.
	static Duration inProgressRetryAfter(IdempotencyPolicy policy, AcquireResult.InProgress inProgress) {
		if (inProgress.ownerGone()) {
			Duration wait = retryAfter(inProgress.retryAfter());
			Duration most = retryAfter(policy.lockTimeout());
			return (wait.compareTo(most) < 0) ? wait : most;
		}
		Duration hint = retryAfter(policy.inProgressRetryAfter());
		Duration lease = Duration
			.ofSeconds(Math.max(MIN_RETRY_AFTER.getSeconds(), inProgress.retryAfter().getSeconds()));
		return (hint.compareTo(lease) < 0) ? hint : lease;
	}

	// Retry-After carries whole seconds: round up, at least one
	private static Duration retryAfter(Duration delay) {
		long seconds = delay.getSeconds() + ((delay.getNano() > 0) ? 1 : 0);
		return Duration.ofSeconds(Math.max(MIN_RETRY_AFTER.getSeconds(), seconds));
	}

	Heartbeats heartbeats() {
		return this.heartbeats;
	}

	Clock clock() {
		return this.clock;
	}

	IdempotencyListener listener() {
		return this.listener;
	}

	/**
	 * Stop the heartbeat scheduler if the engine created it. Executions still running
	 * lose their heartbeat.
	 */
	@Override
	public void close() {
		this.heartbeats.shutdown();
		if (this.ownsScheduler) {
			this.scheduler.shutdownNow();
		}
	}

	private static ScheduledExecutorService newScheduler() {
		AtomicInteger count = new AtomicInteger();
		ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, (runnable) -> {
			Thread thread = new Thread(runnable, "idempotency-heartbeat-" + count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		});
		executor.setRemoveOnCancelPolicy(true);
		return executor;
	}

	/**
	 * Calls a listener so that its failure stays its own: an exception thrown after the
	 * store granted a key would otherwise escape before the caller got the execution, and
	 * the key would stay held by a heartbeat nobody ends.
	 */
	private static final class IsolatingListener implements IdempotencyListener {

		private final IdempotencyListener delegate;

		IsolatingListener(IdempotencyListener delegate) {
			this.delegate = delegate;
		}

		@Override
		public void onDecision(IdempotencyKey key, IdempotencyPolicy policy, Decision decision) {
			try {
				this.delegate.onDecision(key, policy, decision);
			}
			catch (RuntimeException ex) {
				failed("onDecision", key, ex);
			}
		}

		@Override
		public void onCompletion(IdempotencyKey key, IdempotencyPolicy policy, CompletionOutcome outcome) {
			try {
				this.delegate.onCompletion(key, policy, outcome);
			}
			catch (RuntimeException ex) {
				failed("onCompletion", key, ex);
			}
		}

		@Override
		public void onOwnershipLost(IdempotencyKey key, IdempotencyPolicy policy) {
			try {
				this.delegate.onOwnershipLost(key, policy);
			}
			catch (RuntimeException ex) {
				failed("onOwnershipLost", key, ex);
			}
		}

		@Override
		public void onStoreFailure(IdempotencyKey key, String operation, IdempotencyStoreException failure) {
			try {
				this.delegate.onStoreFailure(key, operation, failure);
			}
			catch (RuntimeException ex) {
				failed("onStoreFailure", key, ex);
			}
		}

		private void failed(String method, IdempotencyKey key, RuntimeException ex) {
			logger.log(Level.WARNING, ex, () -> "Listener " + this.delegate.getClass().getName() + " failed in "
					+ method + " for key '" + key + "'; ignoring it");
		}

	}

}
