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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.spring.store.AsynchronousClaimCommit;
import dev.idempotency.spring.store.UnclaimedCompletion;

/**
 * The durable claims of the {@link ClaimCommit#ASYNCHRONOUS asynchronous claim commit}:
 * made without waiting for the durable tier's flush, and remembered (fingerprint and time
 * to live, by owner token) until their execution completes or releases them, so that a
 * claim the durable tier lost in a crash can be written again by its owner: at the next
 * lease renewal, which finds no claim to renew, or at completion, which then stores the
 * response as for a key it never claimed. Until then the fast tier's claim turns
 * duplicates away. A claim whose end is never reported (its completion failed for good)
 * is swept once its record has expired.
 * <p>
 * Thread-safe.
 *
 * @author Idempotency contributors
 */
final class UnflushedClaims {

	private final IdempotencyStore durable;

	private final AsynchronousClaimCommit claims;

	private final UnclaimedCompletion completions;

	// claims registered between two sweeps of the ones past their record's expiry
	private static final int SWEEP_INTERVAL = 1024;

	private final Map<OwnerToken, Claim> open = new ConcurrentHashMap<>();

	private final AtomicInteger claimsSinceSweep = new AtomicInteger();

	UnflushedClaims(IdempotencyStore durable) {
		if (!(durable instanceof AsynchronousClaimCommit asynchronous)
				|| !(durable instanceof UnclaimedCompletion unclaimed)) {
			throw new IllegalArgumentException("The asynchronous claim commit needs a durable tier that implements "
					+ AsynchronousClaimCommit.class.getSimpleName() + " and "
					+ UnclaimedCompletion.class.getSimpleName() + ", " + durable.getClass().getName() + " does not");
		}
		this.durable = durable;
		this.claims = asynchronous;
		this.completions = unclaimed;
	}

	// Claims the key in the durable tier without waiting for its flush, and remembers
	// the claim if it was granted.
	AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token, Duration lease,
			Duration ttl) {
		AcquireResult result = this.claims.acquireCommittingAsynchronously(key, fingerprint, token, lease, ttl);
		if (result instanceof AcquireResult.Acquired) {
			long now = System.nanoTime();
			this.open.put(token, new Claim(fingerprint, ttl, now + lifetimeNanos(lease, ttl)));
			if (this.claimsSinceSweep.incrementAndGet() >= SWEEP_INTERVAL) {
				this.claimsSinceSweep.set(0);
				// claims whose end was never reported (their completion failed for
				// good): their records have expired by now
				this.open.values().removeIf((claim) -> now - claim.deadlineNanos() > 0);
			}
		}
		return result;
	}

	// Writes a claim again that the durable tier no longer holds for its owner, with a
	// synchronous commit: granted only if the durable tier holds no live record of the
	// key (it lost ours), never over another owner's record. True if the durable tier
	// holds the claim for the token again.
	boolean reclaim(IdempotencyKey key, OwnerToken token, Duration lease) {
		Claim claim = this.open.get(token);
		if (claim == null) {
			return false;
		}
		AcquireResult result = this.durable.acquire(key, claim.fingerprint(), token, lease, claim.ttl());
		return result instanceof AcquireResult.Acquired acquired && acquired.token().equals(token);
	}

	// a renewed claim's record lives at least a lease from now
	void renewed(OwnerToken token, Duration lease) {
		long deadline = System.nanoTime() + lifetimeNanos(lease, lease);
		this.open.computeIfPresent(token,
				(ignored, claim) -> (deadline - claim.deadlineNanos() > 0) ? claim.until(deadline) : claim);
	}

	// Stores the response of a claim whose durable record was lost, as for a key never
	// claimed: never over another owner's live record. True if the durable tier now
	// holds the response.
	boolean completeLost(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
		Claim claim = this.open.get(token);
		return claim != null && this.completions.completeUnclaimed(key, claim.fingerprint(), token, response, ttl);
	}

	// forgets a claim whose execution ended
	void forget(OwnerToken token) {
		this.open.remove(token);
	}

	// how many claims are remembered, for tests
	int size() {
		return this.open.size();
	}

	private static long lifetimeNanos(Duration lease, Duration ttl) {
		Duration lifetime = (lease.compareTo(ttl) > 0) ? lease : ttl;
		// far enough for any record, close enough that nanoTime arithmetic cannot wrap
		Duration cap = Duration.ofDays(36_500);
		return ((lifetime.compareTo(cap) < 0) ? lifetime : cap).toNanos();
	}

	// what writing the claim again needs, and until when (by System.nanoTime()) its
	// record can live
	private record Claim(RequestFingerprint fingerprint, Duration ttl, long deadlineNanos) {

		Claim until(long deadline) {
			return new Claim(this.fingerprint, this.ttl, deadline);
		}

	}

}
