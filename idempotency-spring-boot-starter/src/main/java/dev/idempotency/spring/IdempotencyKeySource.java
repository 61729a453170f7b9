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

package dev.idempotency.spring;

import java.util.Objects;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.JsonPointer;

/**
 * Where the requests of a policy carry their idempotency key: the filter's key header
 * ({@code Idempotency-Key} unless configured otherwise), another request header, or a
 * member of the JSON request body.
 * <p>
 * A client that retries its own request sends the key in a header. A server that receives
 * webhooks takes the key the sender already puts in every delivery: a header such as the
 * {@code webhook-id} of the Standard Webhooks convention, or the event's own identifier
 * in the body ({@code /id}). Either way a missing or malformed key is answered with the
 * same {@code 400} problems as a missing or malformed {@code Idempotency-Key}.
 * <p>
 * A key in the body is read after the body is buffered, and is always required: a request
 * without it is refused even on an endpoint whose key is optional.
 * <p>
 * Immutable and thread-safe.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class IdempotencyKeySource {

	private static final IdempotencyKeySource KEY_HEADER = new IdempotencyKeySource(null, null);

	private final @Nullable String header;

	private final @Nullable JsonPointer jsonPointer;

	private IdempotencyKeySource(@Nullable String header, @Nullable JsonPointer jsonPointer) {
		this.header = header;
		this.jsonPointer = jsonPointer;
	}

	/**
	 * Return the source of most policies: the filter's key header
	 * ({@code idempotency.key-header}).
	 * @return the source
	 */
	public static IdempotencyKeySource keyHeader() {
		return KEY_HEADER;
	}

	/**
	 * Return a source that reads the key from the given request header, with the rules of
	 * the key header: sent once, 1 to
	 * {@value dev.idempotency.core.IdempotencyKey#MAX_KEY_LENGTH} visible ASCII
	 * characters, as a token or a quoted string.
	 * @param name the header name, never {@code null} or empty
	 * @return the source
	 */
	public static IdempotencyKeySource header(String name) {
		Objects.requireNonNull(name, "'name' must not be null");
		if (name.isEmpty()) {
			throw new IllegalArgumentException("The key header's name must not be empty");
		}
		return new IdempotencyKeySource(name, null);
	}

	/**
	 * Return a source that reads the key from the JSON request body, at the given JSON
	 * Pointer (RFC 6901). The value there must be a string of 1 to
	 * {@value dev.idempotency.core.IdempotencyKey#MAX_KEY_LENGTH} visible ASCII
	 * characters or an integer.
	 * @param pointer the pointer, such as {@code /id} or {@code /data/event_id}, never
	 * {@code null}
	 * @return the source
	 * @throws IllegalArgumentException if the pointer is not a JSON Pointer to a member
	 * or an element of the body
	 */
	public static IdempotencyKeySource jsonPointer(String pointer) {
		Objects.requireNonNull(pointer, "'pointer' must not be null");
		if (!pointer.startsWith("/")) {
			throw new IllegalArgumentException("The key's JSON Pointer must start with '/': '" + pointer + "'");
		}
		return new IdempotencyKeySource(null, JsonPointer.compile(pointer));
	}

	/**
	 * Return the name of the header that carries the key.
	 * @return the header name, or {@code null} for the filter's key header or a key in
	 * the body
	 */
	public @Nullable String header() {
		return this.header;
	}

	/**
	 * Return the JSON Pointer of the key in the request body.
	 * @return the pointer, or {@code null} for a key in a header
	 */
	public @Nullable String jsonPointer() {
		return (this.jsonPointer != null) ? this.jsonPointer.toString() : null;
	}

	/**
	 * Return whether the key is in the request body.
	 * @return {@code true} for a JSON Pointer source
	 */
	public boolean isBody() {
		return this.jsonPointer != null;
	}

	/**
	 * Return the JSON Pointer of the key in the request body, compiled.
	 * @return the pointer, or {@code null} for a key in a header
	 */
	public @Nullable JsonPointer pointer() {
		return this.jsonPointer;
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return this == other || (other instanceof IdempotencyKeySource that && Objects.equals(this.header, that.header)
				&& Objects.equals(jsonPointer(), that.jsonPointer()));
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.header, jsonPointer());
	}

	@Override
	public String toString() {
		if (this.jsonPointer != null) {
			return "JSON body at '" + this.jsonPointer + "'";
		}
		return (this.header != null) ? "header '" + this.header + "'" : "key header";
	}

}
