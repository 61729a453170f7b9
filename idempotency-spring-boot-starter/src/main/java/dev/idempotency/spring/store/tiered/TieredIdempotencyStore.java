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
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.IdempotencyStatus;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.IdempotencyStoreException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
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
 * Thread-safe; configure it before use. No argument may be {@code null} unless stated.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class TieredIdempotencyStore implements IdempotencyStore, DisposableBean {

	private static final Log logger = LogFactory.getLog(TieredIdempotencyStore.class);

	private static final String ACQUIRE = "acquire";

	private static final String COMPLETE = "complete";

	private static final String RELEASE = "release";

	private static final String EXTEND = "extend";

	private static final String FIND = "find";

	private static final String EVICT = "evict";

	// lookup claims registered between two sweeps of the ones past their record's expiry
	private static final int SWEEP_INTERVAL = 1024;

	// fast-tier renewals under way at once; past that a renewal is skipped (and counted)
	private static final int MAX_FAST_RENEWAL_THREADS = 256;

	private final IdempotencyStore fast;

	private final IdempotencyStore durable;

	private final CircuitBreaker breaker;

	private volatile @Nullable Duration fastTtl;

	private volatile Clock clock = Clock.systemUTC();

	private volatile TieredStoreListener listener = TieredStoreListener.NONE;

	private volatile TieredClaimMode claimMode = TieredClaimMode.DURABLE;

	// lookup claims granted by this instance and not yet ended, by owner token
	private final Map<OwnerToken, LookupClaim> lookupClaims = new ConcurrentHashMap<>();

	private final AtomicInteger claimsSinceSweep = new AtomicInteger();

	// owners whose fast-tier renewal is under way
	private final Set<OwnerToken> fastRenewals = ConcurrentHashMap.newKeySet();

	private final ThreadPoolExecutor fastRenewalExecutor = newFastRenewalExecutor();

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
		if (claimMode == TieredClaimMode.LOOKUP && !(this.durable instanceof UnclaimedCompletion)) {
			throw new IllegalArgumentException("The lookup claim mode needs a durable tier that implements "
					+ UnclaimedCompletion.class.getSimpleName() + ", " + this.durable.getClass().getName()
					+ " does not");
		}
		this.claimMode = claimMode;
	}

	/**
	 * Return where the claim of a first request is recorded.
	 * @return the claim mode
	 */
	public TieredClaimMode getClaimMode() {
		return this.claimMode;
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
	 * Set the clock of the circuit breaker's timing. Defaults to the system UTC clock.
	 * Record decisions never use it: the stores use their own clocks. The lifetime of a
	 * record copied from the durable tier into the fast tier is the one the durable tier
	 * {@linkplain AcquireResult.Replay#timeToLive() reports}, by its own clock; only for
	 * a durable tier that reports none is it measured against this clock.
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
		boolean lookup = this.claimMode == TieredClaimMode.LOOKUP;
		if (fastResult instanceof AcquireResult.Acquired) {
			return lookup ? lookUpDurable(key, fingerprint, token, lease, ttl)
					: acquireDurable(key, fingerprint, token, lease, ttl);
		}
		if (fastResult instanceof AcquireResult.Mismatch) {
			return lookup ? confirmMismatchByLookUp(key, fingerprint)
					: confirmMismatch(key, fingerprint, token, lease, ttl);
		}
		if (fastResult instanceof AcquireResult.Replay replay && !replay.response().isReadable()) {
			return replayFromDurable(key, fingerprint, replay);
		}
		return fastResult;
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
				tryFast(ACQUIRE, () -> this.fast.evict(key));
				return new AcquireResult.Replay(response, record.expiresAt(), record.timeToLive());
			}
		}
		return damaged;
	}

	// lookup mode, the fast tier granted the key: read the durable record, write nothing
	private AcquireResult lookUpDurable(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
			Duration lease, Duration ttl) {
		long askedAt = System.nanoTime();
		Optional<IdempotencyRecord> found;
		try {
			found = this.durable.find(key);
		}
		catch (RuntimeException ex) {
			RuntimeException releaseFailure = releaseFast(key, token);
			if (releaseFailure != null) {
				ex.addSuppressed(releaseFailure);
			}
			throw ex;
		}
		if (found.isEmpty()) {
			registerLookupClaim(key, fingerprint, token, lease, ttl);
			return new AcquireResult.Acquired(token);
		}
		IdempotencyRecord record = found.get();
		if (!record.fingerprint().equals(fingerprint)) {
			releaseFast(key, token);
			return new AcquireResult.Mismatch();
		}
		StoredResponse response = record.response();
		if (record.status() == IdempotencyStatus.COMPLETED && response != null) {
			// the fast tier had lost the record: copy it back over the claim we hold
			AcquireResult.Replay replay = new AcquireResult.Replay(response, record.expiresAt(), record.timeToLive());
			rewarm(key, token, replay, ttl, askedAt);
			return replay;
		}
		// a durable claim (made while the fast tier was skipped): only the durable tier
		// can tell a live lease from a lapsed one and take it over atomically
		return acquireDurable(key, fingerprint, token, lease, ttl);
	}

	// lookup mode: the fast record may be a live claim the durable tier knows nothing of,
	// so the durable tier can only overrule the mismatch with a replay, never claim
	private AcquireResult confirmMismatchByLookUp(IdempotencyKey key, RequestFingerprint fingerprint) {
		Optional<IdempotencyRecord> found = this.durable.find(key);
		if (found.isPresent()) {
			IdempotencyRecord record = found.get();
			StoredResponse response = record.response();
			if (record.fingerprint().equals(fingerprint) && record.status() == IdempotencyStatus.COMPLETED
					&& response != null) {
				return new AcquireResult.Replay(response, record.expiresAt(), record.timeToLive());
			}
		}
		return new AcquireResult.Mismatch();
	}

	private void registerLookupClaim(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
			Duration lease, Duration ttl) {
		long now = System.nanoTime();
		Duration lifetime = (lease.compareTo(ttl) > 0) ? lease : ttl;
		this.lookupClaims.put(token, new LookupClaim(key, fingerprint, now + saturatedNanos(lifetime)));
		if (this.claimsSinceSweep.incrementAndGet() >= SWEEP_INTERVAL) {
			this.claimsSinceSweep.set(0);
			// claims whose end was never reported (the completion failed for good): their
			// records have expired in the fast tier by now
			this.lookupClaims.values().removeIf((claim) -> claim.expiredAt(now));
		}
	}

	private @Nullable LookupClaim lookupClaim(IdempotencyKey key, OwnerToken token) {
		LookupClaim claim = this.lookupClaims.get(token);
		return (claim != null && claim.key().equals(key)) ? claim : null;
	}

	private AcquireResult acquireDurable(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
			Duration lease, Duration ttl) {
		long askedAt = System.nanoTime();
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
			rewarm(key, token, replay, ttl, askedAt);
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

	// askedAt: System.nanoTime() before the durable tier was asked
	private void rewarm(IdempotencyKey key, OwnerToken token, AcquireResult.Replay replay, Duration ttl, long askedAt) {
		if (!replay.response().isReadable()) {
			// nothing to copy: the durable tier answers for this key until it expires
			releaseFast(key, token);
			return;
		}
		Duration remaining = remainingLifetime(replay, askedAt);
		Duration warmTtl = fastTtl(ttl);
		if (remaining.compareTo(warmTtl) < 0) {
			warmTtl = remaining;
		}
		// whole milliseconds, rounded down: the copy must not outlive the durable record
		Duration finalTtl = Duration.ofMillis(warmTtl.toMillis());
		if (finalTtl.toMillis() > 0) {
			tryFast(ACQUIRE, () -> this.fast.complete(key, token, replay.response(), finalTtl));
		}
		else {
			releaseFast(key, token);
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

	@Override
	public boolean complete(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
		LookupClaim claim = lookupClaim(key, token);
		if (claim != null) {
			return completeLookupClaim(key, token, claim, response, ttl);
		}
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

	// lookup mode: the fast tier holds the claim, so its owner-token check fences the
	// completion before the one durable write
	private boolean completeLookupClaim(IdempotencyKey key, OwnerToken token, LookupClaim claim,
			StoredResponse response, Duration ttl) {
		if (permitFast(COMPLETE)) {
			boolean completedFast;
			try {
				completedFast = this.fast.complete(key, token, response, fastTtl(ttl));
			}
			catch (RuntimeException ex) {
				// the fast tier cannot fence: the durable tier still refuses to overwrite
				// another owner's record
				fastFailed(COMPLETE, ex);
				return completeDurably(key, token, claim, response, ttl, false);
			}
			this.breaker.onSuccess();
			if (!completedFast && takenOver(key, token)) {
				this.lookupClaims.remove(token);
				return false;
			}
			return completeDurably(key, token, claim, response, ttl, completedFast);
		}
		return completeDurably(key, token, claim, response, ttl, false);
	}

	private boolean completeDurably(IdempotencyKey key, OwnerToken token, LookupClaim claim, StoredResponse response,
			Duration ttl, boolean completedFast) {
		// an exception keeps the claim: the engine retries the completion
		boolean stored = ((UnclaimedCompletion) this.durable).completeUnclaimed(key, claim.fingerprint(), token,
				response, ttl);
		this.lookupClaims.remove(token);
		if (!stored && completedFast) {
			// another execution's response is the durable one: do not let the fast tier
			// replay ours
			tryFast(COMPLETE, () -> this.fast.evict(key));
		}
		return stored;
	}

	// the fast tier refused our completion: fenced if another owner holds the record
	// there, not if the record is simply gone (flushed, evicted)
	private boolean takenOver(IdempotencyKey key, OwnerToken token) {
		Optional<IdempotencyRecord> found;
		try {
			found = this.fast.find(key);
		}
		catch (RuntimeException ex) {
			fastFailed(COMPLETE, ex);
			return false;
		}
		this.breaker.onSuccess();
		return found.isPresent() && !found.get().owner().equals(token);
	}

	@Override
	public boolean release(IdempotencyKey key, OwnerToken token) {
		if (lookupClaim(key, token) != null) {
			// the durable tier holds nothing of this claim; the engine does not retry a
			// release, so the claim ends here whatever happens
			this.lookupClaims.remove(token);
			return onLookupClaim(RELEASE, key, () -> this.fast.release(key, token));
		}
		boolean released = this.durable.release(key, token);
		// only ever removes a record that this token owns, whatever the durable answer
		if (permitFast(RELEASE)) {
			tryFast(RELEASE, () -> this.fast.release(key, token));
		}
		return released;
	}

	@Override
	public boolean extend(IdempotencyKey key, OwnerToken token, Duration lease) {
		LookupClaim claim = lookupClaim(key, token);
		if (claim != null) {
			boolean extended = onLookupClaim(EXTEND, key, () -> this.fast.extend(key, token, lease));
			if (extended) {
				this.lookupClaims.computeIfPresent(token, (owner, current) -> current.extendedBy(lease));
			}
			return extended;
		}
		boolean extended = this.durable.extend(key, token, lease);
		if (extended && permitFast(EXTEND)) {
			extendFastInBackground(key, token, lease);
		}
		return extended;
	}

	// The durable lease is renewed: the fast tier's renewal is best effort and must never
	// hold up the next durable renewal, so it runs on a thread of its own, one at a time
	// per owner. A fast tier that hangs then holds one thread per running execution at
	// most; its claims run out with their TTL, and duplicates fall through to the durable
	// tier, which still holds the live lease.
	private void extendFastInBackground(IdempotencyKey key, OwnerToken token, Duration lease) {
		if (!this.fastRenewals.add(token)) {
			skipped(EXTEND);
			return;
		}
		try {
			this.fastRenewalExecutor.execute(() -> {
				try {
					tryFast(EXTEND, () -> this.fast.extend(key, token, lease));
				}
				finally {
					this.fastRenewals.remove(token);
				}
			});
		}
		catch (RejectedExecutionException ex) {
			this.fastRenewals.remove(token);
			skipped(EXTEND);
		}
	}

	/**
	 * Stop the threads of the fast tier's background renewals.
	 */
	@Override
	public void destroy() {
		this.fastRenewalExecutor.shutdownNow();
	}

	@Override
	public Optional<IdempotencyRecord> find(IdempotencyKey key) {
		Optional<IdempotencyRecord> durableRecord;
		try {
			durableRecord = this.durable.find(key);
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
		if (durableRecord.isEmpty() && this.claimMode == TieredClaimMode.LOOKUP && permitFast(FIND)) {
			// a lookup claim in progress is only known to the fast tier
			Optional<IdempotencyRecord> found;
			try {
				found = this.fast.find(key);
			}
			catch (RuntimeException ex) {
				fastFailed(FIND, ex);
				return durableRecord;
			}
			this.breaker.onSuccess();
			return found;
		}
		return durableRecord;
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

	@Override
	public String name() {
		return "tiered";
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

	// lookup mode: the fast tier alone holds the claim, so its failure fails the
	// operation
	private boolean onLookupClaim(String operation, IdempotencyKey key, BooleanSupplier call) {
		if (!this.breaker.tryAcquirePermission()) {
			throw new IdempotencyStoreException("Cannot " + operation + " the claim of key '" + key
					+ "': the fast tier holds it and is skipped while the circuit breaker is open");
		}
		boolean result;
		try {
			result = call.getAsBoolean();
		}
		catch (RuntimeException ex) {
			fastFailed(operation, ex);
			throw (ex instanceof IdempotencyStoreException storeException) ? storeException
					: new IdempotencyStoreException("Fast tier failed to " + operation + " key '" + key + "'", ex);
		}
		this.breaker.onSuccess();
		return result;
	}

	private static ThreadPoolExecutor newFastRenewalExecutor() {
		AtomicInteger count = new AtomicInteger();
		return new ThreadPoolExecutor(0, MAX_FAST_RENEWAL_THREADS, 60, TimeUnit.SECONDS, new SynchronousQueue<>(),
				(runnable) -> {
					Thread thread = new Thread(runnable, "idempotency-fast-renewal-" + count.incrementAndGet());
					thread.setDaemon(true);
					return thread;
				});
	}

	private static long saturatedNanos(Duration duration) {
		// far enough for any record, close enough that nanoTime arithmetic cannot wrap
		Duration cap = Duration.ofDays(36_500);
		return ((duration.compareTo(cap) < 0) ? duration : cap).toNanos();
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

	/**
	 * A lookup claim granted by this instance: what its completion needs to write the
	 * durable record, and until when (by {@link System#nanoTime()}) the claim's record
	 * can live.
	 */
	private record LookupClaim(IdempotencyKey key, RequestFingerprint fingerprint, long deadlineNanos) {

		boolean expiredAt(long nanoTime) {
			return nanoTime - this.deadlineNanos > 0;
		}

		LookupClaim extendedBy(Duration lease) {
			long candidate = System.nanoTime() + saturatedNanos(lease);
			return (candidate - this.deadlineNanos > 0) ? new LookupClaim(this.key, this.fingerprint, candidate) : this;
		}

	}

}
