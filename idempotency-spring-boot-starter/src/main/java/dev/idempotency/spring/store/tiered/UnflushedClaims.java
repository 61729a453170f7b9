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
 * duplicates away.
 * <p>
 * Thread-safe.
 *
 * @author Idempotency contributors
 */
final class UnflushedClaims {

	private final IdempotencyStore durable;

	private final AsynchronousClaimCommit claims;

	private final UnclaimedCompletion completions;

	private final Map<OwnerToken, Claim> open = new ConcurrentHashMap<>();

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
			this.open.put(token, new Claim(fingerprint, ttl));
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

	private record Claim(RequestFingerprint fingerprint, Duration ttl) {
	}

}
