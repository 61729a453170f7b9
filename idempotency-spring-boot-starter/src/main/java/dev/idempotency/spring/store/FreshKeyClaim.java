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
 * A durable tier with a cheaper claim for a key it most likely does not hold: the claim a
 * {@link dev.idempotency.spring.store.tiered.TieredIdempotencyStore} makes in its durable
 * tier for a key that its fast tier has just granted. Such a key is almost always new;
 * the durable tier holds it only when the fast tier lost its record (a restarted Redis,
 * say). A store implementing this interface optimizes for the new key and may take more
 * work, such as a second statement, when it finds the key after all. The answers are
 * those of {@link dev.idempotency.core.store.IdempotencyStore#acquire acquire} in every
 * case.
 * <p>
 * It lives beside the stores rather than with the tiered store, so that a durable store
 * can offer it without depending on the tiered one. Implementations are thread-safe.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public interface FreshKeyClaim {

	/**
	 * Acquire a key that is most likely absent, with the answers
	 * {@link dev.idempotency.core.store.IdempotencyStore#acquire acquire} gives.
	 * @param key the key
	 * @param fingerprint the request's fingerprint
	 * @param token the owner token of the new execution
	 * @param lease how long the claim is held without renewal
	 * @param ttl how long the record lives
	 * @return the result of the acquisition
	 * @throws IdempotencyStoreException if the store cannot answer
	 */
	AcquireResult acquireFresh(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token, Duration lease,
			Duration ttl);

}
