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

package dev.idempotency.core.store;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.StoredResponse;
import org.jspecify.annotations.Nullable;

/**
 * Outcome of {@link IdempotencyStore#acquire}: exactly one of the four expected answers
 * to "may I run this request?".
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public sealed interface AcquireResult
		permits AcquireResult.Acquired, AcquireResult.Replay, AcquireResult.InProgress, AcquireResult.Mismatch {

	/**
	 * The caller now owns the key (it was absent, expired, or its previous owner's lease
	 * had lapsed) and must run the handler, then complete or release the key.
	 *
	 * @param token the caller's fencing token, as passed to {@code acquire}
	 */
	record Acquired(OwnerToken token) implements AcquireResult {

		/**
		 * Create a result.
		 * @param token the owner token, never {@code null}
		 */
		public Acquired {
			Objects.requireNonNull(token, "'token' must not be null");
		}

	}

	/**
	 * The key is completed with the same fingerprint: answer with the stored response.
	 *
	 * @param response the stored response, never {@code null};
	 * {@link StoredResponse#unreadable()} if the store cannot decode it
	 * @param expiresAt when the record expires, by the store's clock, never {@code null}
	 * @param timeToLive how long the record still lives, measured by the store's clock
	 * when it answered; {@code null} if the store does not report it. Whoever copies the
	 * record elsewhere must take its lifetime from here rather than compare
	 * {@code expiresAt} with another clock.
	 */
	record Replay(StoredResponse response, Instant expiresAt, @Nullable Duration timeToLive) implements AcquireResult {

		/**
		 * Create a result.
		 * @param response the stored response, never {@code null}
		 * @param expiresAt when the record expires, never {@code null}
		 * @param timeToLive the remaining lifetime by the store's clock, not negative, or
		 * {@code null} if unknown
		 */
		public Replay {
			Objects.requireNonNull(response, "'response' must not be null");
			Objects.requireNonNull(expiresAt, "'expiresAt' must not be null");
			if (timeToLive != null && timeToLive.isNegative()) {
				throw new IllegalArgumentException("'timeToLive' must not be negative");
			}
		}

		/**
		 * Create a result whose remaining lifetime is not reported.
		 * @param response the stored response, never {@code null}
		 * @param expiresAt when the record expires, never {@code null}
		 */
		public Replay(StoredResponse response, Instant expiresAt) {
			this(response, expiresAt, null);
		}

	}

	/**
	 * Another caller owns the key with the same fingerprint and its lease is live, or the
	 * key waits for the confirmation of a takeover.
	 *
	 * @param retryAfter how long until the owner's lease lapses at the latest, or, when
	 * {@code ownerGone}, how long until the key can be taken over; never negative
	 * @param ownerGone whether the store knows that the owner is gone (its lease lapsed
	 * and a takeover is scheduled), so that nothing frees the key before
	 * {@code retryAfter}: a live owner usually ends long before its lease, a gone one
	 * never does
	 */
	record InProgress(Duration retryAfter, boolean ownerGone) implements AcquireResult {

		/**
		 * Create a result.
		 * @param retryAfter the remaining lease or wait, never {@code null} or negative
		 * @param ownerGone whether the owner is known to be gone
		 */
		public InProgress {
			Objects.requireNonNull(retryAfter, "'retryAfter' must not be null");
			if (retryAfter.isNegative()) {
				throw new IllegalArgumentException("'retryAfter' must not be negative");
			}
		}

		/**
		 * Create a result for a live owner.
		 * @param retryAfter the remaining lease, never {@code null} or negative
		 */
		public InProgress(Duration retryAfter) {
			this(retryAfter, false);
		}

	}

	/**
	 * The key is in use (processing or completed) for a request with another fingerprint.
	 */
	record Mismatch() implements AcquireResult {

	}

}
