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

package dev.idempotency.spring.http;

import java.time.Duration;

import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.spring.NamedPolicy;
import org.jspecify.annotations.Nullable;

/**
 * The request header through which a client may ask for a TTL, in whole seconds, which
 * the endpoint's policy clamps to its minimum and maximum. A value that is not one to ten
 * ASCII digits (surrounding whitespace aside) is ignored, as is the header when no name
 * is configured: the policy's own TTL applies.
 * <p>
 * Immutable and thread-safe.
 *
 * @author Idempotency contributors
 */
public final class ClientTtlHeader {

	/**
	 * No header: the policy's own TTL always applies.
	 */
	public static final ClientTtlHeader NONE = new ClientTtlHeader(null);

	// enough for any TTL worth asking for, too few to overflow a long
	private static final int MAX_DIGITS = 10;

	private final @Nullable String name;

	/**
	 * Create the header.
	 * @param name the header's name, or {@code null} to ignore clients' TTLs
	 */
	public ClientTtlHeader(@Nullable String name) {
		this.name = name;
	}

	/**
	 * Return the header's name.
	 * @return the name, or {@code null} when clients' TTLs are ignored
	 */
	public @Nullable String name() {
		return this.name;
	}

	/**
	 * Return the engine policy for a request: the endpoint's policy, with the TTL the
	 * request asks for if it asks for a valid one.
	 * @param value the value of the request's {@link #name() header}, or {@code null};
	 * ignored when no name is configured
	 * @param policy the endpoint's policy
	 * @return the policy to begin the request with
	 */
	public IdempotencyPolicy policy(@Nullable String value, NamedPolicy policy) {
		if (this.name == null) {
			return policy.engine();
		}
		long seconds = seconds(value);
		return (seconds >= 0) ? policy.withClientTtl(Duration.ofSeconds(seconds)) : policy.engine();
	}

	/**
	 * Parse a header value.
	 * @param value the value, or {@code null} if the header is absent
	 * @return the seconds, or {@code -1} if the value is absent or not valid
	 */
	static long seconds(@Nullable String value) {
		if (value == null) {
			return -1;
		}
		String digits = value.strip();
		if (digits.isEmpty() || digits.length() > MAX_DIGITS) {
			return -1;
		}
		for (int i = 0; i < digits.length(); i++) {
			// Character.isDigit alone would take other scripts' digits too
			char c = digits.charAt(i);
			if (c < '0' || c > '9') {
				return -1;
			}
		}
		return Long.parseLong(digits);
	}

}
