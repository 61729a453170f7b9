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

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Compact, versioned binary form of a {@link StoredResponse}, used by every store.
 * <p>
 * Format version 1, all integers unsigned; {@code varint} is LEB128 (7 bits a byte, low
 * bits first, at most 5 bytes): <pre>
 * u8      version            always 1
 * u8      flags              bit 0: body retained; other bits zero
 * u16     status             big-endian, 100-999
 * varint  header count
 *         per header: varint name length, name (UTF-8), varint value length, value (UTF-8)
 * varint  body length
 * bytes   body
 * </pre> Nothing may follow the body. A typical JSON response with three headers costs
 * about 60 bytes on top of its body.
 * <p>
 * <b>Limits.</b> A stored response holds at most {@value #MAX_BODY_SIZE} body bytes,
 * {@value #MAX_HEADER_COUNT} headers and {@value #MAX_HEADER_BYTES} bytes of header names
 * and values. They are part of the format: {@link #encode} refuses a response beyond them
 * and {@link #decode} refuses data beyond them, so that whatever one instance stores
 * every other instance can read. A caller that may produce larger responses stores the
 * form that {@link #fitToLimits} returns instead.
 * <p>
 * Decoding treats its input as hostile: every length is checked against the bytes that
 * remain and against the limits before anything is allocated, so corrupt or truncated
 * input fails with a {@link StoredResponseFormatException} and never with an
 * out-of-memory error or an index exception.
 * <p>
 * Thread-safe.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class StoredResponseCodec {

	/**
	 * The format version this codec writes.
	 */
	public static final int VERSION = 1;

	/**
	 * Largest body a stored response may have, in bytes (64 MiB).
	 */
	public static final int MAX_BODY_SIZE = 64 * 1024 * 1024;

	/**
	 * Largest number of headers a stored response may have.
	 */
	public static final int MAX_HEADER_COUNT = 1024;

	/**
	 * Largest total size of the header names and values of a stored response, in UTF-8
	 * bytes (256 KiB).
	 */
	public static final int MAX_HEADER_BYTES = 256 * 1024;

	private static final int FLAG_BODY_RETAINED = 1;

	/**
	 * Return the form in which a response can be stored: the response itself when it is
	 * within the {@linkplain StoredResponseCodec limits}, else the response without its
	 * body ({@link StoredResponse#isBodyRetained()} is {@code false}, so a replay answers
	 * a problem instead) with its status and as many of its leading headers as fit.
	 * @param response the response, never {@code null}
	 * @return a response that {@link #encode} accepts
	 * @throws IllegalArgumentException if the response is
	 * {@linkplain StoredResponse#isReadable() unreadable}
	 */
	public static StoredResponse fitToLimits(StoredResponse response) {
		Objects.requireNonNull(response, "'response' must not be null");
		if (!response.isReadable()) {
			throw new IllegalArgumentException("An unreadable response cannot be stored");
		}
		List<HttpHeader> headers = response.headers();
		int fitting = fittingHeaders(headers);
		if (fitting == headers.size() && response.bodyLength() <= MAX_BODY_SIZE) {
			return response;
		}
		return StoredResponse.withoutBody(response.status(), headers.subList(0, fitting));
	}

	// the number of leading headers within the count and size limits
	private static int fittingHeaders(List<HttpHeader> headers) {
		int limit = Math.min(headers.size(), MAX_HEADER_COUNT);
		long bytes = 0;
		for (int i = 0; i < limit; i++) {
			HttpHeader header = headers.get(i);
			bytes += utf8Length(header.name()) + utf8Length(header.value());
			if (bytes > MAX_HEADER_BYTES) {
				return i;
			}
		}
		return limit;
	}

	private static int utf8Length(String text) {
		int length = text.length();
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			if (c >= 0x800) {
				// two more bytes, or a surrogate pair: 4 bytes for 2 chars
				length += Character.isSurrogate(c) ? 1 : 2;
			}
			else if (c >= 0x80) {
				length++;
			}
		}
		return length;
	}

	/**
	 * Encode a response.
	 * @param response the response, never {@code null}
	 * @return a new array holding exactly the encoded form
	 * @throws IllegalArgumentException if the response exceeds the
	 * {@linkplain StoredResponseCodec limits} (see {@link #fitToLimits}) or is
	 * {@linkplain StoredResponse#isReadable() unreadable}
	 */
	public byte[] encode(StoredResponse response) {
		Objects.requireNonNull(response, "'response' must not be null");
		if (!response.isReadable()) {
			throw new IllegalArgumentException("An unreadable response cannot be stored");
		}
		List<HttpHeader> headers = response.headers();
		if (headers.size() > MAX_HEADER_COUNT) {
			throw new IllegalArgumentException(
					"Header count " + headers.size() + " exceeds the limit of " + MAX_HEADER_COUNT);
		}
		byte[][] texts = new byte[headers.size() * 2][];
		int size = 4 + varintSize(headers.size());
		long headerBytes = 0;
		for (int i = 0; i < headers.size(); i++) {
			HttpHeader header = headers.get(i);
			byte[] name = header.name().getBytes(StandardCharsets.UTF_8);
			byte[] value = header.value().getBytes(StandardCharsets.UTF_8);
			texts[2 * i] = name;
			texts[2 * i + 1] = value;
			headerBytes += name.length + value.length;
			if (headerBytes > MAX_HEADER_BYTES) {
				throw new IllegalArgumentException("Headers exceed the limit of " + MAX_HEADER_BYTES + " bytes");
			}
			size += varintSize(name.length) + name.length + varintSize(value.length) + value.length;
		}
		byte[] body = response.bodyArray();
		if (body.length > MAX_BODY_SIZE) {
			throw new IllegalArgumentException("Body length " + body.length + " exceeds the limit of " + MAX_BODY_SIZE);
		}
		size += varintSize(body.length) + body.length;
		byte[] out = new byte[size];
		out[0] = VERSION;
		out[1] = (byte) (response.isBodyRetained() ? FLAG_BODY_RETAINED : 0);
		out[2] = (byte) (response.status() >>> 8);
		out[3] = (byte) response.status();
		int position = writeVarint(out, 4, headers.size());
		for (byte[] text : texts) {
			position = writeVarint(out, position, text.length);
			System.arraycopy(text, 0, out, position, text.length);
			position += text.length;
		}
		position = writeVarint(out, position, body.length);
		System.arraycopy(body, 0, out, position, body.length);
		return out;
	}

	/**
	 * Decode a response from a whole array.
	 * @param data the encoded form, never {@code null}
	 * @return the response
	 * @throws StoredResponseFormatException if the data is not a valid encoding
	 */
	public StoredResponse decode(byte[] data) {
		Objects.requireNonNull(data, "'data' must not be null");
		return decode(data, 0, data.length);
	}

	/**
	 * Decode a response from a range of an array, which must hold exactly one encoded
	 * response.
	 * @param data the array, never {@code null}
	 * @param offset where the encoded form starts
	 * @param length the length of the encoded form
	 * @return the response
	 * @throws StoredResponseFormatException if the range is not a valid encoding
	 * @throws IndexOutOfBoundsException if the range is outside the array
	 */
	public StoredResponse decode(byte[] data, int offset, int length) {
		Objects.requireNonNull(data, "'data' must not be null");
		Objects.checkFromIndexSize(offset, length, data.length);
		Reader reader = new Reader(data, offset, offset + length);
		int version = reader.u8();
		if (version != VERSION) {
			throw new StoredResponseFormatException("Unknown stored response format version " + version);
		}
		int flags = reader.u8();
		if ((flags & ~FLAG_BODY_RETAINED) != 0) {
			throw new StoredResponseFormatException("Unknown flags " + flags);
		}
		int status = (reader.u8() << 8) | reader.u8();
		if (status < 100 || status > 999) {
			throw new StoredResponseFormatException("Invalid status " + status);
		}
		int headerCount = reader.varint();
		if (headerCount > MAX_HEADER_COUNT) {
			throw new StoredResponseFormatException(
					"Header count " + headerCount + " exceeds the limit of " + MAX_HEADER_COUNT);
		}
		List<HttpHeader> headers = new ArrayList<>(Math.min(headerCount, reader.remaining()));
		int headerBytes = 0;
		for (int i = 0; i < headerCount; i++) {
			int nameLength = reader.varint();
			headerBytes += nameLength;
			checkHeaderBytes(headerBytes);
			String name = reader.utf8(nameLength);
			int valueLength = reader.varint();
			headerBytes += valueLength;
			checkHeaderBytes(headerBytes);
			String value = reader.utf8(valueLength);
			if (name.isEmpty()) {
				throw new StoredResponseFormatException("Empty header name");
			}
			headers.add(new HttpHeader(name, value));
		}
		int bodyLength = reader.varint();
		if (bodyLength > MAX_BODY_SIZE) {
			throw new StoredResponseFormatException(
					"Body length " + bodyLength + " exceeds the limit of " + MAX_BODY_SIZE);
		}
		byte[] body = reader.bytes(bodyLength);
		if (reader.remaining() != 0) {
			throw new StoredResponseFormatException(reader.remaining() + " unexpected bytes after the body");
		}
		if ((flags & FLAG_BODY_RETAINED) == 0) {
			if (bodyLength != 0) {
				throw new StoredResponseFormatException("A response without retained body has body bytes");
			}
			return StoredResponse.withoutBody(status, headers);
		}
		return StoredResponse.adopt(status, headers, body);
	}

	private static void checkHeaderBytes(int headerBytes) {
		if (headerBytes < 0 || headerBytes > MAX_HEADER_BYTES) {
			throw new StoredResponseFormatException("Headers exceed the limit of " + MAX_HEADER_BYTES + " bytes");
		}
	}

	private static int varintSize(int value) {
		int size = 1;
		while ((value & ~0x7F) != 0) {
			value >>>= 7;
			size++;
		}
		return size;
	}

	private static int writeVarint(byte[] out, int position, int value) {
		while ((value & ~0x7F) != 0) {
			out[position++] = (byte) ((value & 0x7F) | 0x80);
			value >>>= 7;
		}
		out[position++] = (byte) value;
		return position;
	}

	/**
	 * Bounds-checked cursor over the encoded bytes.
	 */
	private static final class Reader {

		private final byte[] data;

		private int position;

		private final int end;

		Reader(byte[] data, int position, int end) {
			this.data = data;
			this.position = position;
			this.end = end;
		}

		int remaining() {
			return this.end - this.position;
		}

		int u8() {
			if (this.position >= this.end) {
				throw new StoredResponseFormatException("Truncated stored response");
			}
			return this.data[this.position++] & 0xFF;
		}

		int varint() {
			int value = 0;
			for (int shift = 0; shift < 35; shift += 7) {
				int b = u8();
				if (shift == 28 && (b & 0xF0) != 0) {
					throw new StoredResponseFormatException("Length does not fit in 31 bits");
				}
				value |= (b & 0x7F) << shift;
				if ((b & 0x80) == 0) {
					return value;
				}
			}
			throw new StoredResponseFormatException("Length does not fit in 31 bits");
		}

		byte[] bytes(int length) {
			checkAvailable(length);
			byte[] bytes = new byte[length];
			System.arraycopy(this.data, this.position, bytes, 0, length);
			this.position += length;
			return bytes;
		}

		String utf8(int length) {
			checkAvailable(length);
			String text = new String(this.data, this.position, length, StandardCharsets.UTF_8);
			this.position += length;
			return text;
		}

		private void checkAvailable(int length) {
			if (length > remaining()) {
				throw new StoredResponseFormatException(
						"Truncated stored response: " + length + " bytes announced, " + remaining() + " left");
			}
		}

	}

}
