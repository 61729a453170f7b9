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
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

/**
 * Writes RFC 9457 problem details as {@code application/problem+json}.
 *
 * @author Idempotency contributors
 */
final class ProblemWriter {

	static final String CONTENT_TYPE = "application/problem+json";

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
		byte[] body = body(request.getRequestURI(), refusal);
		response.setContentType(CONTENT_TYPE);
		response.setContentLength(body.length);
		response.getOutputStream().write(body);
	}

	byte[] body(String instance, Refusal refusal) {
		IdempotencyProblem problem = refusal.kind().problem();
		StringBuilder json = new StringBuilder(256);
		json.append("{\"type\":");
		appendString(json, this.typeBase + problem.slug());
		json.append(",\"title\":");
		appendString(json, problem.title());
		json.append(",\"status\":").append(problem.status());
		json.append(",\"detail\":");
		appendString(json, refusal.detail());
		json.append(",\"instance\":");
		appendString(json, instance);
		String key = refusal.key();
		if (key != null) {
			json.append(",\"idempotencyKey\":");
			appendString(json, key);
		}
		if (refusal.originalStatus() >= 0) {
			json.append(",\"originalStatus\":").append(refusal.originalStatus());
		}
		json.append('}');
		return json.toString().getBytes(StandardCharsets.UTF_8);
	}

	static void appendString(StringBuilder json, String value) {
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

}
