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

package dev.idempotency.spring.method;

import java.time.Duration;
import java.util.Objects;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.store.IdempotencyStoreException;

/**
 * Raised when no store can say whether a key ran, under a fail-closed policy: nothing
 * ran, because running could run it twice. It is what a {@code 503} is to an HTTP
 * request.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public class IdempotencyStoreUnavailableException extends IdempotencyException {

	private final Duration retryAfter;

	/**
	 * Create an exception.
	 * @param key the key
	 * @param retryAfter how long to wait before trying again
	 * @param cause the store's failure
	 */
	public IdempotencyStoreUnavailableException(IdempotencyKey key, Duration retryAfter,
			IdempotencyStoreException cause) {
		super("No idempotency store is available to protect key '" + key + "'", key, cause);
		this.retryAfter = Objects.requireNonNull(retryAfter, "'retryAfter' must not be null");
	}

	/**
	 * Return how long to wait before trying again.
	 * @return the delay
	 */
	public Duration getRetryAfter() {
		return this.retryAfter;
	}

}
