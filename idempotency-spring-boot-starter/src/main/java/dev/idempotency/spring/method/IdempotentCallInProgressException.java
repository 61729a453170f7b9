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

/**
 * Raised when the first call under a key is still running (on this instance or another)
 * and the policy's {@code in-flight-wait} has passed without its result: nothing ran, and
 * a later call gets the result once it is stored. It is what a {@code 409} is to an HTTP
 * request; a caller that retries should wait {@link #getRetryAfter()}.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public class IdempotentCallInProgressException extends IdempotencyException {

	private final Duration retryAfter;

	/**
	 * Create an exception.
	 * @param key the key
	 * @param retryAfter how long to wait before trying again
	 */
	public IdempotentCallInProgressException(IdempotencyKey key, Duration retryAfter) {
		super("A call with idempotency key '" + key + "' is in progress; retry after " + retryAfter.toSeconds() + "s",
				key, null);
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
