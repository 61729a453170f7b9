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

package dev.idempotency.spring.store;

import java.time.Duration;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStoreException;

/**
 * A durable tier that can commit a claim without waiting for it to reach durable storage:
 * the claim a {@link dev.idempotency.spring.store.tiered.TieredIdempotencyStore} makes in
 * its durable tier when its {@linkplain dev.idempotency.spring.store.tiered.ClaimCommit
 * claim commit} is asynchronous, while the fast tier holds the same claim. Such a claim
 * is visible to every other caller as soon as the call returns, exactly as one made by
 * {@link dev.idempotency.core.store.IdempotencyStore#acquire acquire}; only a crash of
 * the store's server within a short window after it may lose it (for PostgreSQL,
 * {@code synchronous_commit = off}: at most three times {@code wal_writer_delay}).
 * <p>
 * It lives beside the stores rather than with the tiered store, so that a durable store
 * can offer it without depending on the tiered one. Implementations are thread-safe and
 * never relax the commit of a transaction of the application that the claim joins.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public interface AsynchronousClaimCommit {

	/**
	 * Acquire a key as {@link dev.idempotency.core.store.IdempotencyStore#acquire
	 * acquire} does, with the same answers, except that a claim it writes may be
	 * committed without waiting for durable storage.
	 * @param key the key
	 * @param fingerprint the request's fingerprint
	 * @param token the owner token of the new execution
	 * @param lease how long the claim is held without renewal
	 * @param ttl how long the record lives
	 * @return the result of the acquisition
	 * @throws IdempotencyStoreException if the store cannot answer
	 */
	AcquireResult acquireCommittingAsynchronously(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
			Duration lease, Duration ttl);

}
