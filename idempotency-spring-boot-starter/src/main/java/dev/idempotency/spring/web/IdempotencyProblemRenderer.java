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

import dev.idempotency.spring.http.IdempotencyProblem;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

/**
 * Writes the response of a request that the filter answers with a problem (a missing or
 * invalid key, a reused key, a request in progress, an unavailable store, ...), for
 * applications whose errors have a format of their own: an error envelope, problem
 * {@code type} URIs of their own, translated messages. By default the filter writes RFC
 * 9457 problem details ({@code application/problem+json}).
 * <p>
 * The status and the {@code Retry-After} header are part of the contract that clients
 * rely on: the filter sets them on the response before it calls the renderer, which
 * writes the body (and may add headers). Declare a bean of this type to replace the
 * default; it is called on request threads, concurrently, so it must be thread-safe.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 * @see IdempotencyFilter#setProblemRenderer(IdempotencyProblemRenderer)
 */
@FunctionalInterface
public interface IdempotencyProblemRenderer {

	/**
	 * Write the body of a problem response, whose status (and {@code Retry-After}, if
	 * any) is already set.
	 * @param problem the problem, with the members the default format would write
	 * @param request the request
	 * @param response the response, not committed yet
	 * @throws IOException if writing fails
	 */
	void render(Problem problem, HttpServletRequest request, HttpServletResponse response) throws IOException;

	/**
	 * A problem the filter answers with.
	 *
	 * @param kind which problem it is
	 * @param type the problem's {@code type} URI ({@code idempotency.problem-type-base}
	 * followed by its slug)
	 * @param title the problem's short summary
	 * @param status the HTTP status, already set on the response
	 * @param detail what happened to this request, in English
	 * @param instance the request's URI
	 * @param idempotencyKey the request's key, for the problems that concern a known key,
	 * else {@code null}
	 * @param retryAfter when to retry, already sent as {@code Retry-After}, or
	 * {@code null}
	 * @param originalStatus the status of the first request whose response cannot be
	 * replayed, else {@code null}
	 */
	record Problem(IdempotencyProblem kind, String type, String title, int status, String detail, String instance,
			@Nullable String idempotencyKey, @Nullable Duration retryAfter, @Nullable Integer originalStatus) {

	}

}
