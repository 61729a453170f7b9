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

import org.jspecify.annotations.Nullable;

/**
 * Callback for events of a {@link TieredIdempotencyStore}, for metrics and health checks.
 * Methods are called on the caller's thread, must return quickly and must never throw.
 * <p>
 * Operations are named {@code acquire}, {@code complete}, {@code release},
 * {@code extend}, {@code find} and {@code evict}: a small fixed set, suitable as a metric
 * tag.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public interface TieredStoreListener {

	/**
	 * A listener that does nothing.
	 */
	TieredStoreListener NONE = new TieredStoreListener() {
	};

	/**
	 * Called when an operation was served without the fast tier: the fast tier failed, or
	 * the circuit breaker was open and the fast tier was skipped.
	 * @param operation the store operation
	 * @param exception the fast tier's failure, or {@code null} if the fast tier was
	 * skipped because the breaker was open
	 */
	default void onFallback(String operation, @Nullable Exception exception) {
	}

	/**
	 * Called when the circuit breaker changes state. Calls from concurrent threads may
	 * arrive out of order; read {@link TieredIdempotencyStore#getCircuitBreakerState()}
	 * for the current state.
	 * @param from the previous state
	 * @param to the new state
	 */
	default void onBreakerStateChange(CircuitBreakerState from, CircuitBreakerState to) {
	}

}
