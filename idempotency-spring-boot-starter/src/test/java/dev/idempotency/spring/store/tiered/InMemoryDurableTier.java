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
import dev.idempotency.core.IdempotencyStatus;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.InMemoryIdempotencyStore;
import dev.idempotency.spring.store.UnclaimedCompletion;

/**
 * An in-memory durable tier for the lookup claim mode: an
 * {@link InMemoryIdempotencyStore} whose every operation, {@link #completeUnclaimed}
 * included, runs under one lock so that each is atomic with respect to the others.
 *
 * @author Idempotency contributors
 */
final class InMemoryDurableTier implements IdempotencyStore, UnclaimedCompletion {

	private final InMemoryIdempotencyStore delegate = new InMemoryIdempotencyStore();

	@Override
	public synchronized boolean completeUnclaimed(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
			StoredResponse response, Duration ttl) {
		Optional<IdempotencyRecord> found = this.delegate.find(key);
		if (found.isPresent()) {
			IdempotencyRecord record = found.get();
			if (!record.owner().equals(token)) {
				return false;
			}
			return record.status() == IdempotencyStatus.COMPLETED || this.delegate.complete(key, token, response, ttl);
		}
		AcquireResult claimed = this.delegate.acquire(key, fingerprint, token, ttl, ttl);
		return claimed instanceof AcquireResult.Acquired && this.delegate.complete(key, token, response, ttl);
	}

	@Override
	public synchronized AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
			Duration lease, Duration ttl) {
		return this.delegate.acquire(key, fingerprint, token, lease, ttl);
	}

	@Override
	public synchronized boolean complete(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
		return this.delegate.complete(key, token, response, ttl);
	}

	@Override
	public synchronized boolean release(IdempotencyKey key, OwnerToken token) {
		return this.delegate.release(key, token);
	}

	@Override
	public synchronized boolean extend(IdempotencyKey key, OwnerToken token, Duration lease) {
		return this.delegate.extend(key, token, lease);
	}

	@Override
	public synchronized Optional<IdempotencyRecord> find(IdempotencyKey key) {
		return this.delegate.find(key);
	}

	@Override
	public synchronized boolean evict(IdempotencyKey key) {
		return this.delegate.evict(key);
	}

}
