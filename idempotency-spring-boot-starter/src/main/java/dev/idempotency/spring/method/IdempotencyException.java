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
 * Raised instead of running an idempotent method or operation, when its key cannot be
 * used now: the subclasses say why. It is never raised after the method ran, except
 * {@link #replayFailed} when a stored result can no longer be read.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public class IdempotencyException extends RuntimeException {

	private final @Nullable IdempotencyKey key;

	/**
	 * Create an exception.
	 * @param message the detail message
	 * @param key the key of the call, or {@code null} if it has none
	 * @param cause the cause, or {@code null}
	 */
	public IdempotencyException(String message, @Nullable IdempotencyKey key, @Nullable Throwable cause) {
		super(message, cause);
		this.key = key;
	}

	/**
	 * Return the key of the call, scope included.
	 * @return the key, or {@code null} if the call had no valid key
	 */
	public @Nullable IdempotencyKey getKey() {
		return this.key;
	}

	/**
	 * Create the exception raised when the stored result of a key cannot be read back
	 * into the declared result type (the type changed since it was stored, say). The
	 * method is not run again: its first run is what the record stands for.
	 * @param key the key
	 * @param detail what could not be read
	 * @param cause the cause
	 * @return the exception
	 */
	static IdempotencyException replayFailed(IdempotencyKey key, String detail, @Nullable Throwable cause) {
		return new IdempotencyException(
				"The stored result of key '" + key + "' cannot be replayed: " + detail + "; the call is not run again",
				key, cause);
	}

}
