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

import java.util.Arrays;

/**
 * Growable byte buffer that the fingerprinter writes its framing and the canonical JSON
 * form into, so that the digest is fed with a few large updates instead of many small
 * ones. Not thread-safe: each buffer belongs to one {@link FingerprintWorkspace} at a
 * time.
 *
 * @author Idempotency contributors
 */
final class FingerprintBuffer {

	private static final int INITIAL_CAPACITY = 256;

	private byte[] bytes;

	private int length;

	FingerprintBuffer() {
		this.bytes = new byte[INITIAL_CAPACITY];
	}

	byte[] bytes() {
		return this.bytes;
	}

	int length() {
		return this.length;
	}

	void setLength(int length) {
		this.length = length;
	}

	void reset() {
		this.length = 0;
	}

	/**
	 * Drop a buffer that grew for an unusually large request, so that a pooled workspace
	 * does not keep it alive forever.
	 * @param maxRetained the largest capacity worth keeping
	 */
	void trim(int maxRetained) {
		this.length = 0;
		if (this.bytes.length > maxRetained) {
			this.bytes = new byte[INITIAL_CAPACITY];
		}
	}

	/**
	 * Make room for {@code extra} more bytes.
	 * @param extra the number of bytes about to be written
	 */
	void ensure(int extra) {
		int required = this.length + extra;
		if (required < 0) {
			throw new IllegalStateException("Fingerprint buffer cannot grow beyond 2 GiB");
		}
		if (required > this.bytes.length) {
			int grown = Math.max(required, this.bytes.length << 1);
			// doubling may overflow for huge buffers; the exact requirement always fits
			this.bytes = Arrays.copyOf(this.bytes, (grown < 0) ? required : grown);
		}
	}

	void write(int b) {
		ensure(1);
		this.bytes[this.length++] = (byte) b;
	}

	void write(byte[] source, int offset, int count) {
		ensure(count);
		System.arraycopy(source, offset, this.bytes, this.length, count);
		this.length += count;
	}

	void writeInt(int value) {
		ensure(4);
		putInt(this.length, value);
		this.length += 4;
	}

	void putInt(int position, int value) {
		this.bytes[position] = (byte) (value >>> 24);
		this.bytes[position + 1] = (byte) (value >>> 16);
		this.bytes[position + 2] = (byte) (value >>> 8);
		this.bytes[position + 3] = (byte) value;
	}

	/**
	 * Write a string as a 4-byte big-endian length followed by its UTF-8 bytes.
	 * <p>
	 * A surrogate that is not part of a pair is written as the three bytes UTF-8 would
	 * use for its code unit (as WTF-8 does) instead of being replaced, as
	 * {@link String#getBytes(java.nio.charset.Charset)} would, so that distinct strings
	 * always give distinct bytes.
	 * @param value the string
	 */
	void writeLengthPrefixed(String value) {
		int lengthPosition = this.length;
		writeInt(0);
		int start = this.length;
		int count = value.length();
		for (int i = 0; i < count; i++) {
			ensure(4);
			char c = value.charAt(i);
			if (c < 0x80) {
				this.bytes[this.length++] = (byte) c;
			}
			else {
				i = encode(value.charAt(i), (i + 1 < count) ? value.charAt(i + 1) : 0, i);
			}
		}
		putInt(lengthPosition, this.length - start);
	}

	/**
	 * Encode one non-ASCII character, possibly with the one after it. The caller has
	 * ensured room for four bytes.
	 * @param c the character
	 * @param next the following character, or 0 at the end
	 * @param index the index of {@code c}
	 * @return the index of the last character consumed
	 */
	int encode(char c, char next, int index) {
		byte[] b = this.bytes;
		int n = this.length;
		if (c < 0x800) {
			b[n++] = (byte) (0xC0 | (c >> 6));
			b[n++] = (byte) (0x80 | (c & 0x3F));
		}
		else if (Character.isHighSurrogate(c) && Character.isLowSurrogate(next)) {
			int codePoint = Character.toCodePoint(c, next);
			b[n++] = (byte) (0xF0 | (codePoint >> 18));
			b[n++] = (byte) (0x80 | ((codePoint >> 12) & 0x3F));
			b[n++] = (byte) (0x80 | ((codePoint >> 6) & 0x3F));
			b[n++] = (byte) (0x80 | (codePoint & 0x3F));
			this.length = n;
			return index + 1;
		}
		else {
			b[n++] = (byte) (0xE0 | (c >> 12));
			b[n++] = (byte) (0x80 | ((c >> 6) & 0x3F));
			b[n++] = (byte) (0x80 | (c & 0x3F));
		}
		this.length = n;
		return index;
	}

}
