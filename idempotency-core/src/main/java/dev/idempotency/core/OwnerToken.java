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

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Fencing token of the caller that owns a key while its handler runs.
 * <p>
 * A token is generated afresh for every acquisition. Stores accept a completion, release
 * or lease extension only from the caller whose token matches the record's, so a caller
 * whose lease was taken over can no longer write. Tokens never leave the server: they
 * must be unique, not secret.
 * <p>
 * Instances are immutable and thread-safe.
 *
 * @param high the most significant 64 bits
 * @param low the least significant 64 bits
 * @author Idempotency contributors
 * @since 0.1.0
 */
public record OwnerToken(long high, long low) {

	/**
	 * Number of bytes of the binary form of a token.
	 */
	public static final int LENGTH = 16;

	// 64 random bits that tell this JVM's tokens from every other's, then a sequence that
	// starts at a random value: unique within the JVM without a SecureRandom (and its
	// global lock) on every request
	private static final long INSTANCE;

	private static final AtomicLong SEQUENCE;

	static {
		SecureRandom random = new SecureRandom();
		INSTANCE = random.nextLong();
		SEQUENCE = new AtomicLong(random.nextLong());
	}

	private static final HexFormat HEX = HexFormat.of();

	/**
	 * Generate a new token: 64 bits drawn from a {@link SecureRandom} once per JVM,
	 * followed by a 64-bit sequence that starts at a random value. No two calls in one
	 * JVM return the same token, and tokens of different JVMs differ in their first half
	 * with overwhelming probability.
	 * @return a new token
	 */
	public static OwnerToken generate() {
		return new OwnerToken(INSTANCE, SEQUENCE.getAndIncrement());
	}

	/**
	 * Create a token from its {@value #LENGTH}-byte big-endian binary form.
	 * @param bytes the bytes, never {@code null}
	 * @return the token
	 * @throws IllegalArgumentException if the array does not hold {@value #LENGTH} bytes
	 */
	public static OwnerToken fromBytes(byte[] bytes) {
		Objects.requireNonNull(bytes, "'bytes' must not be null");
		if (bytes.length != LENGTH) {
			throw new IllegalArgumentException("'bytes' must hold " + LENGTH + " bytes, not " + bytes.length);
		}
		return new OwnerToken(readLong(bytes, 0), readLong(bytes, 8));
	}

	/**
	 * Create a token from its 32-character hexadecimal form.
	 * @param hex the hexadecimal form, never {@code null}
	 * @return the token
	 * @throws IllegalArgumentException if the text is not 16 bytes of hexadecimal
	 */
	public static OwnerToken fromHex(String hex) {
		Objects.requireNonNull(hex, "'hex' must not be null");
		return fromBytes(HEX.parseHex(hex));
	}

	/**
	 * Return the {@value #LENGTH}-byte big-endian binary form of this token.
	 * @return a new array
	 */
	public byte[] toBytes() {
		byte[] bytes = new byte[LENGTH];
		writeLong(bytes, 0, this.high);
		writeLong(bytes, 8, this.low);
		return bytes;
	}

	/**
	 * Return the 32-character lower-case hexadecimal form of this token.
	 * @return the hexadecimal form
	 */
	public String toHex() {
		return HEX.formatHex(toBytes());
	}

	@Override
	public String toString() {
		return toHex();
	}

	private static long readLong(byte[] bytes, int offset) {
		long value = 0;
		for (int i = 0; i < 8; i++) {
			value = (value << 8) | (bytes[offset + i] & 0xFF);
		}
		return value;
	}

	private static void writeLong(byte[] bytes, int offset, long value) {
		for (int i = 7; i >= 0; i--) {
			bytes[offset + i] = (byte) value;
			value >>>= 8;
		}
	}

}
