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

package dev.idempotency.spring.web;

import java.time.Duration;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.spring.IdempotencyKeySource;
import dev.idempotency.spring.web.observation.IdempotencyOutcome;
import org.jspecify.annotations.Nullable;

/**
 * One way a request to an idempotent endpoint is answered with a problem instead of its
 * handler's response: what the client is told, as a value that the request's flow returns
 * and {@link ProblemWriter} writes. Its {@link Kind} is the one table from a refusal to
 * the problem the client gets and the outcome the observation records.
 *
 * @param kind the kind of refusal
 * @param detail the human-readable detail of the problem
 * @param key the request's key, echoed in the problem, or {@code null}
 * @param retryAfter the {@code Retry-After} to send, or {@code null}
 * @param originalStatus the status of the response that cannot be replayed, or {@code -1}
 * @author Idempotency contributors
 */
record Refusal(Kind kind, String detail, @Nullable String key, @Nullable Duration retryAfter, int originalStatus) {

	static Refusal keyMissing(IdempotencyKeySource source, String header) {
		String detail = source.isBody()
				? "This endpoint requires the request's key in its JSON body at '" + source.jsonPointer() + "'."
				: "This endpoint requires an '" + header + "' header.";
		return new Refusal(Kind.KEY_MISSING, detail, null, null, -1);
	}

	static Refusal keyInvalid(IdempotencyKeySource source, String header) {
		String detail = source.isBody()
				? "The request body must be JSON whose value at '" + source.jsonPointer() + "' is a string of 1 to "
						+ IdempotencyKey.MAX_KEY_LENGTH
						+ " visible ASCII characters (0x21-0x7E) or an integer, with no duplicate member on its path."
				: "The '" + header + "' header must be sent once and hold one key of 1 to "
						+ IdempotencyKey.MAX_KEY_LENGTH
						+ " visible ASCII characters (0x21-0x7E), as a token or a quoted string.";
		return new Refusal(Kind.KEY_INVALID, detail, null, null, -1);
	}

	static Refusal unauthenticated() {
		return new Refusal(Kind.UNAUTHENTICATED,
				"Requests to this endpoint must come from an authenticated caller: an idempotency key of an"
						+ " anonymous caller would be shared with every other anonymous caller.",
				null, null, -1);
	}

	static Refusal requestTooLarge(@Nullable String key, int maxRequestBody) {
		return new Refusal(Kind.REQUEST_TOO_LARGE, "The request body exceeds the " + maxRequestBody
				+ " bytes accepted for idempotent requests to this endpoint.", key, null, -1);
	}

	static Refusal inProgress(String key, Duration retryAfter) {
		return new Refusal(Kind.IN_PROGRESS, "A request with this key is still being processed; retry after "
				+ retryAfter.getSeconds() + " second(s).", key, retryAfter, -1);
	}

	static Refusal keyReused(String key) {
		return new Refusal(Kind.KEY_REUSED,
				"This key was already used for a different request (method, path, query, headers or body).", key, null,
				-1);
	}

	static Refusal storeUnavailable(String key, Duration retryAfter) {
		return new Refusal(Kind.STORE_UNAVAILABLE, "The idempotency store is unavailable, so the request was not"
				+ " processed; retry after " + retryAfter.getSeconds() + " second(s).", key, retryAfter, -1);
	}

	static Refusal commitOutcomeUnknown(String key, Duration retryAfter) {
		return new Refusal(Kind.COMMIT_OUTCOME_UNKNOWN,
				"The connection to the idempotency store failed while the request was being committed, so whether "
						+ "it was processed is unknown; retry after " + retryAfter.getSeconds()
						+ " second(s) with the same key: the retry is answered with the request's response if it was "
						+ "processed, or processes it.",
				key, retryAfter, -1);
	}

	static Refusal rolledBack(String key, String reason) {
		return new Refusal(Kind.ROLLED_BACK, "The request's transaction was rolled back (" + reason
				+ "), so nothing of it was processed; a retry with the same key runs it again.", key, null, -1);
	}

	static Refusal notApplied() {
		return new Refusal(Kind.NOT_APPLIED,
				"This endpoint is idempotent, but the server did not recognise this request as one of its "
						+ "requests, so it refused to process it rather than process it without protection.",
				null, null, -1);
	}

	static Refusal responseUnreadable(String key) {
		return new Refusal(Kind.RESPONSE_NOT_REPLAYABLE, "The request with this key completed, but its stored"
				+ " response cannot be read, so it cannot be replayed.", key, null, -1);
	}

	static Refusal responseTooLarge(String key, int originalStatus) {
		return new Refusal(Kind.RESPONSE_NOT_REPLAYABLE,
				"The request with this key completed with status " + originalStatus
						+ ", but its response was too large to keep, so it cannot be replayed.",
				key, null, originalStatus);
	}

	/**
	 * Return a delay in whole seconds, rounded up, at least one: the form of
	 * {@code Retry-After}.
	 * @param delay the delay
	 * @return the delay in whole seconds
	 */
	static Duration wholeSeconds(Duration delay) {
		long seconds = delay.getSeconds() + ((delay.getNano() > 0) ? 1 : 0);
		return Duration.ofSeconds(Math.max(1, seconds));
	}

	/**
	 * The kinds of refusal: for each, the problem the client gets and the outcome the
	 * request's observation records.
	 */
	enum Kind {

		KEY_MISSING(IdempotencyProblem.KEY_MISSING, IdempotencyOutcome.MISSING_KEY),

		KEY_INVALID(IdempotencyProblem.KEY_INVALID, IdempotencyOutcome.INVALID_KEY),

		UNAUTHENTICATED(IdempotencyProblem.UNAUTHENTICATED, IdempotencyOutcome.UNAUTHENTICATED),

		REQUEST_TOO_LARGE(IdempotencyProblem.REQUEST_TOO_LARGE, IdempotencyOutcome.TOO_LARGE),

		IN_PROGRESS(IdempotencyProblem.REQUEST_IN_PROGRESS, IdempotencyOutcome.IN_PROGRESS),

		KEY_REUSED(IdempotencyProblem.KEY_REUSED, IdempotencyOutcome.MISMATCH),

		STORE_UNAVAILABLE(IdempotencyProblem.STORE_UNAVAILABLE, IdempotencyOutcome.STORE_UNAVAILABLE),

		// a completed request whose stored response cannot be sent: still a replay
		RESPONSE_NOT_REPLAYABLE(IdempotencyProblem.RESPONSE_NOT_REPLAYABLE, IdempotencyOutcome.REPLAYED),

		// the handler ran: the observation keeps EXECUTED, with the completion it
		// overrode
		ROLLED_BACK(IdempotencyProblem.TRANSACTION_ROLLED_BACK, IdempotencyOutcome.EXECUTED),

		COMMIT_OUTCOME_UNKNOWN(IdempotencyProblem.STORE_UNAVAILABLE, IdempotencyOutcome.EXECUTED),

		// refused after the filter, which did not recognise the request: not observed
		NOT_APPLIED(IdempotencyProblem.NOT_APPLIED, null);

		private final IdempotencyProblem problem;

		private final @Nullable IdempotencyOutcome outcome;

		Kind(IdempotencyProblem problem, @Nullable IdempotencyOutcome outcome) {
			this.problem = problem;
			this.outcome = outcome;
		}

		IdempotencyProblem problem() {
			return this.problem;
		}

		@Nullable IdempotencyOutcome outcome() {
			return this.outcome;
		}

	}

}
