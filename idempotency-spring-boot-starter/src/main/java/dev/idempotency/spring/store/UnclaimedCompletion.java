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
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.IdempotencyStoreException;

/**
 * A durable tier that can store a completed record for a key it never claimed: the one
 * write of a first request when a
 * {@link dev.idempotency.spring.store.tiered.TieredIdempotencyStore} runs in
 * {@link dev.idempotency.spring.store.tiered.TieredClaimMode#LOOKUP lookup claim mode},
 * where the claim lives in the fast tier only. It lives beside the stores rather than
 * with the tiered store, so that a durable store can offer it without depending on the
 * tiered one.
 * <p>
 * Implementations are thread-safe and make the operation atomic with respect to every
 * other operation on the same key.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public interface UnclaimedCompletion {

	/**
	 * Store a {@code COMPLETED} record owned by {@code token}, to expire {@code ttl} from
	 * now, unless a live record of another owner exists. In detail:
	 * <ul>
	 * <li>absent or expired: insert the completed record and return {@code true};
	 * <li>owned by {@code token}: complete it if it is processing, and return
	 * {@code true} (a retry after a lost reply is not a fencing);
	 * <li>owned by another token, processing or completed: change nothing and return
	 * {@code false}: another execution of the same key got there first.
	 * </ul>
	 * @param key the key
	 * @param fingerprint the fingerprint of the request that produced the response
	 * @param token the owner token of the execution
	 * @param response the response to replay
	 * @param ttl how long to keep the completed record
	 * @return {@code true} if the record now holds this completion, {@code false} if the
	 * caller was fenced out
	 * @throws IdempotencyStoreException if the store cannot answer
	 */
	boolean completeUnclaimed(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
			StoredResponse response, Duration ttl);

}
