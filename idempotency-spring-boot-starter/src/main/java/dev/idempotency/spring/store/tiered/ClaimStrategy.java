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
import java.util.Optional;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;

/**
 * Where a {@link TieredIdempotencyStore} records the claim of a first request while its
 * handler runs, and everything that follows from it: how an acquisition the fast tier
 * answered is settled with the durable tier, and what completing, releasing, renewing and
 * finding a claim do. One implementation per {@link TieredClaimMode}, chosen when the
 * mode is set, so that no operation asks which mode it is in.
 * <p>
 * Implementations reach the fast tier through {@link FastTier} only. They are
 * thread-safe.
 *
 * @author Idempotency contributors
 * @see DurableClaimStrategy
 * @see LookupClaimStrategy
 */
interface ClaimStrategy {

	/**
	 * Return the claim mode this strategy implements.
	 * @return the mode
	 */
	TieredClaimMode mode();

	/**
	 * Settle an acquisition whose key the fast tier granted to {@code token}.
	 * @param key the key
	 * @param fingerprint the request's fingerprint
	 * @param token the owner token the fast tier holds the claim for
	 * @param lease the lease
	 * @param ttl the record TTL
	 * @return the answer of the acquisition; unless it is {@code Acquired}, the fast
	 * claim has been released or replaced by a copy of the durable record
	 */
	AcquireResult claimGranted(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token, Duration lease,
			Duration ttl);

	/**
	 * Confirm or overrule a fingerprint mismatch answered by the fast tier, which may
	 * hold a stale record.
	 * @param key the key
	 * @param fingerprint the request's fingerprint
	 * @param token the owner token of the acquisition
	 * @param lease the lease
	 * @param ttl the record TTL
	 * @return the answer of the acquisition
	 */
	AcquireResult confirmMismatch(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token, Duration lease,
			Duration ttl);

	/**
	 * Complete a claim, as {@link dev.idempotency.core.store.IdempotencyStore#complete}.
	 * @param key the key
	 * @param token the owner token
	 * @param response the response to replay
	 * @param ttl the record TTL
	 * @return {@code true} if the response is stored, {@code false} if the owner was
	 * fenced
	 */
	boolean complete(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl);

	/**
	 * Release a claim, as {@link dev.idempotency.core.store.IdempotencyStore#release}.
	 * @param key the key
	 * @param token the owner token
	 * @return {@code true} if a claim of this owner was released
	 */
	boolean release(IdempotencyKey key, OwnerToken token);

	/**
	 * Renew a claim's lease, as
	 * {@link dev.idempotency.core.store.IdempotencyStore#extend}.
	 * @param key the key
	 * @param token the owner token
	 * @param lease the new lease
	 * @return {@code true} if the lease was renewed
	 */
	boolean extend(IdempotencyKey key, OwnerToken token, Duration lease);

	/**
	 * Answer a {@code find} once the durable tier has answered it.
	 * @param key the key
	 * @param durableRecord the durable tier's answer
	 * @return the record to report
	 */
	Optional<IdempotencyRecord> find(IdempotencyKey key, Optional<IdempotencyRecord> durableRecord);

	/**
	 * Release the fast tier's claim of an acquisition whose settlement failed: nothing
	 * will run, so the claim must not block the retries.
	 * @param fast the fast tier
	 * @param key the key
	 * @param token the owner token the fast tier holds the claim for
	 * @param failure the failure of the settlement
	 * @return the failure, to throw, with a failure of the release suppressed in it
	 */
	static RuntimeException undoClaim(FastTier fast, IdempotencyKey key, OwnerToken token, RuntimeException failure) {
		RuntimeException releaseFailure = fast.undoClaim(key, token);
		if (releaseFailure != null) {
			failure.addSuppressed(releaseFailure);
		}
		return failure;
	}

}
