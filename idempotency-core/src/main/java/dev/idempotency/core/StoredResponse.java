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

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * Response of a completed first request, as it is stored and replayed: status, headers in
 * their original order, and body bytes.
 * <p>
 * A response whose body was larger than the configured maximum is stored without its body
 * ({@link #isBodyRetained()} is {@code false}); a replay then answers a problem that
 * carries the original status instead of a truncated body.
 * <p>
 * A store that holds a completed record whose response it cannot decode (corrupt, or
 * written by a later format version) answers with the {@link #unreadable()} response: the
 * request did complete, but neither its body nor its status is known. It is never stored.
 * <p>
 * Instances are immutable and thread-safe: the body is copied in, and read through
 * {@link #body()} (a read-only view), {@link #bodyBytes()} (a copy) or
 * {@link #writeBodyTo(OutputStream)}.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class StoredResponse {

	private static final byte[] EMPTY = new byte[0];

	private static final int UNKNOWN_STATUS = 0;

	private static final StoredResponse UNREADABLE = new StoredResponse(UNKNOWN_STATUS, List.of(), EMPTY, false);

	private final int status;

	private final List<HttpHeader> headers;

	private final byte[] body;

	private final boolean bodyRetained;

	/**
	 * Create a response with its body.
	 * @param status the HTTP status, 100 to 999
	 * @param headers the headers in order, never {@code null}; copied
	 * @param body the body, never {@code null}; copied
	 */
	public StoredResponse(int status, List<HttpHeader> headers, byte[] body) {
		this(status, headers, Objects.requireNonNull(body, "'body' must not be null").clone(), true);
	}

	private StoredResponse(int status, List<HttpHeader> headers, byte[] body, boolean bodyRetained) {
		if ((status < 100 || status > 999) && (status != UNKNOWN_STATUS || bodyRetained)) {
			throw new IllegalArgumentException("'status' must be between 100 and 999, not " + status);
		}
		Objects.requireNonNull(headers, "'headers' must not be null");
		this.status = status;
		this.headers = List.copyOf(headers);
		this.body = body;
		this.bodyRetained = bodyRetained;
	}

	/**
	 * Create a response whose body was too large to keep: only status and headers are
	 * stored, and a replay cannot reproduce it.
	 * @param status the HTTP status, 100 to 999
	 * @param headers the headers in order, never {@code null}; copied
	 * @return the response
	 */
	public static StoredResponse withoutBody(int status, List<HttpHeader> headers) {
		return new StoredResponse(status, headers, EMPTY, false);
	}

	/**
	 * Return the stand-in for a stored response that cannot be read: no status, headers
	 * nor body are known. Stores answer it for a completed record whose response they
	 * cannot decode, so that the request is neither run again nor refused as if the store
	 * were down; a replay answers a problem.
	 * @return the unreadable response
	 */
	public static StoredResponse unreadable() {
		return UNREADABLE;
	}

	/**
	 * Create a response that takes ownership of the given array instead of copying it.
	 * Only for code that has just produced the array and never touches it again.
	 * @param status the HTTP status
	 * @param headers the headers in order
	 * @param body the body, not copied
	 * @return the response
	 */
	static StoredResponse adopt(int status, List<HttpHeader> headers, byte[] body) {
		return new StoredResponse(status, headers, body, true);
	}

	/**
	 * Return the HTTP status.
	 * @return the status, 100 to 999; 0 for the {@link #unreadable()} response
	 */
	public int status() {
		return this.status;
	}

	/**
	 * Return the headers in the order the handler set them. Names keep their original
	 * case; a header set several times appears several times.
	 * @return an unmodifiable list
	 */
	public List<HttpHeader> headers() {
		return this.headers;
	}

	/**
	 * Return whether the response could be read from the store. Only the
	 * {@link #unreadable()} response cannot.
	 * @return {@code false} for the unreadable response
	 */
	public boolean isReadable() {
		return this.status != UNKNOWN_STATUS;
	}

	/**
	 * Return whether the body was stored. A response that was too large to store keeps
	 * only its status and headers.
	 * @return {@code true} if {@link #body()} is the complete original body
	 */
	public boolean isBodyRetained() {
		return this.bodyRetained;
	}

	/**
	 * Return a read-only view of the body.
	 * @return the body, empty if it was not retained
	 */
	public ByteBuffer body() {
		return ByteBuffer.wrap(this.body).asReadOnlyBuffer();
	}

	/**
	 * Return a copy of the body.
	 * @return a new array, empty if the body was not retained
	 */
	public byte[] bodyBytes() {
		return this.body.clone();
	}

	/**
	 * Return the number of body bytes.
	 * @return the length, 0 if the body was not retained
	 */
	public int bodyLength() {
		return this.body.length;
	}

	/**
	 * Write the body to the given stream without copying it.
	 * @param out the destination, never {@code null}
	 * @throws IOException if the stream fails
	 */
	public void writeBodyTo(OutputStream out) throws IOException {
		out.write(this.body);
	}

	byte[] bodyArray() {
		return this.body;
	}

	@Override
	public boolean equals(@Nullable Object obj) {
		if (this == obj) {
			return true;
		}
		return (obj instanceof StoredResponse other) && this.status == other.status
				&& this.bodyRetained == other.bodyRetained && this.headers.equals(other.headers)
				&& Arrays.equals(this.body, other.body);
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.status, this.headers, this.bodyRetained) * 31 + Arrays.hashCode(this.body);
	}

	@Override
	public String toString() {
		// never the body: it may hold personal or payment data
		if (!isReadable()) {
			return "StoredResponse[unreadable]";
		}
		return "StoredResponse[status=" + this.status + ", headers=" + this.headers.size() + ", body="
				+ (this.bodyRetained ? this.body.length + " bytes" : "not retained") + "]";
	}

}
