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

package dev.idempotency.spring.web;

/**
 * Callback of the {@link IdempotencyFilter} for requests to idempotent endpoints that it
 * rejects before they reach the engine (so no
 * {@link dev.idempotency.core.engine.IdempotencyListener} hears of them), for metrics and
 * logs.
 * <p>
 * Called on the request's thread; implementations must be thread-safe, return quickly and
 * never throw. Arguments are never {@code null}. The key is deliberately not passed: a
 * rejected request may not have a valid one.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 * @see IdempotencyFilter#setListener(IdempotencyRequestListener)
 */
@FunctionalInterface
public interface IdempotencyRequestListener {

	/**
	 * A listener that does nothing.
	 */
	IdempotencyRequestListener NONE = (rejection, policy) -> {
	};

	/**
	 * Called when the filter answers a request with a problem before asking the engine.
	 * @param rejection why the request was rejected
	 * @param policy the name of the endpoint's policy
	 */
	void onRejected(Rejection rejection, String policy);

	/**
	 * Why the filter rejected a request before asking the engine.
	 */
	enum Rejection {

		/**
		 * The endpoint requires a key and the request has none (400).
		 */
		MISSING_KEY,

		/**
		 * The key is malformed or sent more than once (400).
		 */
		INVALID_KEY,

		/**
		 * The request body exceeds the policy's maximum (413).
		 */
		TOO_LARGE

	}

}
