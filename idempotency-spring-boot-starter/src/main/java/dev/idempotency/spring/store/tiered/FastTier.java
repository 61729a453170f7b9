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
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.IdempotencyStoreException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The fast tier of a {@link TieredIdempotencyStore} wrapped once with its
 * {@link CircuitBreaker}: every call to the fast store goes through this class, which
 * asks the breaker for permission, reports the call's outcome to it, and tells the
 * {@link TieredStoreListener} when an operation goes without the fast tier. The tiered
 * store and its claim strategies never touch the breaker themselves.
 * <p>
 * The methods differ in what the breaker and a failure mean to their caller:
 * <ul>
 * <li><b>Best effort</b> ({@link #acquire}, {@link #complete}, {@link #release},
 * {@link #extendInBackground}, {@link #find(IdempotencyKey, Optional)}): skipped while
 * the breaker is open; a skip or a failure is reported as a fallback and answered without
 * the fast tier.
 * <li><b>Claims held by the fast tier alone</b> ({@link #releaseClaim},
 * {@link #extendClaim}): asked of the breaker as well, but a skip or a failure fails the
 * operation (only a failure is reported as a fallback).
 * <li><b>Follow-ups</b> ({@link #undoClaim}, {@link #rewarm}, {@link #drop},
 * {@link #recheck}): finish an operation whose first fast-tier call the breaker admitted,
 * so they do not ask it again; a failure is reported and swallowed.
 * <li><b>Stand-ins</b>: {@link #evict} is tried even while the breaker is open, and
 * {@link #findInstead} answers for a durable tier that failed; a failure of either is
 * reported and thrown.
 * </ul>
 * <p>
 * It also decides how long the fast tier keeps what it is given: every method takes the
 * record's TTL and applies the optional cap, and a copy of a durable record never
 * outlives the durable one.
 * <p>
 * Thread-safe.
 *
 * @author Idempotency contributors
 */
final class FastTier {

	static final String ACQUIRE = "acquire";

	static final String COMPLETE = "complete";

	static final String RELEASE = "release";

	static final String EXTEND = "extend";

	static final String FIND = "find";

	static final String EVICT = "evict";

	private static final Log logger = LogFactory.getLog(FastTier.class);

	// renewals under way at once; past that a renewal is skipped (and counted)
	private static final int MAX_RENEWAL_THREADS = 256;

	private final IdempotencyStore store;

	private final CircuitBreaker breaker;

	private volatile @Nullable Duration ttlCap;

	private volatile Clock clock = Clock.systemUTC();

	private volatile TieredStoreListener listener = TieredStoreListener.NONE;

	// owners whose renewal is under way
	private final Set<OwnerToken> renewals = ConcurrentHashMap.newKeySet();

	private final ThreadPoolExecutor renewalExecutor = newRenewalExecutor();

	FastTier(IdempotencyStore store) {
		this.store = store;
		this.breaker = new CircuitBreaker(this::breakerStateChanged);
	}

	IdempotencyStore getStore() {
		return this.store;
	}

	CircuitBreaker getBreaker() {
		return this.breaker;
	}

	void setTtlCap(@Nullable Duration ttlCap) {
		this.ttlCap = ttlCap;
	}

	void setClock(Clock clock) {
		this.clock = clock;
		this.breaker.setClock(clock);
	}

	void setListener(TieredStoreListener listener) {
		this.listener = listener;
	}

	TieredStoreListener getListener() {
		return this.listener;
	}

	// null when the fast tier was skipped or failed; the claim outlives its lease
	// null when skipped or failed. A claim whose call failed may have been made all the
	// same (a reply lost on the way back, a time-out after the server applied it), and
	// nobody would end it: it would answer "in progress" to every retry until its lease
	// ran out, although the durable tier, which answers instead, may have replayed the
	// key or granted it. Such a claim is released in the background, by its token (a
	// release never removes a completed record).
	@Nullable AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token, Duration lease,
			Duration ttl) {
		if (!permitted(ACQUIRE)) {
			return null;
		}
		try {
			return call(ACQUIRE, () -> this.store.acquire(key, fingerprint, token, lease, claimTtl(lease, ttl)));
		}
		catch (RuntimeException ex) {
			// reported by call
			releaseInBackground(key, token);
			return null;
		}
	}

	// Best effort, and not counted: the failure of the claim was, and a tier failing
	// now would count each of its failures twice toward the breaker. Skipped unless the
	// breaker is closed; a claim that stays runs out with its lease.
	private void releaseInBackground(IdempotencyKey key, OwnerToken token) {
		if (this.breaker.getState() != CircuitBreakerState.CLOSED) {
			return;
		}
		try {
			this.renewalExecutor.execute(() -> {
				try {
					this.store.release(key, token);
				}
				catch (RuntimeException ex) {
					logger.debug("Could not release a fast-tier claim whose call failed", ex);
				}
			});
		}
		catch (RejectedExecutionException ex) {
			// as many releases and renewals are under way as the pool allows
		}
	}

	Outcome complete(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
		Boolean completed = permitted(COMPLETE)
				? attempt(COMPLETE, () -> this.store.complete(key, token, response, ttl(ttl))) : null;
		if (completed == null) {
			return Outcome.UNAVAILABLE;
		}
		return completed ? Outcome.APPLIED : Outcome.REFUSED;
	}

	void release(IdempotencyKey key, OwnerToken token) {
		if (permitted(RELEASE)) {
			attempt(RELEASE, () -> this.store.release(key, token));
		}
	}

	// A fast tier that hangs must never hold up the durable renewal, which is the one
	// that counts: the renewal runs on a thread of its own, one at a time per owner. A
	// hanging fast tier then holds one thread per running execution at most; its claims
	// run out with their TTL, and duplicates fall through to the durable tier, which
	// still holds the live lease.
	void extendInBackground(IdempotencyKey key, OwnerToken token, Duration lease) {
		if (!permitted(EXTEND)) {
			return;
		}
		if (!this.renewals.add(token)) {
			skipped(EXTEND);
			return;
		}
		try {
			this.renewalExecutor.execute(() -> renew(key, token, lease));
		}
		catch (RejectedExecutionException ex) {
			this.renewals.remove(token);
			skipped(EXTEND);
		}
	}

	private void renew(IdempotencyKey key, OwnerToken token, Duration lease) {
		try {
			attempt(EXTEND, () -> this.store.extend(key, token, lease));
		}
		finally {
			this.renewals.remove(token);
		}
	}

	// otherwise: the answer when the fast tier is skipped or fails
	Optional<IdempotencyRecord> find(IdempotencyKey key, Optional<IdempotencyRecord> otherwise) {
		Optional<IdempotencyRecord> found = permitted(FIND) ? attempt(FIND, () -> this.store.find(key)) : null;
		return (found != null) ? found : otherwise;
	}

	// The claims below live in the fast tier alone: a skip or a failure fails the
	// operation, since nothing can serve it without the fast tier.
	boolean releaseClaim(IdempotencyKey key, OwnerToken token) {
		requireClaimPermission(RELEASE, key);
		try {
			return call(RELEASE, () -> this.store.release(key, token));
		}
		catch (RuntimeException ex) {
			throw claimFailed(RELEASE, key, ex);
		}
	}

	boolean extendClaim(IdempotencyKey key, OwnerToken token, Duration lease) {
		requireClaimPermission(EXTEND, key);
		try {
			return call(EXTEND, () -> this.store.extend(key, token, lease));
		}
		catch (RuntimeException ex) {
			throw claimFailed(EXTEND, key, ex);
		}
	}

	private void requireClaimPermission(String operation, IdempotencyKey key) {
		if (!this.breaker.tryAcquirePermission()) {
			throw new IdempotencyStoreException("Cannot " + operation + " the claim of key '" + key
					+ "': the fast tier holds it and is skipped while the circuit breaker is open");
		}
	}

	// the failure, reported by call, as the operation's exception
	private static IdempotencyStoreException claimFailed(String operation, IdempotencyKey key, RuntimeException ex) {
		return (ex instanceof IdempotencyStoreException storeException) ? storeException
				: new IdempotencyStoreException("Fast tier failed to " + operation + " key '" + key + "'", ex);
	}

	// nothing will run: the claim must not keep blocking the retries
	@Nullable RuntimeException undoClaim(IdempotencyKey key, OwnerToken token) {
		try {
			call(ACQUIRE, () -> this.store.release(key, token));
			return null;
		}
		catch (RuntimeException ex) {
			return ex;
		}
	}

	// Copy the durable tier's replay over our claim, for no longer than the durable tier
	// keeps the record. askedAt: System.nanoTime() before the durable tier was asked
	void rewarm(IdempotencyKey key, OwnerToken token, AcquireResult.Replay replay, Duration ttl, long askedAt) {
		if (!replay.response().isReadable()) {
			// nothing to copy: the durable tier answers for this key until it expires
			undoClaim(key, token);
			return;
		}
		Duration remaining = remainingLifetime(replay, askedAt);
		Duration warmTtl = ttl(ttl);
		if (remaining.compareTo(warmTtl) < 0) {
			warmTtl = remaining;
		}
		// whole milliseconds, rounded down: the copy must not outlive the durable record
		Duration finalTtl = Duration.ofMillis(warmTtl.toMillis());
		if (finalTtl.toMillis() <= 0) {
			undoClaim(key, token);
			return;
		}
		if (attempt(ACQUIRE, () -> this.store.complete(key, token, replay.response(), finalTtl)) == null) {
			// the copy failed: our claim must not turn the retries away for its whole
			// lease (a release removes only a claim, never a copy that did land)
			undoClaim(key, token);
		}
	}

	// By the durable tier's own clock when it reports the lifetime, less the time since
	// it was asked (it measured no earlier than that), so that the application's clock,
	// however skewed, cannot lengthen the copy's life.
	private Duration remainingLifetime(AcquireResult.Replay replay, long askedAt) {
		Duration timeToLive = replay.timeToLive();
		if (timeToLive == null) {
			return Duration.between(this.clock.instant(), replay.expiresAt());
		}
		return timeToLive.minusNanos(System.nanoTime() - askedAt);
	}

	// a fast record that contradicts the durable tier
	void drop(String operation, IdempotencyKey key) {
		attempt(operation, () -> this.store.evict(key));
	}

	// empty as well when the fast tier fails: the caller cannot tell more from it
	Optional<IdempotencyRecord> recheck(String operation, IdempotencyKey key) {
		Optional<IdempotencyRecord> found = attempt(operation, () -> this.store.find(key));
		return (found != null) ? found : Optional.empty();
	}

	// tried even while the breaker is open: an operator's
	// eviction must not leave a stale replay behind
	boolean evict(IdempotencyKey key) {
		return call(EVICT, () -> this.store.evict(key));
	}

	// Diagnostics only: when the breaker is open the read fails with the durable
	// failure, so it is not counted as a fallback.
	Optional<IdempotencyRecord> findInstead(IdempotencyKey key, RuntimeException durableFailure) {
		if (!this.breaker.tryAcquirePermission()) {
			throw durableFailure;
		}
		try {
			return call(FIND, () -> this.store.find(key));
		}
		catch (RuntimeException ex) {
			durableFailure.addSuppressed(ex);
			throw durableFailure;
		}
	}

	/**
	 * Stop the threads of the background renewals.
	 */
	void shutdown() {
		this.renewalExecutor.shutdownNow();
	}

	private Duration ttl(Duration ttl) {
		Duration cap = this.ttlCap;
		return (cap != null && cap.compareTo(ttl) < 0) ? cap : ttl;
	}

	private Duration claimTtl(Duration lease, Duration ttl) {
		// a capped fast claim must still outlive its lease, or the first-line lock would
		// vanish under a running handler
		Duration claimTtl = ttl(ttl);
		if (claimTtl.compareTo(lease) < 0) {
			return (lease.compareTo(ttl) < 0) ? lease : ttl;
		}
		return claimTtl;
	}

	// The one call of the fast store: the breaker hears how every call ended, and the
	// listener of every failure, which is thrown on.
	private <T> T call(String operation, Supplier<T> work) {
		T result;
		try {
			result = work.get();
		}
		catch (RuntimeException ex) {
			failed(operation, ex);
			throw ex;
		}
		this.breaker.onSuccess();
		return result;
	}

	// a call whose failure is answered without the fast tier: null when it failed
	private <T> @Nullable T attempt(String operation, Supplier<T> work) {
		try {
			return call(operation, work);
		}
		catch (RuntimeException ex) {
			// reported by call
			return null;
		}
	}

	private boolean permitted(String operation) {
		if (this.breaker.tryAcquirePermission()) {
			return true;
		}
		skipped(operation);
		return false;
	}

	private void skipped(String operation) {
		this.listener.onFallback(operation, null);
	}

	private void failed(String operation, RuntimeException ex) {
		CircuitBreakerState openedFrom = this.breaker.onFailure();
		if (openedFrom == CircuitBreakerState.CLOSED && logger.isWarnEnabled()) {
			logger.warn(
					"Fast tier failed " + this.breaker.getFailureThreshold()
							+ " consecutive times: using the durable tier alone for " + this.breaker.getOpenDuration(),
					ex);
		}
		else if (logger.isDebugEnabled()) {
			logger.debug("Fast tier failed during " + operation + ": using the durable tier", ex);
		}
		this.listener.onFallback(operation, ex);
	}

	private void breakerStateChanged(CircuitBreakerState from, CircuitBreakerState to) {
		if (to == CircuitBreakerState.CLOSED && logger.isInfoEnabled()) {
			logger.info("Fast tier recovered: circuit breaker closed");
		}
		else if (from == CircuitBreakerState.HALF_OPEN && to == CircuitBreakerState.OPEN && logger.isDebugEnabled()) {
			logger.debug("Fast tier trial call failed: circuit breaker open again");
		}
		this.listener.onBreakerStateChange(from, to);
	}

	private static ThreadPoolExecutor newRenewalExecutor() {
		AtomicInteger count = new AtomicInteger();
		return new ThreadPoolExecutor(0, MAX_RENEWAL_THREADS, 60, TimeUnit.SECONDS, new SynchronousQueue<>(),
				(runnable) -> {
					Thread thread = new Thread(runnable, "idempotency-fast-renewal-" + count.incrementAndGet());
					thread.setDaemon(true);
					return thread;
				});
	}

	/**
	 * How the fast tier answered a call whose answer is a yes or a no.
	 */
	enum Outcome {

		/**
		 * The fast tier answered {@code true}.
		 */
		APPLIED,

		/**
		 * The fast tier answered {@code false}.
		 */
		REFUSED,

		/**
		 * The fast tier was skipped or failed; the failure has been reported.
		 */
		UNAVAILABLE

	}

}
