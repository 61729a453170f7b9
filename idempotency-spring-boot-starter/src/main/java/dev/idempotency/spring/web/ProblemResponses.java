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

import java.io.IOException;
import java.time.Duration;

import dev.idempotency.core.IdempotencyKey;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

/**
 * The problem responses of the {@link IdempotencyFilter}: for each way a request can be
 * refused, its {@link IdempotencyProblem} and the detail that tells the client why.
 * <p>
 * Immutable and thread-safe.
 *
 * @author Idempotency contributors
 */
final class ProblemResponses {

	private final ProblemWriter writer;

	private final String keyMissingDetail;

	private final String keyInvalidDetail;

	/**
	 * Create the responses.
	 * @param typeBase the base of the problem {@code type} URIs
	 * @param keyHeader the name of the header that carries the key
	 * @param renderer writes the problems instead of the default format, or {@code null}
	 */
	ProblemResponses(String typeBase, String keyHeader, @Nullable IdempotencyProblemRenderer renderer) {
		this.writer = new ProblemWriter(typeBase, renderer);
		this.keyMissingDetail = missingHeaderDetail(keyHeader);
		this.keyInvalidDetail = invalidHeaderDetail(keyHeader);
	}

	void keyMissing(HttpServletRequest request, HttpServletResponse response) throws IOException {
		this.writer.write(request, response, IdempotencyProblem.KEY_MISSING, this.keyMissingDetail, null, null, -1);
	}

	void keyInvalid(HttpServletRequest request, HttpServletResponse response) throws IOException {
		this.writer.write(request, response, IdempotencyProblem.KEY_INVALID, this.keyInvalidDetail, null, null, -1);
	}

	/**
	 * Answer a request whose key is missing from the given source.
	 * @param request the request
	 * @param response the response
	 * @param source where the endpoint's requests carry their key
	 * @throws IOException if the response cannot be written
	 */
	void keyMissing(HttpServletRequest request, HttpServletResponse response, IdempotencyKeySource source)
			throws IOException {
		String header = source.header();
		String detail;
		if (source.isBody()) {
			detail = "This endpoint requires the request's key in its JSON body at '" + source.jsonPointer() + "'.";
		}
		else if (header != null) {
			detail = missingHeaderDetail(header);
		}
		else {
			detail = this.keyMissingDetail;
		}
		this.writer.write(request, response, IdempotencyProblem.KEY_MISSING, detail, null, null, -1);
	}

	/**
	 * Answer a request whose key in the given source is malformed.
	 * @param request the request
	 * @param response the response
	 * @param source where the endpoint's requests carry their key
	 * @throws IOException if the response cannot be written
	 */
	void keyInvalid(HttpServletRequest request, HttpServletResponse response, IdempotencyKeySource source)
			throws IOException {
		String header = source.header();
		String detail;
		if (source.isBody()) {
			detail = "The request body must be JSON whose value at '" + source.jsonPointer() + "' is a string of 1 to "
					+ IdempotencyKey.MAX_KEY_LENGTH
					+ " visible ASCII characters (0x21-0x7E) or an integer, with no duplicate member on its path.";
		}
		else if (header != null) {
			detail = invalidHeaderDetail(header);
		}
		else {
			detail = this.keyInvalidDetail;
		}
		this.writer.write(request, response, IdempotencyProblem.KEY_INVALID, detail, null, null, -1);
	}

	private static String missingHeaderDetail(String header) {
		return "This endpoint requires an '" + header + "' header.";
	}

	private static String invalidHeaderDetail(String header) {
		return "The '" + header + "' header must be sent once and hold one key of 1 to " + IdempotencyKey.MAX_KEY_LENGTH
				+ " visible ASCII characters (0x21-0x7E), as a token or a quoted string.";
	}

	void unauthenticated(HttpServletRequest request, HttpServletResponse response) throws IOException {
		this.writer.write(request, response, IdempotencyProblem.UNAUTHENTICATED,
				"Requests to this endpoint must come from an authenticated caller: an idempotency key of an"
						+ " anonymous caller would be shared with every other anonymous caller.",
				null, null, -1);
	}

