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

package dev.idempotency.core.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.IdempotencyStoreException;

/**
 * What the engine decided for a request, returned by {@link IdempotencyEngine#begin}.
 * Exactly one of the subtypes applies.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public sealed interface Decision permits Decision.Execute, Decision.Replay, Decision.InProgress, Decision.Mismatch,
		Decision.Unavailable, Decision.Unprotected {

	/**
	 * The caller owns the key: run the handler, then {@link Execution#complete complete}
	 * or {@link Execution#release release} the execution (closing it releases the key if
	 * neither happened).
	 *
	 * @param execution the handle of this execution
	 */
	record Execute(Execution execution) implements Decision {

		/**
		 * Create a decision.
		 * @param execution the execution, never {@code null}
		 */
		public Execute {
			Objects.requireNonNull(execution, "'execution' must not be null");
		}

	}

	/**
	 * Answer with the stored response of the first request; do not run the handler.
	 *
	 * @param response the stored response
	 * @param expiresAt when the record expires
	 */
	record Replay(StoredResponse response, Instant expiresAt) implements Decision {

		/**
		 * Create a decision.
		 * @param response the stored response, never {@code null}
		 * @param expiresAt when the record expires, never {@code null}
		 */
		public Replay {
			Objects.requireNonNull(response, "'response' must not be null");
			Objects.requireNonNull(expiresAt, "'expiresAt' must not be null");
		}

	}

	/**
	 * The first request is still running (after any configured in-flight wait): answer
	 * 409 with {@code Retry-After}.
	 *
	 * @param retryAfter a suggested delay before the retry, at least one second
	 */
	record InProgress(Duration retryAfter) implements Decision {

		/**
		 * Create a decision.
		 * @param retryAfter the delay, never {@code null}
		 */
		public InProgress {
			Objects.requireNonNull(retryAfter, "'retryAfter' must not be null");
		}

	}

	/**
	 * The key belongs to a request with another fingerprint: answer 422.
	 */
	record Mismatch() implements Decision {

	}

	/**
	 * The store could not answer and the policy fails closed: answer 503 with
	 * {@code Retry-After}; do not run the handler.
	 *
	 * @param retryAfter the delay to advertise
	 * @param cause the store's failure
	 */
	record Unavailable(Duration retryAfter, IdempotencyStoreException cause) implements Decision {

		/**
		 * Create a decision.
		 * @param retryAfter the delay, never {@code null}
		 * @param cause the failure, never {@code null}
		 */
		public Unavailable {
			Objects.requireNonNull(retryAfter, "'retryAfter' must not be null");
			Objects.requireNonNull(cause, "'cause' must not be null");
		}

	}

	/**
	 * The store could not answer and the policy fails open: run the handler without
	 * protection. Nothing is stored.
	 *
	 * @param cause the store's failure
	 */
	record Unprotected(IdempotencyStoreException cause) implements Decision {

		/**
		 * Create a decision.
		 * @param cause the failure, never {@code null}
		 */
		public Unprotected {
			Objects.requireNonNull(cause, "'cause' must not be null");
		}

	}

}
