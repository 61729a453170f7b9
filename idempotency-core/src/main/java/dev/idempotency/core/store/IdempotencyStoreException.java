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

package dev.idempotency.core.store;

/**
 * Thrown when a store cannot answer: its server is unreachable, timed out or returned an
 * error. Expected outcomes (a key in use, a fingerprint mismatch, a fenced-out owner) are
 * never exceptions; they are return values of {@link IdempotencyStore}.
 * <p>
 * When a store throws, the state of the record is unknown to the caller; the engine
 * therefore never executes a handler after a failed acquisition unless the policy opts
 * into failing open.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public class IdempotencyStoreException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	/**
	 * Create a new exception.
	 * @param message the detail message
	 */
	public IdempotencyStoreException(String message) {
		super(message);
	}

	/**
	 * Create a new exception.
	 * @param message the detail message
	 * @param cause the underlying failure
	 */
	public IdempotencyStoreException(String message, Throwable cause) {
		super(message, cause);
	}

}
