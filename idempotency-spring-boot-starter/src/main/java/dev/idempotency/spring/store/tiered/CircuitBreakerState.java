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

/**
 * State of the circuit breaker that guards the fast tier of a
 * {@link TieredIdempotencyStore}.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public enum CircuitBreakerState {

	/**
	 * The fast tier is healthy: every operation uses it. Consecutive failures are counted
	 * and open the breaker when they reach the threshold.
	 */
	CLOSED,

	/**
	 * The fast tier failed too often: operations use the durable tier alone, without
	 * paying the fast tier's time-outs, until the open duration has passed.
	 */
	OPEN,

	/**
	 * The open duration has passed: exactly one operation tries the fast tier while the
	 * others keep skipping it. Its success closes the breaker, its failure opens it
	 * again.
	 */
	HALF_OPEN

}
