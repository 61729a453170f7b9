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

import dev.idempotency.spring.Idempotent;

/**
 * The RFC 9457 problems the {@link dev.idempotency.spring.web.IdempotencyFilter} (and its
 * {@link dev.idempotency.spring.web.EndpointResolutionInterceptor}) answers with. Each
 * has a stable {@link #slug() slug} that, appended to the configured problem type base
 * (by default
 * {@value dev.idempotency.spring.web.IdempotencyFilter#DEFAULT_PROBLEM_TYPE_BASE}), is
 * the problem's {@code type} URI.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public enum IdempotencyProblem {

	/**
	 * The endpoint requires an idempotency key and the request has none (400).
	 */
	KEY_MISSING("idempotency-key-missing", 400, "Idempotency key missing"),

	/**
	 * The idempotency key header is malformed, empty, too long, has characters outside
	 * visible ASCII, or is sent several times (400).
	 */
	KEY_INVALID("idempotency-key-invalid", 400, "Invalid idempotency key"),

	/**
	 * The request has no authenticated principal, and the filter is configured to refuse
	 * such requests rather than keep their keys in the global scope (403); see
	 * {@link AnonymousRequests#REJECT}.
	 */
	UNAUTHENTICATED("idempotency-unauthenticated", 403, "Authenticated caller required"),

	/**
	 * The request body is larger than the policy's {@code max-request-body} (413).
	 */
	REQUEST_TOO_LARGE("idempotency-request-too-large", 413, "Request body too large"),

	/**
	 * The key is used by a request with another fingerprint (422).
	 */
	KEY_REUSED("idempotency-key-reused", 422, "Idempotency key reused"),

	/**
	 * The first request with this key is still being processed (409, with
	 * {@code Retry-After}).
	 */
	REQUEST_IN_PROGRESS("request-in-progress", 409, "Request in progress"),

	/**
	 * The idempotency store cannot answer and the policy fails closed (503, with
	 * {@code Retry-After}).
	 */
	STORE_UNAVAILABLE("idempotency-store-unavailable", 503, "Idempotency store unavailable"),

	/**
	 * On a transactional endpoint, the handler answered with a success but its
	 * transaction could not commit (its own work marked it rollback-only, one of its
	 * statements failed, or the database refused the commit), so nothing of the request
	 * persisted and the key is free (500). A retry runs the handler again.
	 */
	TRANSACTION_ROLLED_BACK("transaction-rolled-back", 500, "Request rolled back"),

	/**
	 * The first request completed, but its response was larger than the policy's
	 * {@code max-response-body}, so only its status was kept (410). The original status
	 * is in the {@code originalStatus} member. Retrying does not help.
	 */
	RESPONSE_NOT_REPLAYABLE("response-not-replayable", 410, "Response not replayable"),

	/**
	 * Spring MVC chose an {@link Idempotent @Idempotent} handler for a request that the
	 * filter did not treat as idempotent, so the request was refused rather than run
	 * without protection (500). A server-side fault: see
	 * {@link dev.idempotency.spring.web.EndpointResolutionInterceptor}.
	 */
	NOT_APPLIED("idempotency-not-applied", 500, "Idempotency not applied");

	private final String slug;

	private final int status;

	private final String title;

	IdempotencyProblem(String slug, int status, String title) {
		this.slug = slug;
		this.status = status;
		this.title = title;
	}

	/**
	 * Return the last segment of the problem's {@code type} URI.
	 * @return the slug
	 */
	public String slug() {
		return this.slug;
	}

	/**
	 * Return the HTTP status of the problem.
	 * @return the status
	 */
	public int status() {
		return this.status;
	}

	/**
	 * Return the problem's title.
	 * @return the title
	 */
	public String title() {
		return this.title;
	}

}
