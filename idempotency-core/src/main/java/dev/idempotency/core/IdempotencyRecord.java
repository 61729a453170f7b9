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

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * Snapshot of a stored idempotency record, as returned by
 * {@link dev.idempotency.core.store.IdempotencyStore#find(IdempotencyKey)} for operations
 * and diagnostics. The engine never decides on a snapshot: every decision is made
 * atomically inside the store.
 * <p>
 * Instances are immutable and thread-safe.
 *
 * @param key the record's key, never {@code null}
 * @param fingerprint the first request's fingerprint, never {@code null}
 * @param status the state, never {@code null}
 * @param owner the fencing token of the owner that created or last took over the record,
 * never {@code null}
 * @param createdAt when the record was created, by the store's clock; {@code null} if the
 * store does not keep it
 * @param leaseExpiresAt when the owner's lease lapses, by the store's clock; {@code null}
 * once completed
 * @param expiresAt when the record expires, by the store's clock, never {@code null}
 * @param response the stored response once completed ({@link StoredResponse#unreadable()}
 * if the store cannot decode it), {@code null} while processing
 * @param timeToLive how long the record still lives, measured by the store's clock when
 * it was read; {@code null} if the store does not report it
 * @author Idempotency contributors
 * @since 0.1.0
 */
public record IdempotencyRecord(IdempotencyKey key, RequestFingerprint fingerprint, IdempotencyStatus status,
		OwnerToken owner, @Nullable Instant createdAt, @Nullable Instant leaseExpiresAt, Instant expiresAt,
		@Nullable StoredResponse response, @Nullable Duration timeToLive) {

	/**
	 * Create a record snapshot, checking that the state and response agree.
	 * @param key the record's key
	 * @param fingerprint the first request's fingerprint
	 * @param status the state
	 * @param owner the owner's fencing token
	 * @param createdAt when the record was created, or {@code null}
	 * @param leaseExpiresAt when the lease lapses, or {@code null} once completed
	 * @param expiresAt when the record expires
	 * @param response the stored response, only when completed
	 * @param timeToLive the remaining lifetime by the store's clock, not negative, or
	 * {@code null} if unknown
	 */
	public IdempotencyRecord {
		Objects.requireNonNull(key, "'key' must not be null");
		Objects.requireNonNull(fingerprint, "'fingerprint' must not be null");
		Objects.requireNonNull(status, "'status' must not be null");
		Objects.requireNonNull(owner, "'owner' must not be null");
		Objects.requireNonNull(expiresAt, "'expiresAt' must not be null");
		if ((status == IdempotencyStatus.COMPLETED) != (response != null)) {
			throw new IllegalArgumentException("a response is stored exactly when the record is COMPLETED");
		}
		if (timeToLive != null && timeToLive.isNegative()) {
			throw new IllegalArgumentException("'timeToLive' must not be negative");
		}
	}

	/**
	 * Create a record snapshot whose remaining lifetime is not reported.
	 * @param key the record's key
	 * @param fingerprint the first request's fingerprint
	 * @param status the state
	 * @param owner the owner's fencing token
	 * @param createdAt when the record was created, or {@code null}
	 * @param leaseExpiresAt when the lease lapses, or {@code null} once completed
	 * @param expiresAt when the record expires
	 * @param response the stored response, only when completed
	 */
	public IdempotencyRecord(IdempotencyKey key, RequestFingerprint fingerprint, IdempotencyStatus status,
			OwnerToken owner, @Nullable Instant createdAt, @Nullable Instant leaseExpiresAt, Instant expiresAt,
			@Nullable StoredResponse response) {
		this(key, fingerprint, status, owner, createdAt, leaseExpiresAt, expiresAt, response, null);
	}

}
