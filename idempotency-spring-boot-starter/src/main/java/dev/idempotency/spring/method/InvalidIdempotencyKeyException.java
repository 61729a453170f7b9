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

import org.jspecify.annotations.Nullable;

/**
 * Raised when the key of a call is missing (its expression gave {@code null} or an empty
 * value) or is not 1 to 255 characters of visible ASCII. It is what a {@code 400} is to
 * an HTTP request: nothing ran.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public class InvalidIdempotencyKeyException extends IdempotencyException {

	/**
	 * Create an exception.
	 * @param message what is wrong with the key
	 */
	public InvalidIdempotencyKeyException(String message) {
		super(message, null, null);
	}

	/**
	 * Create an exception.
	 * @param message what is wrong with the key
	 * @param cause why the key could not be had, or {@code null}
	 */
	public InvalidIdempotencyKeyException(String message, @Nullable Throwable cause) {
		super(message, null, cause);
	}

}
