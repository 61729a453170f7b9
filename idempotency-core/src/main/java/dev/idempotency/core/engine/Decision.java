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
import org.jspecify.annotations.Nullable;

/**
 * What the engine decided for a request, returned by {@link IdempotencyEngine#begin}.
 * Exactly one of the subtypes applies. An adapter acts on it with a {@link Handler},
 * which has one method per subtype: {@link #handle(Handler)} calls the one that applies.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public sealed interface Decision permits Decision.Execute, Decision.Replay, Decision.InProgress, Decision.Mismatch,
		Decision.Unavailable, Decision.Unprotected {

	/**
	 * Call the method of the handler that is for this decision.
	 * @param <R> what the handler returns
	 * @param <X> what the handler may throw
	 * @param handler the handler, never {@code null}
	 * @return what the handler's method returned
	 * @throws X what the handler's method threw
	 */
	<R extends @Nullable Object, X extends Throwable> R handle(Handler<R, X> handler) throws X;

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

		@Override
		public <R extends @Nullable Object, X extends Throwable> R handle(Handler<R, X> handler) throws X {
			return handler.execute(this);
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

		@Override
		public <R extends @Nullable Object, X extends Throwable> R handle(Handler<R, X> handler) throws X {
			return handler.replay(this);
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

		@Override
		public <R extends @Nullable Object, X extends Throwable> R handle(Handler<R, X> handler) throws X {
			return handler.inProgress(this);
		}

	}

	/**
	 * The key belongs to a request with another fingerprint: answer 422.
	 */
	record Mismatch() implements Decision {

		@Override
		public <R extends @Nullable Object, X extends Throwable> R handle(Handler<R, X> handler) throws X {
			return handler.mismatch(this);
		}

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

		@Override
		public <R extends @Nullable Object, X extends Throwable> R handle(Handler<R, X> handler) throws X {
			return handler.unavailable(this);
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

		@Override
		public <R extends @Nullable Object, X extends Throwable> R handle(Handler<R, X> handler) throws X {
			return handler.unprotected(this);
		}

	}

	/**
	 * What an adapter does with each decision: the HTTP filter answers with the handler's
	 * response, a replay or a problem; a call of an idempotent method returns its result
	 * or the stored one, or throws. {@link Decision#handle(Handler)} calls the method
	 * that applies, so that the decision is dispatched in one place.
	 *
	 * @param <R> what the methods return
	 * @param <X> what the methods may throw
	 */
	interface Handler<R extends @Nullable Object, X extends Throwable> {

		/**
		 * The caller owns the key.
		 * @param decision the decision
		 * @return the adapter's answer
		 * @throws X if the adapter fails
		 */
		R execute(Execute decision) throws X;

		/**
		 * The key's response is stored.
		 * @param decision the decision
		 * @return the adapter's answer
		 * @throws X if the adapter fails
		 */
		R replay(Replay decision) throws X;

		/**
		 * Another owner still runs the key's request.
		 * @param decision the decision
		 * @return the adapter's answer
		 * @throws X if the adapter fails
		 */
		R inProgress(InProgress decision) throws X;

		/**
		 * The key was used with another request.
		 * @param decision the decision
		 * @return the adapter's answer
		 * @throws X if the adapter fails
		 */
		R mismatch(Mismatch decision) throws X;

		/**
		 * The store failed, and the policy fails closed.
		 * @param decision the decision
		 * @return the adapter's answer
		 * @throws X if the adapter fails
		 */
		R unavailable(Unavailable decision) throws X;

		/**
		 * The store failed, and the policy fails open: run without protection.
		 * @param decision the decision
		 * @return the adapter's answer
		 * @throws X if the adapter fails
		 */
		R unprotected(Unprotected decision) throws X;

	}

}