	void requestTooLarge(HttpServletRequest request, HttpServletResponse response, @Nullable String key,
			int maxRequestBody) throws IOException {
		this.writer.write(request, response, IdempotencyProblem.REQUEST_TOO_LARGE, "The request body exceeds the "
				+ maxRequestBody + " bytes accepted for idempotent requests to this endpoint.", key, null, -1);
	}

	void requestInProgress(HttpServletRequest request, HttpServletResponse response, String key, Duration retryAfter)
			throws IOException {
		this.writer.write(request, response, IdempotencyProblem.REQUEST_IN_PROGRESS,
				"A request with this key is still being processed; retry after " + retryAfter.getSeconds()
						+ " second(s).",
				key, retryAfter, -1);
	}

	void keyReused(HttpServletRequest request, HttpServletResponse response, String key) throws IOException {
		this.writer.write(request, response, IdempotencyProblem.KEY_REUSED,
				"This key was already used for a different request (method, path, query, headers or body).", key, null,
				-1);
	}

	/**
	 * Return a delay as {@code Retry-After} carries it: whole seconds, rounded up, at
	 * least one.
	 * @param delay the delay
	 * @return the delay in whole seconds
	 */
	static Duration wholeSeconds(Duration delay) {
		long seconds = delay.getSeconds() + ((delay.getNano() > 0) ? 1 : 0);
		return Duration.ofSeconds(Math.max(1, seconds));
	}

	void storeUnavailable(HttpServletRequest request, HttpServletResponse response, String key, Duration retryAfter)
			throws IOException {
		this.writer.write(request, response, IdempotencyProblem.STORE_UNAVAILABLE,
				"The idempotency store is unavailable, so the request was not processed; retry after "
						+ retryAfter.getSeconds() + " second(s).",
				key, retryAfter, -1);
	}

	void commitOutcomeUnknown(HttpServletRequest request, HttpServletResponse response, String key, Duration retryAfter)
			throws IOException {
		this.writer.write(request, response, IdempotencyProblem.STORE_UNAVAILABLE,
				"The connection to the idempotency store failed while the request was being committed, so whether "
						+ "it was processed is unknown; retry after " + retryAfter.getSeconds()
						+ " second(s) with the same key: the retry is answered with the request's response if it was "
						+ "processed, or processes it.",
				key, retryAfter, -1);
	}

	void rolledBack(HttpServletRequest request, HttpServletResponse response, String key, String reason)
			throws IOException {
		this.writer.write(request, response, IdempotencyProblem.TRANSACTION_ROLLED_BACK,
				"The request's transaction was rolled back (" + reason + "), so nothing of it was processed; "
						+ "a retry with the same key runs it again.",
				key, null, -1);
	}

	void notApplied(HttpServletRequest request, HttpServletResponse response) throws IOException {
		this.writer.write(request, response, IdempotencyProblem.NOT_APPLIED,
				"This endpoint is idempotent, but the server did not recognise this request as one of its "
						+ "requests, so it refused to process it rather than process it without protection.",
				null, null, -1);
	}

	void responseUnreadable(HttpServletRequest request, HttpServletResponse response, String key) throws IOException {
		this.writer.write(request, response, IdempotencyProblem.RESPONSE_NOT_REPLAYABLE,
				"The request with this key completed, but its stored response cannot be read, "
						+ "so it cannot be replayed.",
				key, null, -1);
	}

	void responseTooLarge(HttpServletRequest request, HttpServletResponse response, String key, int originalStatus)
			throws IOException {
		this.writer.write(request, response, IdempotencyProblem.RESPONSE_NOT_REPLAYABLE,
				"The request with this key completed with status " + originalStatus
						+ ", but its response was too large to keep, so it cannot be replayed.",
				key, null, originalStatus);
	}

}
