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

import dev.idempotency.core.IdempotencyKey;

/**
 * Raised when a key that already ran, or is running, is used again with other arguments:
 * the call is refused rather than answered with the result of another request. It is what
 * a {@code 422} is to an HTTP request.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public class IdempotencyKeyReusedException extends IdempotencyException {

	/**
	 * Create an exception.
	 * @param key the key
	 */
	public IdempotencyKeyReusedException(IdempotencyKey key) {
		super("Idempotency key '" + key + "' was already used with other arguments", key, null);
	}

}
