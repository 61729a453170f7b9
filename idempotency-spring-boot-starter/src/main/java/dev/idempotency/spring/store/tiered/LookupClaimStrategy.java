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
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.IdempotencyStatus;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.spring.store.UnclaimedCompletion;
import org.jspecify.annotations.Nullable;

/**
 * The {@link TieredClaimMode#LOOKUP lookup claim}: the fast tier's claim is the only one
 * while the handler runs. A key the fast tier granted is looked up in the durable tier
 * (one read) and acquired if the durable tier holds no record; the completion writes the
 * fast tier first (its owner-token check is the fencing) and then the durable tier once,
 * through {@link UnclaimedCompletion}; release and renewal use the fast tier only.
 * <p>
 * The fingerprint of each lookup claim is remembered, by owner token, until the claim
 * ends, because a completion does not carry it. A claim this strategy did not grant was
 * made in the durable tier while the fast tier was skipped, and is handled by the
 * {@link DurableClaimStrategy durable claim}.
 *
 * @author Idempotency contributors
 */
final class LookupClaimStrategy implements ClaimStrategy {

	// lookup claims registered between two sweeps of the ones past their record's expiry
	private static final int SWEEP_INTERVAL = 1024;

	private final DurableClaimStrategy durableClaim;

	private final FastTier fast;

	private final IdempotencyStore durable;

	private final UnclaimedCompletion unclaimed;

	// lookup claims granted and not yet ended, by owner token
	private final Map<OwnerToken, Claim> claims = new ConcurrentHashMap<>();

	private final AtomicInteger claimsSinceSweep = new AtomicInteger();

	/**
	 * Create the strategy.
	 * @param durableClaim the strategy for claims made in the durable tier
	 * @param fast the fast tier
	 * @param durable the durable tier
	 * @param unclaimed the durable tier's completion of keys it never claimed, usually
	 * {@code durable} itself
	 */
	LookupClaimStrategy(DurableClaimStrategy durableClaim, FastTier fast, IdempotencyStore durable,
			UnclaimedCompletion unclaimed) {
		this.durableClaim = durableClaim;
		this.fast = fast;
		this.durable = durable;
		this.unclaimed = unclaimed;
	}

	@Override
	public TieredClaimMode mode() {
		return TieredClaimMode.LOOKUP;
	}

	// read the durable record, write nothing
	@Override
	public AcquireResult claimGranted(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
			Duration lease, Duration ttl) {
		long askedAt = System.nanoTime();
		Optional<IdempotencyRecord> found;
		try {
			found = this.durable.find(key);
		}
		catch (RuntimeException ex) {
			throw ClaimStrategy.undoClaim(this.fast, key, token, ex);
		}
		if (found.isEmpty()) {
			register(key, fingerprint, token, lease, ttl);
			return new AcquireResult.Acquired(token);
		}
		IdempotencyRecord record = found.get();
		if (!record.fingerprint().equals(fingerprint)) {
			this.fast.undoClaim(key, token);
			return new AcquireResult.Mismatch();
		}
		StoredResponse response = record.response();
		if (record.status() == IdempotencyStatus.COMPLETED && response != null) {
			// the fast tier had lost the record: copy it back over the claim we hold
			AcquireResult.Replay replay = new AcquireResult.Replay(response, record.expiresAt(), record.timeToLive());
			this.fast.rewarm(key, token, replay, ttl, askedAt);
			return replay;
		}
		// a durable claim (made while the fast tier was skipped): only the durable tier
		// can tell a live lease from a lapsed one and take it over atomically
		return this.durableClaim.claimGranted(key, fingerprint, token, lease, ttl);
	}

