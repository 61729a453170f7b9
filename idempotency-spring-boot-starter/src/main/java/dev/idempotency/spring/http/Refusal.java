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

package dev.idempotency.spring.http;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.spring.IdempotencyKeySource;
import dev.idempotency.spring.observation.IdempotencyOutcome;
import org.jspecify.annotations.Nullable;

/**
 * One way a request to an idempotent endpoint is answered with a problem instead of its
 * handler's response: what the client is told, as a value that the request's flow returns
 * and the adapter writes. Its {@link Kind} is the one table from a refusal to the problem
 * the client gets and the outcome the observation records.
 *
 * @param kind the kind of refusal
 * @param detail the human-readable detail of the problem
 * @param key the request's key, echoed in the problem, or {@code null}
 * @param retryAfter the {@code Retry-After} to send, or {@code null}
 * @param originalStatus the status of the response that cannot be replayed, or {@code -1}
 * @author Idempotency contributors
 */
public record Refusal(Kind kind, String detail, @Nullable String key, @Nullable Duration retryAfter,
		int originalStatus) {

	/**
	 * The key is missing.
	 * @param source the key source of the endpoint's policy
	 * @param header the name of the key header
	 * @return the refusal
	 */
	public static Refusal keyMissing(IdempotencyKeySource source, String header) {
		String detail = source.isBody()
				? "This endpoint requires the request's key in its JSON body at '" + source.jsonPointer() + "'."
				: "This endpoint requires an '" + header + "' header.";
		return new Refusal(Kind.KEY_MISSING, detail, null, null, -1);
	}

	/**
	 * The key is not a valid key.
	 * @param source the key source of the endpoint's policy
	 * @param header the name of the key header
	 * @return the refusal
	 */
	public static Refusal keyInvalid(IdempotencyKeySource source, String header) {
		String detail = source.isBody()
				? "The request body must be JSON whose value at '" + source.jsonPointer() + "' is a string of 1 to "
						+ IdempotencyKey.MAX_KEY_LENGTH
						+ " visible ASCII characters (0x21-0x7E) or an integer, with no duplicate member on its path."
				: "The '" + header + "' header must be sent once and hold one key of 1 to "
						+ IdempotencyKey.MAX_KEY_LENGTH
						+ " visible ASCII characters (0x21-0x7E), as a token or a quoted string.";
		return new Refusal(Kind.KEY_INVALID, detail, null, null, -1);
	}

	/**
	 * An anonymous caller, on an endpoint that refuses them.
	 * @return the refusal
	 */
	public static Refusal unauthenticated() {
		return new Refusal(Kind.UNAUTHENTICATED,
				"Requests to this endpoint must come from an authenticated caller: an idempotency key of an"
						+ " anonymous caller would be shared with every other anonymous caller.",
				null, null, -1);
	}

	/**
	 * The request body is over its limit.
	 * @param key the request's key, or {@code null} if it is not known yet
	 * @param maxRequestBody the limit, in bytes
	 * @return the refusal
	 */
	public static Refusal requestTooLarge(@Nullable String key, int maxRequestBody) {
		return new Refusal(Kind.REQUEST_TOO_LARGE, "The request body exceeds the " + maxRequestBody
				+ " bytes accepted for idempotent requests to this endpoint.", key, null, -1);
	}

	/**
	 * A request with the same key is still being processed.
	 * @param key the request's key
	 * @param retryAfter when to retry
	 * @return the refusal
	 */
	public static Refusal inProgress(String key, Duration retryAfter) {
		return new Refusal(Kind.IN_PROGRESS, "A request with this key is still being processed; retry after "
				+ retryAfter.getSeconds() + " second(s).", key, retryAfter, -1);
	}

	/**
	 * The key was used for a different request.
	 * @param key the request's key
	 * @return the refusal
	 */
	public static Refusal keyReused(String key) {
		return new Refusal(Kind.KEY_REUSED,
				"This key was already used for a different request (method, path, query, headers or body).", key, null,
				-1);
	}

	/**
	 * No store can guarantee that the request runs once.
	 * @param key the request's key
	 * @param retryAfter when to retry
	 * @return the refusal
	 */
	public static Refusal storeUnavailable(String key, Duration retryAfter) {
		return new Refusal(Kind.STORE_UNAVAILABLE, "The idempotency store is unavailable, so the request was not"
				+ " processed; retry after " + retryAfter.getSeconds() + " second(s).", key, retryAfter, -1);
	}

	/**
	 * The connection failed while the request's transaction was committed.
	 * @param key the request's key
	 * @param retryAfter when to retry
	 * @return the refusal
	 */
	public static Refusal commitOutcomeUnknown(String key, Duration retryAfter) {
		return new Refusal(Kind.COMMIT_OUTCOME_UNKNOWN,
				"The connection to the idempotency store failed while the request was being committed, so whether "
						+ "it was processed is unknown; retry after " + retryAfter.getSeconds()
						+ " second(s) with the same key: the retry is answered with the request's response if it was "
						+ "processed, or processes it.",
				key, retryAfter, -1);
	}

	/**
	 * The request's transaction was rolled back.
	 * @param key the request's key
	 * @param reason why, in a few words
	 * @return the refusal
	 */
	public static Refusal rolledBack(String key, String reason) {
		return new Refusal(Kind.ROLLED_BACK, "The request's transaction was rolled back (" + reason
				+ "), so nothing of it was processed; a retry with the same key runs it again.", key, null, -1);
	}

	/**
	 * An idempotent handler was reached by a request that the adapter did not recognise.
	 * @return the refusal
	 */
	public static Refusal notApplied() {
		return new Refusal(Kind.NOT_APPLIED,
				"This endpoint is idempotent, but the server did not recognise this request as one of its "
						+ "requests, so it refused to process it rather than process it without protection.",
				null, null, -1);
	}

	/**
	 * The stored response of a completed request cannot be read.
	 * @param key the request's key
	 * @return the refusal
	 */
	public static Refusal responseUnreadable(String key) {
		return new Refusal(Kind.RESPONSE_NOT_REPLAYABLE, "The request with this key completed, but its stored"
				+ " response cannot be read, so it cannot be replayed.", key, null, -1);
	}

	/**
	 * The response of a completed request was too large to keep.
	 * @param key the request's key
	 * @param originalStatus the status of that response
	 * @return the refusal
	 */
	public static Refusal responseTooLarge(String key, int originalStatus) {
		return new Refusal(Kind.RESPONSE_NOT_REPLAYABLE,
				"The request with this key completed with status " + originalStatus
						+ ", but its response was too large to keep, so it cannot be replayed.",
				key, null, originalStatus);
	}

	/**
	 * Return this refusal as RFC 9457 problem details, the JSON body of an
	 * {@code application/problem+json} response.
	 * @param typeBase the base of the problem {@code type} URIs, to which the problem's
	 * slug is appended
	 * @param instance the request's URI, the {@code instance} member
	 * @return the body, in UTF-8
	 */
	public byte[] problemDetails(String typeBase, String instance) {
		IdempotencyProblem problem = this.kind.problem();
		StringBuilder json = new StringBuilder(256);
		json.append("{\"type\":");
		appendString(json, typeBase + problem.slug());
		json.append(",\"title\":");
		appendString(json, problem.title());
		json.append(",\"status\":").append(problem.status());
		json.append(",\"detail\":");
		appendString(json, this.detail);
		json.append(",\"instance\":");
		appendString(json, instance);
		String key = this.key;
		if (key != null) {
			json.append(",\"idempotencyKey\":");
			appendString(json, key);
		}
		if (this.originalStatus >= 0) {
			json.append(",\"originalStatus\":").append(this.originalStatus);
		}
		json.append('}');
		return json.toString().getBytes(StandardCharsets.UTF_8);
	}

	private static void appendString(StringBuilder json, String value) {
		json.append('"');
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			switch (c) {
				case '"' -> json.append("\\\"");
				case '\\' -> json.append("\\\\");
				case '\n' -> json.append("\\n");
				case '\r' -> json.append("\\r");
				case '\t' -> json.append("\\t");
				case '\b' -> json.append("\\b");
				case '\f' -> json.append("\\f");
				default -> {
					if (c < 0x20) {
						json.append(String.format("\\u%04x", (int) c));
					}
					else {
						json.append(c);
					}
				}
			}
		}
		json.append('"');
	}

	/**
	 * Return a delay in whole seconds, rounded up, at least one: the form of
	 * {@code Retry-After}.
	 * @param delay the delay
	 * @return the delay in whole seconds
	 */
	public static Duration wholeSeconds(Duration delay) {
		long seconds = delay.getSeconds() + ((delay.getNano() > 0) ? 1 : 0);
		return Duration.ofSeconds(Math.max(1, seconds));
	}

	/**
	 * The kinds of refusal: for each, the problem the client gets and the outcome the
	 * request's observation records.
	 */
	public enum Kind {

		/**
		 * No key was sent.
		 */
		KEY_MISSING(IdempotencyProblem.KEY_MISSING, IdempotencyOutcome.MISSING_KEY),

		/**
		 * The key is not a valid key.
		 */
		KEY_INVALID(IdempotencyProblem.KEY_INVALID, IdempotencyOutcome.INVALID_KEY),

		/**
		 * An anonymous caller, refused.
		 */
		UNAUTHENTICATED(IdempotencyProblem.UNAUTHENTICATED, IdempotencyOutcome.UNAUTHENTICATED),

		/**
		 * The request body is over its limit.
		 */
		REQUEST_TOO_LARGE(IdempotencyProblem.REQUEST_TOO_LARGE, IdempotencyOutcome.TOO_LARGE),

		/**
		 * A request with the key is still being processed.
		 */
		IN_PROGRESS(IdempotencyProblem.REQUEST_IN_PROGRESS, IdempotencyOutcome.IN_PROGRESS),

		/**
		 * The key was used for a different request.
		 */
		KEY_REUSED(IdempotencyProblem.KEY_REUSED, IdempotencyOutcome.MISMATCH),

		/**
		 * No store can guarantee that the request runs once.
		 */
		STORE_UNAVAILABLE(IdempotencyProblem.STORE_UNAVAILABLE, IdempotencyOutcome.STORE_UNAVAILABLE),

		/**
		 * A completed request whose stored response cannot be sent: still a replay.
		 */
		RESPONSE_NOT_REPLAYABLE(IdempotencyProblem.RESPONSE_NOT_REPLAYABLE, IdempotencyOutcome.REPLAYED),

		/**
		 * The request's transaction was rolled back: the handler ran, so the observation
		 * keeps {@code EXECUTED}, with the completion it overrode.
		 */
		ROLLED_BACK(IdempotencyProblem.TRANSACTION_ROLLED_BACK, IdempotencyOutcome.EXECUTED),

		/**
		 * The commit of the request's transaction may or may not have happened.
		 */
		COMMIT_OUTCOME_UNKNOWN(IdempotencyProblem.STORE_UNAVAILABLE, IdempotencyOutcome.EXECUTED),

		/**
		 * Refused after the adapter, which did not recognise the request: not observed.
		 */
		NOT_APPLIED(IdempotencyProblem.NOT_APPLIED, null);

		private final IdempotencyProblem problem;

		private final @Nullable IdempotencyOutcome outcome;

		Kind(IdempotencyProblem problem, @Nullable IdempotencyOutcome outcome) {
			this.problem = problem;
			this.outcome = outcome;
		}

		/**
		 * Return the problem the client gets.
		 * @return the problem
		 */
		public IdempotencyProblem problem() {
			return this.problem;
		}

		/**
		 * Return the outcome the request's observation records.
		 * @return the outcome, or {@code null} for a request that is not observed
		 */
		public @Nullable IdempotencyOutcome outcome() {
			return this.outcome;
		}

	}

}
