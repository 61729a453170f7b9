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
import org.jspecify.annotations.Nullable;

/**
 * Raised when what a call's fingerprint or scope covers cannot be had: its
 * {@code fingerprint} or {@code scope} expression failed, or the request (a message's
 * payload, say) can be written neither as JSON nor in a binary form of its own. Nothing
 * ran. Like {@link InvalidIdempotencyKeyException}, it is about the input, so a retry of
 * the same input fails the same way: a Kafka listener's record that raises it goes to the
 * error handler's recoverer at once (see
 * {@link dev.idempotency.spring.kafka.IdempotentListenerRetries}).
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public class InvalidIdempotentRequestException extends IdempotencyException {

	/**
	 * Create an exception.
	 * @param message what cannot be had, and why
	 * @param key the key of the call, or {@code null} if it is not known yet
	 * @param cause the failure, or {@code null}
	 */
	public InvalidIdempotentRequestException(String message, @Nullable IdempotencyKey key, @Nullable Throwable cause) {
		super(message, key, cause);
	}

}
