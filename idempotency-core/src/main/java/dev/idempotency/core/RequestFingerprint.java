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

import java.security.MessageDigest;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * SHA-256 fingerprint of a request: what a retry must match to be answered with the
 * stored response of the first request.
 * <p>
 * Instances are immutable and thread-safe; the bytes are copied in and out.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 * @see dev.idempotency.core.fingerprint.RequestFingerprinter
 */
public final class RequestFingerprint {

	/**
	 * Number of bytes of a fingerprint.
	 */
	public static final int LENGTH = 32;

	private static final HexFormat HEX = HexFormat.of();

	private final byte[] bytes;

	private RequestFingerprint(byte[] bytes) {
		this.bytes = bytes;
	}

	/**
	 * Create a fingerprint from its {@value #LENGTH} bytes.
	 * @param bytes the digest, never {@code null}; copied
	 * @return the fingerprint
	 * @throws IllegalArgumentException if the array does not hold exactly
	 * {@value #LENGTH} bytes
	 */
	public static RequestFingerprint of(byte[] bytes) {
		Objects.requireNonNull(bytes, "'bytes' must not be null");
		if (bytes.length != LENGTH) {
			throw new IllegalArgumentException("'bytes' must hold " + LENGTH + " bytes, not " + bytes.length);
		}
		return new RequestFingerprint(bytes.clone());
	}

	/**
	 * Create a fingerprint from its lower-case or upper-case hexadecimal form.
	 * @param hex the {@value #LENGTH}-byte digest as hexadecimal, never {@code null}
	 * @return the fingerprint
	 * @throws IllegalArgumentException if the text is not {@value #LENGTH} bytes of hex
	 */
	public static RequestFingerprint fromHex(String hex) {
		Objects.requireNonNull(hex, "'hex' must not be null");
		return of(HEX.parseHex(hex));
	}

	/**
	 * Return a copy of the {@value #LENGTH} bytes of this fingerprint.
	 * @return a new array
	 */
	public byte[] toByteArray() {
		return this.bytes.clone();
	}

	/**
	 * Return the lower-case hexadecimal form of this fingerprint.
	 * @return 64 hexadecimal characters
	 */
	public String toHex() {
		return HEX.formatHex(this.bytes);
	}

	@Override
	public boolean equals(@Nullable Object obj) {
		if (this == obj) {
			return true;
		}
		// constant time: fingerprints are compared against client-influenced input
		return (obj instanceof RequestFingerprint other) && MessageDigest.isEqual(this.bytes, other.bytes);
	}

	@Override
	public int hashCode() {
		return Arrays.hashCode(this.bytes);
	}

	@Override
	public String toString() {
		return "sha256:" + toHex();
	}

}
