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
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

import javax.sql.DataSource;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.IdempotencyStatus;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.IdempotencyStoreException;
import dev.idempotency.spring.store.UnclaimedCompletion;
import dev.idempotency.spring.transaction.TransactionalClaims;
import dev.idempotency.spring.transaction.TransactionalStore;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.DisposableBean;

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
 * <b>Claim modes.</b> The above is the default {@link TieredClaimMode#DURABLE durable}
 * claim. In {@link TieredClaimMode#LOOKUP lookup} claim mode the fast tier's claim is the
 * only claim while the handler runs: a key granted by the fast tier is looked up in the
 * durable tier ({@link IdempotencyStore#find find}, one read) and acquired if the durable
 * tier holds no record; {@link #complete} writes the fast tier first (its owner-token
 * check is the fencing) and then the durable tier once
 * ({@link UnclaimedCompletion#completeUnclaimed}); {@link #release} and {@link #extend}
 * only use the fast tier. The store remembers the fingerprint of each lookup claim it
 * granted until the claim ends, so the completion of a claim must be made through the
 * same instance that acquired it (as {@code IdempotencyEngine} does). When the fast tier
 * fails or the breaker is open, keys are claimed in the durable tier as in durable mode.
 * A duplicate that arrives while the fast tier has lost (or cannot reach) a running
 * handler's claim runs the handler a second time: see {@link TieredClaimMode#LOOKUP}.
 * <p>
 * <b>Claim commit.</b> By default the durable claim is on durable storage before the
 * handler runs. With {@link #setClaimCommit(ClaimCommit) ClaimCommit.ASYNCHRONOUS}, a
 * durable claim made while the fast tier holds the same claim does not wait for the
 * durable tier's flush; its owner writes it again if the durable tier loses it in a
 * crash. See {@link ClaimCommit#ASYNCHRONOUS}.
 * <p>
 * Thread-safe; configure it before use. No argument may be {@code null} unless stated.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class TieredIdempotencyStore implements IdempotencyStore, TransactionalStore, DisposableBean {

	// how young a fast claim (or renewal) is when a duplicate meeting it asks the durable
	// tier whether the key's request has in fact ended
	static final Duration FRESH_CLAIM = Duration.ofMillis(500);

	private final FastTier fast;

	private final IdempotencyStore durable;

	private final DurableClaimStrategy durableClaim;

	private volatile ClaimStrategy claimStrategy;

	/**
	 * Create a tiered store.
	 * @param fast the fast tier (a cache and first-line lock), never {@code null}
	 * @param durable the durable tier (the source of truth), never {@code null}
	 */
	public TieredIdempotencyStore(IdempotencyStore fast, IdempotencyStore durable) {
		this.fast = new FastTier(Objects.requireNonNull(fast, "'fast' must not be null"));
		this.durable = Objects.requireNonNull(durable, "'durable' must not be null");
		this.durableClaim = new DurableClaimStrategy(this.fast, this.durable);
		this.claimStrategy = this.durableClaim;
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
		this.fast.setTtlCap(fastTtl);
	}

	/**
	 * Set where the claim of a first request is recorded while its handler runs. Defaults
	 * to {@link TieredClaimMode#DURABLE}: in both tiers, so that no duplicate ever runs
	 * the handler again, at the cost of two durable writes per first request.
	 * {@link TieredClaimMode#LOOKUP} replaces the durable claim with a durable read and
	 * accepts the failure window described there.
	 * @param claimMode the claim mode
	 * @throws IllegalArgumentException if the mode is {@link TieredClaimMode#LOOKUP} and
	 * the durable tier does not implement {@link UnclaimedCompletion}
	 */
	public void setClaimMode(TieredClaimMode claimMode) {
		Objects.requireNonNull(claimMode, "'claimMode' must not be null");
		this.claimStrategy = switch (claimMode) {
			case DURABLE -> this.durableClaim;
			case LOOKUP -> lookupClaimStrategy();
		};
	}

	private ClaimStrategy lookupClaimStrategy() {
		if (!(this.durable instanceof UnclaimedCompletion unclaimed)) {
			throw new IllegalArgumentException("The lookup claim mode needs a durable tier that implements "
					+ UnclaimedCompletion.class.getSimpleName() + ", " + this.durable.getClass().getName()
					+ " does not");
		}
		return new LookupClaimStrategy(this.durableClaim, this.fast, this.durable, unclaimed);
	}

	/**
	 * Set how the durable claim is committed while the fast tier holds the same claim.
	 * Defaults to {@link ClaimCommit#SYNCHRONOUS}: on durable storage before the handler
	 * runs. {@link ClaimCommit#ASYNCHRONOUS} skips the wait for the durable tier's flush
	 * and accepts the failure window described there. Applies to the durable claim mode,
	 * and to the keys the lookup claim mode claims in the durable tier.
	 * @param claimCommit how the durable claim is committed
	 * @throws IllegalArgumentException if the commit is {@link ClaimCommit#ASYNCHRONOUS}
	 * and the durable tier does not implement both
	 * {@link dev.idempotency.spring.store.AsynchronousClaimCommit} and
	 * {@link UnclaimedCompletion}
	 */
	public void setClaimCommit(ClaimCommit claimCommit) {
		this.durableClaim.setClaimCommit(Objects.requireNonNull(claimCommit, "'claimCommit' must not be null"));
	}

	/**
	 * Return how the durable claim is committed while the fast tier holds the same claim.
	 * @return the claim commit
	 */
	public ClaimCommit getClaimCommit() {
		return this.durableClaim.getClaimCommit();
	}

	/**
	 * Return where the claim of a first request is recorded.
	 * @return the claim mode
	 */
	public TieredClaimMode getClaimMode() {
		return this.claimStrategy.mode();
	}

	/**
	 * Set how many consecutive fast-tier failures open the circuit breaker. Defaults to
	 * 3.
	 * @param failureThreshold the threshold, at least 1
	 */
	public void setFailureThreshold(int failureThreshold) {
		this.fast.getBreaker().setFailureThreshold(failureThreshold);
	}

	/**
	 * Set how long the open circuit breaker skips the fast tier before one trial call may
	 * use it again. Defaults to 5 seconds.
	 * @param openDuration the duration, positive
	 */
	public void setOpenDuration(Duration openDuration) {
		this.fast.getBreaker().setOpenDuration(openDuration);
	}

	/**
	 * Set the clock of the circuit breaker's timing. Defaults to the system UTC clock.
	 * Record decisions never use it: the stores use their own clocks. The lifetime of a
	 * record copied from the durable tier into the fast tier is the one the durable tier
	 * {@linkplain AcquireResult.Replay#timeToLive() reports}, by its own clock; only for
	 * a durable tier that reports none is it measured against this clock.
	 * @param clock the clock
	 */
	public void setClock(Clock clock) {
		this.fast.setClock(Objects.requireNonNull(clock, "'clock' must not be null"));
	}

	/**
	 * Set the listener told about fallbacks and circuit breaker transitions. Defaults to
	 * {@link TieredStoreListener#NONE}.
	 * @param listener the listener
	 */
	public void setListener(TieredStoreListener listener) {
		this.fast.setListener(Objects.requireNonNull(listener, "'listener' must not be null"));
	}

	/**
	 * Return the listener told about fallbacks and circuit breaker transitions, so that
	 * another one can be added to it without replacing it.
	 * @return the listener, never {@code null}
	 */
	public TieredStoreListener getListener() {
		return this.fast.getListener();
	}

	/**
	 * Return the fast tier, for diagnostics such as health checks.
	 * @return the fast tier
	 */
	public IdempotencyStore getFastTier() {
		return this.fast.getStore();
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
	 * Return the data source of the durable tier, whose transactions the claims join in
	 * the transactional mode.
	 * @return the data source
	 * @throws IllegalStateException unless the durable tier is transactional and claims
	 * are {@link TieredClaimMode#DURABLE durable}: the lookup claim completes Redis
	 * before PostgreSQL
	 */
	@Override
	public DataSource getTransactionalDataSource() {
		if (!(this.durable instanceof TransactionalStore transactional)) {
			throw new IllegalStateException("The durable tier (" + this.durable.name()
					+ ") cannot hold a claim in a transaction of the application");
		}
		if (this.claimStrategy.mode() != TieredClaimMode.DURABLE) {
			throw new IllegalStateException("Transactional claims need idempotency.tiered.claim=durable: the "
					+ this.claimStrategy.mode().name().toLowerCase(Locale.ROOT)
					+ " claim completes Redis before PostgreSQL");
		}
		return transactional.getTransactionalDataSource();
	}

	@Override
	public void enableTransactionalClaims() {
		((TransactionalStore) this.durable).enableTransactionalClaims();
	}

	/**
	 * Return the state of the circuit breaker that guards the fast tier.
	 * @return the current state
	 */
	public CircuitBreakerState getCircuitBreakerState() {
		return this.fast.getBreaker().getState();
	}

	/**
	 * Return the number of consecutive fast-tier failures counted by the circuit breaker.
	 * @return the count, 0 after a success
	 */
	public int getConsecutiveFastFailures() {
		return this.fast.getBreaker().getConsecutiveFailures();
	}

	@Override
	public AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token, Duration lease,
			Duration ttl) {
		if (this.claimStrategy.mode() != TieredClaimMode.DURABLE && TransactionalClaims.isActive()) {
			throw new IllegalStateException("The transactional mode needs the durable claim: the lookup claim"
					+ " completes the fast tier before the durable one");
		}
		AcquireResult fastResult = this.fast.acquire(key, fingerprint, token, lease, ttl);
		if (fastResult == null) {
			// the fast tier is skipped or failed: the durable tier alone answers
			return this.durable.acquire(key, fingerprint, token, lease, ttl);
		}
		if (fastResult instanceof AcquireResult.Acquired) {
			return this.claimStrategy.claimGranted(key, fingerprint, token, lease, ttl);
		}
		if (fastResult instanceof AcquireResult.Mismatch) {
			return this.claimStrategy.confirmMismatch(key, fingerprint, token, lease, ttl);
		}
		if (fastResult instanceof AcquireResult.Replay replay && !replay.response().isReadable()) {
			return replayFromDurable(key, fingerprint, replay);
		}
		if (fastResult instanceof AcquireResult.InProgress inProgress
				&& lease.minus(inProgress.retryAfter()).compareTo(FRESH_CLAIM) < 0) {
			return completedInDurable(key, fingerprint, inProgress);
		}
		return fastResult;
	}

	// A fast claim made moments ago may be that of a request that found its key's record
	// in the durable tier only, after the fast tier lost it (a Redis restart, an
	// eviction), and is copying it back: until it has, every duplicate would meet its
	// claim and be told that the key is in progress, although the key's request ended
	// long ago. For a claim that young (or just renewed) the durable tier is asked, and
	// a completed record with the same fingerprint is replayed; anything else, a durable
	// tier that fails included, is answered as the fast tier answered. The claim met is
	// then stale, whoever holds it: the key's request has ended. It is dropped, or a
	// claim whose owner died after completing the durable tier (a crash between the
	// commit and the fast completion) would answer "in progress" for the rest of its
	// lease to every duplicate after the young ones; the next acquire copies the record
	// back.
	private AcquireResult completedInDurable(IdempotencyKey key, RequestFingerprint fingerprint,
			AcquireResult.InProgress inProgress) {
		Optional<IdempotencyRecord> found;
		try {
			found = this.durable.find(key);
		}
		catch (RuntimeException ex) {
			return inProgress;
		}
		if (found.isPresent()) {
			IdempotencyRecord record = found.get();
			StoredResponse response = record.response();
			if (record.status() == IdempotencyStatus.COMPLETED && record.fingerprint().equals(fingerprint)
					&& response != null) {
				this.fast.drop(FastTier.ACQUIRE, key);
				return new AcquireResult.Replay(response, record.expiresAt(), record.timeToLive());
			}
		}
		return inProgress;
	}

	// the fast tier's copy of a completed record cannot be decoded, the durable one may
	// be intact: dropping the damaged copy lets the next acquire copy it back
	private AcquireResult replayFromDurable(IdempotencyKey key, RequestFingerprint fingerprint,
			AcquireResult.Replay damaged) {
		Optional<IdempotencyRecord> found = this.durable.find(key);
		if (found.isPresent()) {
			IdempotencyRecord record = found.get();
			StoredResponse response = record.response();
			if (record.fingerprint().equals(fingerprint) && response != null && response.isReadable()) {
				this.fast.drop(FastTier.ACQUIRE, key);
				return new AcquireResult.Replay(response, record.expiresAt(), record.timeToLive());
			}
		}
		return damaged;
	}

	@Override
	public boolean complete(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
		return this.claimStrategy.complete(key, token, response, ttl);
	}

	@Override
	public boolean release(IdempotencyKey key, OwnerToken token) {
		return this.claimStrategy.release(key, token);
	}

	@Override
	public boolean extend(IdempotencyKey key, OwnerToken token, Duration lease) {
		return this.claimStrategy.extend(key, token, lease);
	}

	/**
	 * Stop the threads of the fast tier's background renewals.
	 */
	@Override
	public void destroy() {
		this.fast.shutdown();
	}

	@Override
	public Optional<IdempotencyRecord> find(IdempotencyKey key) {
		Optional<IdempotencyRecord> durableRecord;
		try {
			durableRecord = this.durable.find(key);
		}
		catch (RuntimeException ex) {
			return this.fast.findInstead(key, ex);
		}
		return this.claimStrategy.find(key, durableRecord);
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
			throw new IdempotencyStoreException(
					"Evicted '" + key + "' from the durable tier, but the fast tier failed: evict it again", ex);
		}
		return evictedDurable || evictedFast;
	}

	@Override
	public String name() {
		return "tiered";
	}

}
