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

package dev.idempotency.test;

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

/**
 * An {@link IdempotencyStore} that forwards every operation to another one: extend it and
 * override the operations a test changes or watches (a store that answers a damaged
 * replay, one that records which calls it got, one that claims by another method of the
 * same store). The name is the delegate's.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public abstract class ForwardingIdempotencyStore implements IdempotencyStore {

	private final IdempotencyStore delegate;

	/**
	 * Create a store forwarding to the given one.
	 * @param delegate the store every operation goes to
	 */
	protected ForwardingIdempotencyStore(IdempotencyStore delegate) {
		this.delegate = Objects.requireNonNull(delegate, "'delegate' must not be null");
	}

	/**
	 * Return the store every operation goes to.
	 * @return the delegate
	 */
	protected IdempotencyStore delegate() {
		return this.delegate;
	}

	@Override
	public AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token, Duration lease,
			Duration ttl) {
		return this.delegate.acquire(key, fingerprint, token, lease, ttl);
	}

	@Override
	public boolean complete(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
		return this.delegate.complete(key, token, response, ttl);
	}

	@Override
	public boolean release(IdempotencyKey key, OwnerToken token) {
		return this.delegate.release(key, token);
	}

	@Override
	public boolean extend(IdempotencyKey key, OwnerToken token, Duration lease) {
		return this.delegate.extend(key, token, lease);
	}

	@Override
	public Optional<IdempotencyRecord> find(IdempotencyKey key) {
		return this.delegate.find(key);
	}

	@Override
	public boolean evict(IdempotencyKey key) {
		return this.delegate.evict(key);
	}

	@Override
	public String name() {
		return this.delegate.name();
	}

}
