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
 * Thrown instead of running a call again when the first call under its key ran, but its
 * result could not be stored: larger than the policy's {@code max-response-body}, or a
 * value that could not be written or read back. The key keeps a record that says so for
 * the rest of its TTL, as an HTTP response too large to keep is answered with the
 * {@code response-not-replayable} problem: the call's work was done once, and running it
 * again could do it twice. Nothing of the result is known; the first call's error log
 * says why it was not stored.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public class IdempotentResultNotStoredException extends IdempotencyException {

	private final @Nullable String reason;

	/**
	 * Create an exception.
	 * @param key the key
	 * @param reason why the result was not stored, as the record says, or {@code null} if
	 * it does not say
	 */
	public IdempotentResultNotStoredException(IdempotencyKey key, @Nullable String reason) {
		super("The call with idempotency key '" + key + "' ran, but its result could not be stored"
				+ ((reason != null) ? " (" + reason + ")" : "")
				+ ": it cannot be replayed, and the call is not run again for this key", key, null);
		this.reason = reason;
	}

	/**
	 * Return why the result was not stored: {@code too-large} (over the policy's
	 * {@code max-response-body}), {@code not-writable} (it could not be written) or
	 * {@code not-readable} (it was written but could not be read back).
	 * @return the reason, or {@code null} if the record does not say
	 */
	public @Nullable String getReason() {
		return this.reason;
	}

}
