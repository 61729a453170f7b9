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

package dev.idempotency.core.fingerprint;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Objects;

import dev.idempotency.core.HttpHeader;
import org.jspecify.annotations.Nullable;

/**
 * The parts of a request that its fingerprint covers.
 * <p>
 * The body is taken as a {@link ByteBuffer} so that a buffered request body is
 * fingerprinted without being copied; the input keeps a read-only view of it and never
 * changes the caller's buffer position.
 *
 * @param method the HTTP method in upper case, never {@code null}
 * @param path the request path without query, never {@code null}
 * @param query the raw query string, or {@code null} if there is none
 * @param contentType the {@code Content-Type} header, or {@code null} if there is none
 * @param headers the configured headers that take part in the fingerprint, never
 * {@code null}; names are compared case-insensitively
 * @param body the body, never {@code null}
 * @author Idempotency contributors
 * @since 0.1.0
 */
public record FingerprintInput(String method, String path, @Nullable String query, @Nullable String contentType,
		List<HttpHeader> headers, ByteBuffer body) {

	/**
	 * Create an input, checking its arguments.
	 * @param method the HTTP method
	 * @param path the request path
	 * @param query the query string or {@code null}
	 * @param contentType the content type or {@code null}
	 * @param headers the headers that take part
	 * @param body the body
	 */
	public FingerprintInput {
		Objects.requireNonNull(method, "'method' must not be null");
		Objects.requireNonNull(path, "'path' must not be null");
		Objects.requireNonNull(body, "'body' must not be null");
		headers = List.copyOf(Objects.requireNonNull(headers, "'headers' must not be null"));
		body = body.asReadOnlyBuffer();
	}

	/**
	 * Create an input whose body is the given array range, without copying it.
	 * @param method the HTTP method
	 * @param path the request path
	 * @param query the query string or {@code null}
	 * @param contentType the content type or {@code null}
	 * @param headers the headers that take part
	 * @param body the body array
	 * @param offset the offset of the body in the array
	 * @param length the number of body bytes
	 * @return the input
	 */
	public static FingerprintInput of(String method, String path, @Nullable String query, @Nullable String contentType,
			List<HttpHeader> headers, byte[] body, int offset, int length) {
		return new FingerprintInput(method, path, query, contentType, headers, ByteBuffer.wrap(body, offset, length));
	}

}
