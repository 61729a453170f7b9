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

package dev.idempotency.core.engine;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.store.IdempotencyStoreException;

/**
 * Callback for events of the engine, for metrics and logs. Methods are called on the
 * request's or the heartbeat's thread and must return quickly. They should not throw; if
 * one does, the engine logs the exception at {@code WARNING} with the listener's class
 * and carries on: a listener never changes a decision or an outcome, and never leaves a
 * key held.
 * <p>
 * The key is passed for correlation in logs; implementations must not use it as a metric
 * tag (its cardinality is unbounded).
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public interface IdempotencyListener {

	/**
	 * A listener that does nothing.
	 */
	IdempotencyListener NONE = new IdempotencyListener() {
	};

	/**
	 * Called once per request with the engine's decision.
	 * @param key the key
	 * @param policy the policy
	 * @param decision the decision
	 */
	default void onDecision(IdempotencyKey key, IdempotencyPolicy policy, Decision decision) {
	}

	/**
	 * Called when an execution ends.
	 * @param key the key
	 * @param policy the policy
	 * @param outcome how it ended
	 */
	default void onCompletion(IdempotencyKey key, IdempotencyPolicy policy, CompletionOutcome outcome) {
	}

	/**
	 * Called when a heartbeat finds that another caller has taken the key over.
	 * @param key the key
	 * @param policy the policy
	 */
	default void onOwnershipLost(IdempotencyKey key, IdempotencyPolicy policy) {
	}

	/**
	 * Called when a store operation fails.
	 * @param key the key
	 * @param operation the operation: {@code acquire}, {@code complete}, {@code release}
	 * or {@code extend}
	 * @param failure the failure
	 */
	default void onStoreFailure(IdempotencyKey key, String operation, IdempotencyStoreException failure) {
	}

}
