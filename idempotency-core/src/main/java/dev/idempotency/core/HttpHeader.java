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

package dev.idempotency.core;

import java.util.Objects;

/**
 * One HTTP header field: a name and one value. A header sent several times is several
 * instances.
 *
 * @param name the header name in its original case, never {@code null} or empty
 * @param value the value, never {@code null}
 * @author Idempotency contributors
 * @since 0.1.0
 */
public record HttpHeader(String name, String value) {

	/**
	 * Create a header, checking its arguments.
	 * @param name the header name, never {@code null} or empty
	 * @param value the header value, never {@code null}
	 */
	public HttpHeader {
		Objects.requireNonNull(name, "'name' must not be null");
		Objects.requireNonNull(value, "'value' must not be null");
		if (name.isEmpty()) {
			throw new IllegalArgumentException("'name' must not be empty");
		}
	}

}
