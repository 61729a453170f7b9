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
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.InMemoryIdempotencyStore;
import dev.idempotency.test.AbstractIdempotencyStoreTests;

/**
 * The store contract for {@link TieredIdempotencyStore} whose fast tier forgets every
 * record at once (as if flushed before each call): the durable tier alone must keep every
 * guarantee.
 *
 * @author Idempotency contributors
 */
class TieredIdempotencyStoreForgetfulFastTierTests extends AbstractIdempotencyStoreTests {

	@Override
	protected IdempotencyStore createStore() {
		return new TieredIdempotencyStore(new ForgetfulStore(), new InMemoryIdempotencyStore());
	}

	/**
	 * A store that grants every key and keeps nothing.
	 */
	static final class ForgetfulStore implements IdempotencyStore {

		@Override
		public AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
				Duration lease, Duration ttl) {
			return new AcquireResult.Acquired(token);
		}

		@Override
		public boolean complete(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
			return false;
		}

		@Override
		public boolean release(IdempotencyKey key, OwnerToken token) {
			return false;
		}

		@Override
		public boolean extend(IdempotencyKey key, OwnerToken token, Duration lease) {
			return false;
		}

		@Override
		public Optional<IdempotencyRecord> find(IdempotencyKey key) {
			return Optional.empty();
		}

		@Override
		public boolean evict(IdempotencyKey key) {
			return false;
		}

	}

}
