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

import dev.idempotency.spring.http.HttpContract;
import dev.idempotency.spring.http.IdempotencyProblem;
import dev.idempotency.spring.http.Refusal;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

/**
 * Writes RFC 9457 problem details as {@code application/problem+json}.
 *
 * @author Idempotency contributors
 */
final class ProblemWriter {

	private final String typeBase;

	private final @Nullable IdempotencyProblemRenderer renderer;

	ProblemWriter(String typeBase, @Nullable IdempotencyProblemRenderer renderer) {
		this.typeBase = typeBase;
		this.renderer = renderer;
	}

	/**
	 * Write the problem of a refusal as the whole response.
	 * @param request the request, for the {@code instance} member
	 * @param response the response to write
	 * @param refusal the refusal: its problem, detail, key ({@code idempotencyKey}
	 * member), {@code Retry-After} and original status
	 * @throws IOException if writing fails
	 */
	void write(HttpServletRequest request, HttpServletResponse response, Refusal refusal) throws IOException {
		IdempotencyProblem problem = refusal.kind().problem();
		Duration retryAfter = refusal.retryAfter();
		response.setStatus(problem.status());
		if (retryAfter != null) {
			response.setHeader("Retry-After", Long.toString(retryAfter.getSeconds()));
		}
		IdempotencyProblemRenderer custom = this.renderer;
		if (custom != null) {
			custom.render(new IdempotencyProblemRenderer.Problem(problem, this.typeBase + problem.slug(),
					problem.title(), problem.status(), refusal.detail(), request.getRequestURI(), refusal.key(),
					retryAfter, (refusal.originalStatus() >= 0) ? refusal.originalStatus() : null), request, response);
			return;
		}
		byte[] body = refusal.problemDetails(this.typeBase, request.getRequestURI());
		response.setContentType(HttpContract.PROBLEM_CONTENT_TYPE);
		response.setContentLength(body.length);
		response.getOutputStream().write(body);
	}

}