	// the fast record may be a live claim the durable tier knows nothing of, so the
	// durable tier can only overrule the mismatch with a replay, never claim
	@Override
	public AcquireResult confirmMismatch(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
			Duration lease, Duration ttl) {
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

	// the fast tier holds the claim, so its owner-token check fences the completion
	// before the one durable write
	@Override
	public boolean complete(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
		Claim claim = claim(key, token);
		if (claim == null) {
			return this.durableClaim.complete(key, token, response, ttl);
		}
		// unavailable: the fast tier cannot fence, but the durable tier still refuses to
		// overwrite another owner's record
		FastTier.Outcome fastOutcome = this.fast.complete(key, token, response, ttl);
		if (fastOutcome == FastTier.Outcome.REFUSED && takenOver(key, token)) {
			this.claims.remove(token);
			return false;
		}
		return completeDurably(key, token, claim, response, ttl, fastOutcome == FastTier.Outcome.APPLIED);
	}

	private boolean completeDurably(IdempotencyKey key, OwnerToken token, Claim claim, StoredResponse response,
			Duration ttl, boolean completedFast) {
		// an exception keeps the claim: the engine retries the completion
		boolean stored = this.unclaimed.completeUnclaimed(key, claim.fingerprint(), token, response, ttl);
		this.claims.remove(token);
		if (!stored && completedFast) {
			// another execution's response is the durable
			// one: do not let the fast tier replay ours
			this.fast.drop(FastTier.COMPLETE, key);
		}
		return stored;
	}

	// the fast tier refused our completion: fenced if another owner holds the record
	// there, not if the record is simply gone (flushed, evicted) or cannot be read
	private boolean takenOver(IdempotencyKey key, OwnerToken token) {
		Optional<IdempotencyRecord> found = this.fast.recheck(FastTier.COMPLETE, key);
		return found.isPresent() && !found.get().owner().equals(token);
	}

	@Override
	public boolean release(IdempotencyKey key, OwnerToken token) {
		if (claim(key, token) == null) {
			return this.durableClaim.release(key, token);
		}
		// the durable tier holds nothing of this claim; the engine does not retry a
		// release, so the claim ends here whatever happens
		this.claims.remove(token);
		return this.fast.releaseClaim(key, token);
	}

	@Override
	public boolean extend(IdempotencyKey key, OwnerToken token, Duration lease) {
		if (claim(key, token) == null) {
			return this.durableClaim.extend(key, token, lease);
		}
		boolean extended = this.fast.extendClaim(key, token, lease);
		if (extended) {
			this.claims.computeIfPresent(token, (owner, current) -> current.extendedBy(lease));
		}
		return extended;
	}

	@Override
	public Optional<IdempotencyRecord> find(IdempotencyKey key, Optional<IdempotencyRecord> durableRecord) {
		// a lookup claim in progress is only known to the fast tier
		return durableRecord.isEmpty() ? this.fast.find(key, durableRecord) : durableRecord;
	}

	private void register(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token, Duration lease,
			Duration ttl) {
		long now = System.nanoTime();
		Duration lifetime = (lease.compareTo(ttl) > 0) ? lease : ttl;
		this.claims.put(token, new Claim(key, fingerprint, now + saturatedNanos(lifetime)));
		if (this.claimsSinceSweep.incrementAndGet() >= SWEEP_INTERVAL) {
			this.claimsSinceSweep.set(0);
			// claims whose end was never reported (the completion failed for good): their
			// records have expired in the fast tier by now
			this.claims.values().removeIf((claim) -> claim.expiredAt(now));
		}
	}

	private @Nullable Claim claim(IdempotencyKey key, OwnerToken token) {
		Claim claim = this.claims.get(token);
		return (claim != null && claim.key().equals(key)) ? claim : null;
	}

	private static long saturatedNanos(Duration duration) {
		// far enough for any record, close enough that nanoTime arithmetic cannot wrap
		Duration cap = Duration.ofDays(36_500);
		return ((duration.compareTo(cap) < 0) ? duration : cap).toNanos();
	}

	/**
	 * A lookup claim: what its completion needs to write the durable record, and until
	 * when (by {@link System#nanoTime()}) the claim's record can live.
	 */
	private record Claim(IdempotencyKey key, RequestFingerprint fingerprint, long deadlineNanos) {

		boolean expiredAt(long nanoTime) {
			return nanoTime - this.deadlineNanos > 0;
		}

		Claim extendedBy(Duration lease) {
			long candidate = System.nanoTime() + saturatedNanos(lease);
			return (candidate - this.deadlineNanos > 0) ? new Claim(this.key, this.fingerprint, candidate) : this;
		}

	}

}
