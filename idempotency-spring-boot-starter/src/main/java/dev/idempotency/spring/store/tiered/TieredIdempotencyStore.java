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
import java.util.Optional;

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
 * {@link IdempotencyStore} made of two stores: a fast one (typically Redis) that answers
 * hot replays in one round trip and turns most concurrent duplicates away early, and a
 * durable one (typically PostgreSQL) that is the source of truth.
 * <p>
 * <b>Authority.</b> The durable tier decides: a key is {@link AcquireResult.Acquired
 * acquired} only when the durable tier grants it, and completions, releases and
 * extensions are fenced by the durable tier. The fast tier is a cache of completed
 * records and a cheap first-line lock; it may lose its data at any time (flush, eviction,
 * failover) without a handler ever running twice. A fast-tier record is only completed
 * after the durable one, so a replay served by the fast tier is always one the durable
 * tier holds.
 * <p>
 * <b>Acquire.</b> The fast tier is asked first. A replay or an in-progress answer is
 * returned as is (one fast round trip). A fingerprint mismatch is confirmed by the
 * durable tier, because a fast-tier claim left behind by a failed release must not refuse
 * a key the durable tier has freed. When the fast tier grants the key, the durable tier
 * is asked with the same token: its grant is returned; its replay is returned and copied
 * into the fast tier (the fast tier had lost the record); any other answer is returned
 * after releasing the fast claim.
 * <p>
 * <b>Fast-tier failures.</b> A failing fast tier is skipped: the operation is served by
 * the durable tier alone and {@link TieredStoreListener#onFallback counted}. A circuit
 * breaker opens after {@link #setFailureThreshold consecutive failures} and skips the
 * fast tier for {@link #setOpenDuration a while}, so that requests stop paying its
 * time-outs; then one trial call decides whether it closes again. A failing durable tier
 * fails the operation: without the source of truth nothing may run.
 * <p>
 * Thread-safe; configure it before use. No argument may be {@code null} unless stated.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class TieredIdempotencyStore implements IdempotencyStore {

	private static final Log logger = LogFactory.getLog(TieredIdempotencyStore.class);

	private static final String ACQUIRE = "acquire";

	private static final String COMPLETE = "complete";

	private static final String RELEASE = "release";

	private static final String EXTEND = "extend";

	private static final String FIND = "find";

	private static final String EVICT = "evict";

	private final IdempotencyStore fast;

	private final IdempotencyStore durable;

	private final CircuitBreaker breaker;

	private volatile @Nullable Duration fastTtl;

	private volatile Clock clock = Clock.systemUTC();

	private volatile TieredStoreListener listener = TieredStoreListener.NONE;

	/**
	 * Create a tiered store.
	 * @param fast the fast tier (a cache and first-line lock), never {@code null}
	 * @param durable the durable tier (the source of truth), never {@code null}
	 */
	public TieredIdempotencyStore(IdempotencyStore fast, IdempotencyStore durable) {
		this.fast = Objects.requireNonNull(fast, "'fast' must not be null");
		this.durable = Objects.requireNonNull(durable, "'durable' must not be null");
		this.breaker = new CircuitBreaker(this::breakerStateChanged);
	}

	/**
	 * Cap how long the fast tier keeps a record. Defaults to {@code null}: as long as the
	 * record lives. A shorter hot window saves fast-tier memory; older replays are then
	 * served by the durable tier (and copied back into the fast tier). A replay served by
	 * the fast tier advertises the fast tier's expiry, which is never later than the real
	 * one.
	 * @param fastTtl the cap, positive, or {@code null} for none
	 */
	public void setFastTtl(@Nullable Duration fastTtl) {
		if (fastTtl != null && (fastTtl.isNegative() || fastTtl.isZero())) {
			throw new IllegalArgumentException("'fastTtl' must be positive");
		}
		this.fastTtl = fastTtl;
	}

	/**
	 * Set how many consecutive fast-tier failures open the circuit breaker. Defaults to
	 * 3.
	 * @param failureThreshold the threshold, at least 1
	 */
	public void setFailureThreshold(int failureThreshold) {
		this.breaker.setFailureThreshold(failureThreshold);
	}

	/**
	 * Set how long the open circuit breaker skips the fast tier before one trial call may
	 * use it again. Defaults to 5 seconds.
	 * @param openDuration the duration, positive
	 */
	public void setOpenDuration(Duration openDuration) {
		this.breaker.setOpenDuration(openDuration);
	}

	/**
	 * Set the clock of the circuit breaker's timing and of the remaining lifetime of a
	 * record copied from the durable tier into the fast tier. Defaults to the system UTC
	 * clock. Record decisions never use it: the stores use their own clocks.
	 * @param clock the clock
	 */
	public void setClock(Clock clock) {
		this.clock = Objects.requireNonNull(clock, "'clock' must not be null");
		this.breaker.setClock(clock);
	}

	/**
	 * Set the listener told about fallbacks and circuit breaker transitions. Defaults to
	 * {@link TieredStoreListener#NONE}.
	 * @param listener the listener
	 */
	public void setListener(TieredStoreListener listener) {
		this.listener = Objects.requireNonNull(listener, "'listener' must not be null");
	}

	/**
	 * Return the listener told about fallbacks and circuit breaker transitions, so that
	 * another one can be added to it without replacing it.
	 * @return the listener, never {@code null}
	 */
	public TieredStoreListener getListener() {
		return this.listener;
	}

	/**
	 * Return the fast tier, for diagnostics such as health checks.
	 * @return the fast tier
	 */
	public IdempotencyStore getFastTier() {
		return this.fast;
	}

	/**
	 * Return the durable tier (the source of truth), for diagnostics such as health
	 * checks: {@link #find} falls back to the fast tier when it fails, so only a direct
	 * probe shows its outage.
	 * @return the durable tier
	 */
	public IdempotencyStore getDurableTier() {
		return this.durable;
	}

	/**
	 * Return the state of the circuit breaker that guards the fast tier.
	 * @return the current state
	 */
	public CircuitBreakerState getCircuitBreakerState() {
		return this.breaker.getState();
	}

	/**
	 * Return the number of consecutive fast-tier failures counted by the circuit breaker.
	 * @return the count, 0 after a success
	 */
	public int getConsecutiveFastFailures() {
		return this.breaker.getConsecutiveFailures();
	}

	@Override
	public AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token, Duration lease,
			Duration ttl) {
		if (!this.breaker.tryAcquirePermission()) {
			skipped(ACQUIRE);
			return this.durable.acquire(key, fingerprint, token, lease, ttl);
		}
		AcquireResult fastResult;
		try {
			fastResult = this.fast.acquire(key, fingerprint, token, lease, fastClaimTtl(lease, ttl));
		}
		catch (RuntimeException ex) {
			fastFailed(ACQUIRE, ex);
			return this.durable.acquire(key, fingerprint, token, lease, ttl);
		}
		this.breaker.onSuccess();
		if (fastResult instanceof AcquireResult.Acquired) {
			return acquireDurable(key, fingerprint, token, lease, ttl);
		}
		if (fastResult instanceof AcquireResult.Mismatch) {
			return confirmMismatch(key, fingerprint, token, lease, ttl);
		}
		return fastResult;
	}

	private AcquireResult acquireDurable(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
			Duration lease, Duration ttl) {
		AcquireResult result;
		try {
			result = this.durable.acquire(key, fingerprint, token, lease, ttl);
		}
		catch (RuntimeException ex) {
			// nothing will run: do not leave our claim blocking the retries
			RuntimeException releaseFailure = releaseFast(key, token);
			if (releaseFailure != null) {
				ex.addSuppressed(releaseFailure);
			}
			throw ex;
		}
		if (result instanceof AcquireResult.Replay replay) {
			// the fast tier had lost the record: copy it back over the claim we hold
			rewarm(key, token, replay, ttl);
		}
		else if (!(result instanceof AcquireResult.Acquired)) {
			releaseFast(key, token);
		}
		return result;
	}

	private AcquireResult confirmMismatch(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
			Duration lease, Duration ttl) {
		AcquireResult result = this.durable.acquire(key, fingerprint, token, lease, ttl);
		if (!(result instanceof AcquireResult.Mismatch)) {
			// the fast record contradicts the source of truth (a claim whose release
			// failed, for instance): drop it so that it stops refusing this key
			tryFast(ACQUIRE, () -> this.fast.evict(key));
		}
		return result;
	}

	private void rewarm(IdempotencyKey key, OwnerToken token, AcquireResult.Replay replay, Duration ttl) {
		Duration remaining = Duration.between(this.clock.instant(), replay.expiresAt());
		Duration warmTtl = fastTtl(ttl);
		if (remaining.compareTo(warmTtl) < 0) {
			warmTtl = remaining;
		}
		if (warmTtl.toMillis() > 0) {
			Duration finalTtl = warmTtl;
			tryFast(ACQUIRE, () -> this.fast.complete(key, token, replay.response(), finalTtl));
		}
		else {
			releaseFast(key, token);
		}
	}

	@Override
	public boolean complete(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
		// durable first: the client must never receive a response that could be lost
		if (!this.durable.complete(key, token, response, ttl)) {
			return false;
		}
		if (permitFast(COMPLETE)) {
			// false (the fast record was lost or taken over) is harmless: the
			// next acquire finds the durable record and copies it to the fast tier
			tryFast(COMPLETE, () -> this.fast.complete(key, token, response, fastTtl(ttl)));
		}
		return true;
	}

	@Override
	public boolean release(IdempotencyKey key, OwnerToken token) {
		boolean released = this.durable.release(key, token);
		// only ever removes a record that this token owns, whatever the durable answer
		if (permitFast(RELEASE)) {
			tryFast(RELEASE, () -> this.fast.release(key, token));
		}
		return released;
	}

	@Override
	public boolean extend(IdempotencyKey key, OwnerToken token, Duration lease) {
		boolean extended = this.durable.extend(key, token, lease);
		if (extended && permitFast(EXTEND)) {
			tryFast(EXTEND, () -> this.fast.extend(key, token, lease));
		}
		return extended;
	}

	@Override
	public Optional<IdempotencyRecord> find(IdempotencyKey key) {
		try {
			return this.durable.find(key);
		}
		catch (RuntimeException ex) {
			if (!this.breaker.tryAcquirePermission()) {
				throw ex;
			}
			Optional<IdempotencyRecord> found;
			try {
				found = this.fast.find(key);
			}
			catch (RuntimeException fastEx) {
				fastFailed(FIND, fastEx);
				ex.addSuppressed(fastEx);
				throw ex;
			}
			this.breaker.onSuccess();
			return found;
		}
	}

	/**
	 * Delete the record from both tiers, the durable one first (so that no concurrent
	 * acquisition can copy it back into the fast tier afterwards). The fast tier is tried
	 * even while the circuit breaker is open: an operator's eviction must not leave a
	 * stale replay behind.
	 * @param key the key
	 * @return {@code true} if either tier deleted a record
	 * @throws IdempotencyStoreException if either tier cannot answer; the eviction may
	 * then be repeated
	 */
	@Override
	public boolean evict(IdempotencyKey key) {
		boolean evictedDurable = this.durable.evict(key);
		boolean evictedFast;
		try {
			evictedFast = this.fast.evict(key);
		}
		catch (RuntimeException ex) {
			fastFailed(EVICT, ex);
			throw new IdempotencyStoreException(
					"Evicted '" + key + "' from the durable tier, but the fast tier failed: evict it again", ex);
		}
		this.breaker.onSuccess();
		return evictedDurable || evictedFast;
	}

	private Duration fastTtl(Duration ttl) {
		Duration cap = this.fastTtl;
		return (cap != null && cap.compareTo(ttl) < 0) ? cap : ttl;
	}

	private Duration fastClaimTtl(Duration lease, Duration ttl) {
		// a capped fast claim must still outlive its lease, or the first-line lock would
		// vanish under a running handler
		Duration claimTtl = fastTtl(ttl);
		if (claimTtl.compareTo(lease) < 0) {
			return (lease.compareTo(ttl) < 0) ? lease : ttl;
		}
		return claimTtl;
	}

	private boolean permitFast(String operation) {
		if (this.breaker.tryAcquirePermission()) {
			return true;
		}
		skipped(operation);
		return false;
	}

	// best effort: the outcome feeds the breaker, a failure is counted and returned
	private @Nullable RuntimeException tryFast(String operation, Runnable call) {
		try {
			call.run();
		}
		catch (RuntimeException ex) {
			fastFailed(operation, ex);
			return ex;
		}
		this.breaker.onSuccess();
		return null;
	}

	private @Nullable RuntimeException releaseFast(IdempotencyKey key, OwnerToken token) {
		return tryFast(ACQUIRE, () -> this.fast.release(key, token));
	}

	private void skipped(String operation) {
		this.listener.onFallback(operation, null);
	}

	private void fastFailed(String operation, RuntimeException ex) {
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

}
