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

package dev.idempotency.spring.store.redis;

import java.util.Arrays;

import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;

/**
 * The value a record key holds in Redis, named here once for Java and for the Lua
 * scripts, into whose text {@link RedisRecordScripts} writes the positions (from 1, as
 * Lua counts) and the state letters. Offsets here count from 0.
 *
 * <pre>
 * offset 0     1              17             33             49             81             97
 *        +-----+--------------+--------------+--------------+--------------+--------------+-----------
 *        |state| time         | created at   | claim TTL    | fingerprint  | owner token  | response
 *        | P/C | 16 digits    | 16 digits    | 16 digits    | 32 bytes     | 16 bytes     | C only
 *        +-----+--------------+--------------+--------------+--------------+--------------+-----------
 *        |&lt;------------------------------- header, 97 bytes --------------------------------&gt;|
 * </pre>
 *
 * <ul>
 * <li><b>time</b>: processing, the lease floor, the key's remaining TTL in milliseconds
 * at or below which the lease has lapsed; completed, the expiry in epoch milliseconds of
 * the Redis clock.</li>
 * <li><b>created at</b>: epoch milliseconds of the Redis clock; zeros in a processing
 * record until a script stamps it.</li>
 * <li><b>claim TTL</b>: the {@code PX} in milliseconds the record was claimed with, so
 * that an unstamped creation time is {@code now - (claim TTL - PTTL)}.</li>
 * <li><b>response</b>: completed only, the {@code StoredResponseCodec} form.</li>
 * </ul>
 * Times are ASCII digits, so that a script can read them with {@code tonumber} and the
 * value stays legible in {@code redis-cli}. A processing record is exactly a header.
 *
 * @author Idempotency contributors
 */
final class RedisRecordLayout {

	static final int STATE_OFFSET = 0;

	// processing: the lease floor; completed: the expiry
	static final int TIME_OFFSET = 1;

	static final int CREATED_OFFSET = 17;

	static final int CLAIM_TTL_OFFSET = 33;

	static final int FINGERPRINT_OFFSET = 49;

	static final int OWNER_OFFSET = 81;

	static final int HEADER_LENGTH = 97;

	static final int TIME_DIGITS = 16;

	static final byte PROCESSING = 'P';

	static final byte COMPLETED = 'C';

	/**
	 * What {@link #readTime} answers for a field that is not 16 digits: no time the store
	 * writes is negative.
	 */
	static final long UNREADABLE_TIME = -1;

	private RedisRecordLayout() {
	}

	/**
	 * Return the value of a processing record as {@code acquire} writes it: the creation
	 * time is not stamped, so that the claim needs no clock.
	 * @param fingerprint the request's fingerprint
	 * @param token the owner's token
	 * @param leaseFloor the key's TTL at or below which the lease has lapsed
	 * @param ttlMillis the key's TTL when claimed
	 * @return a new array of {@link #HEADER_LENGTH} bytes
	 */
	static byte[] claim(RequestFingerprint fingerprint, OwnerToken token, long leaseFloor, long ttlMillis) {
		byte[] value = new byte[HEADER_LENGTH];
		value[STATE_OFFSET] = PROCESSING;
		writeTime(value, TIME_OFFSET, leaseFloor);
		writeTime(value, CREATED_OFFSET, 0);
		writeTime(value, CLAIM_TTL_OFFSET, ttlMillis);
		System.arraycopy(fingerprint.toByteArray(), 0, value, FINGERPRINT_OFFSET, RequestFingerprint.LENGTH);
		System.arraycopy(token.toBytes(), 0, value, OWNER_OFFSET, OwnerToken.LENGTH);
		return value;
	}

	/**
	 * Return whether a value is long enough for a header and starts with a known state.
	 * The rest is checked where it is read.
	 * @param value the value of a record key
	 * @return {@code true} if it can be read as a record
	 */
	static boolean hasHeader(byte[] value) {
		return value.length >= HEADER_LENGTH && (isProcessing(value) || isCompleted(value));
	}

	/**
	 * Return whether a value with a header is a processing record.
	 * @param value the value
	 * @return {@code true} if its state is {@code P}
	 */
	static boolean isProcessing(byte[] value) {
		return value[STATE_OFFSET] == PROCESSING;
	}

	/**
	 * Return whether a value with a header is a completed record.
	 * @param value the value
	 * @return {@code true} if its state is {@code C}
	 */
	static boolean isCompleted(byte[] value) {
		return value[STATE_OFFSET] == COMPLETED;
	}

	/**
	 * Return whether a record holds the given fingerprint, without copying it.
	 * @param value a value with a header
	 * @param fingerprint the fingerprint
	 * @return {@code true} if the bytes are equal
	 */
	static boolean hasFingerprint(byte[] value, RequestFingerprint fingerprint) {
		return Arrays.equals(value, FINGERPRINT_OFFSET, FINGERPRINT_OFFSET + RequestFingerprint.LENGTH,
				fingerprint.toByteArray(), 0, RequestFingerprint.LENGTH);
	}

	/**
	 * Return the request fingerprint of a record.
	 * @param value a value with a header
	 * @return the fingerprint
	 */
	static RequestFingerprint fingerprint(byte[] value) {
		return RequestFingerprint
			.of(Arrays.copyOfRange(value, FINGERPRINT_OFFSET, FINGERPRINT_OFFSET + RequestFingerprint.LENGTH));
	}

	/**
	 * Return the owner token of a record.
	 * @param value a value with a header
	 * @return the token
	 */
	static OwnerToken owner(byte[] value) {
		return OwnerToken.fromBytes(Arrays.copyOfRange(value, OWNER_OFFSET, OWNER_OFFSET + OwnerToken.LENGTH));
	}

	/**
	 * Read one of the time fields of a record.
	 * @param value a value with a header
	 * @param offset {@link #TIME_OFFSET}, {@link #CREATED_OFFSET} or
	 * {@link #CLAIM_TTL_OFFSET}
	 * @return the number, or {@link #UNREADABLE_TIME} if the field is not all digits
	 */
	static long readTime(byte[] value, int offset) {
		long millis = 0;
		for (int i = offset; i < offset + TIME_DIGITS; i++) {
			int digit = value[i] - '0';
			if (digit < 0 || digit > 9) {
				return UNREADABLE_TIME;
			}
			millis = millis * 10 + digit;
		}
		return millis;
	}

	/**
	 * Write a time field, zero-padded to {@link #TIME_DIGITS} digits.
	 * @param value the value to write into
	 * @param offset the field's offset
	 * @param millis the number, from 0 to 16 nines
	 */
	static void writeTime(byte[] value, int offset, long millis) {
		long rest = millis;
		for (int i = offset + TIME_DIGITS - 1; i >= offset; i--) {
			value[i] = (byte) ('0' + (rest % 10));
			rest /= 10;
		}
	}

}
