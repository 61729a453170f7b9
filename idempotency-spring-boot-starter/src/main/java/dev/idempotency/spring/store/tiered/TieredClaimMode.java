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

import dev.idempotency.spring.store.UnclaimedCompletion;

/**
 * Where {@link TieredIdempotencyStore} records the claim of a first request while its
 * handler runs.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 * @see TieredIdempotencyStore#setClaimMode(TieredClaimMode)
 */
public enum TieredClaimMode {

	/**
	 * The claim is written to both tiers: the fast tier's claim turns concurrent
	 * duplicates away early and the durable tier's {@code PROCESSING} record is the
	 * authority. A first request writes the durable tier twice (claim, completion). A
	 * duplicate never runs the handler again, whatever the fast tier loses. The default.
	 */
	DURABLE,

	/**
	 * The claim lives in the fast tier only; the durable tier is read before the handler
	 * runs (so that a completed record the fast tier lost is still replayed) and written
	 * once, at completion. A first request costs one durable read and one durable write
	 * instead of two writes. If the fast tier loses an in-flight claim (flush, eviction,
	 * failover to a replica that had not received it) or cannot be reached while the
	 * handler runs, a duplicate arriving before the completion runs the handler a second
	 * time; the first completion stored wins and the other is fenced. Requires a durable
	 * tier that implements {@link UnclaimedCompletion}.
	 */
	LOOKUP

}
