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

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.idempotency.spring.http.IdempotencyProblem;
import dev.idempotency.spring.http.Refusal;
import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link ProblemWriter}.
 *
 * @author Idempotency contributors
 */
class ProblemWriterTests {

	private final ProblemWriter writer = new ProblemWriter("https://example.com/p/", null);

	@Test
	void writesProblemWithKeyAndRetryAfter() throws Exception {
		MockHttpServletResponse response = new MockHttpServletResponse();
		this.writer.write(new MockHttpServletRequest("POST", "/orders"), response,
				new Refusal(Refusal.Kind.IN_PROGRESS, "Wait.", "k-1", Duration.ofSeconds(3), -1));
		assertThat(response.getStatus()).isEqualTo(409);
		assertThat(response.getContentType()).isEqualTo("application/problem+json");
		assertThat(response.getHeader("Retry-After")).isEqualTo("3");
		assertThat(response.getContentAsString(StandardCharsets.UTF_8))
			.isEqualTo("{\"type\":\"https://example.com/p/request-in-progress\",\"title\":\"Request in progress\","
					+ "\"status\":409,\"detail\":\"Wait.\",\"instance\":\"/orders\",\"idempotencyKey\":\"k-1\"}");
		assertThat(response.getContentLength()).isEqualTo(response.getContentAsByteArray().length);
	}

	@Test
	void aRendererWritesTheBodyAfterTheStatusAndRetryAfterAreSet() throws Exception {
		List<IdempotencyProblemRenderer.Problem> rendered = new ArrayList<>();
		ProblemWriter custom = new ProblemWriter("https://example.com/p/", (problem, request, response) -> {
			rendered.add(problem);
			assertThat(response.getStatus()).isEqualTo(503);
			assertThat(response.getHeader("Retry-After")).isEqualTo("2");
			response.setContentType("text/plain");
			response.getWriter().write("try later");
		});
		MockHttpServletResponse response = new MockHttpServletResponse();
		custom.write(new MockHttpServletRequest("POST", "/orders"), response,
				new Refusal(Refusal.Kind.STORE_UNAVAILABLE, "Down.", "k-2", Duration.ofSeconds(2), 201));
		assertThat(response.getStatus()).isEqualTo(503);
		assertThat(response.getHeader("Retry-After")).isEqualTo("2");
		assertThat(response.getContentAsString()).isEqualTo("try later");
		assertThat(rendered).singleElement()
			.isEqualTo(new IdempotencyProblemRenderer.Problem(IdempotencyProblem.STORE_UNAVAILABLE,
					"https://example.com/p/idempotency-store-unavailable", "Idempotency store unavailable", 503,
					"Down.", "/orders", "k-2", Duration.ofSeconds(2), 201));
	}

	@Test
	void escapesStrings() {
		String json = new String(new Refusal(Refusal.Kind.KEY_REUSED, "line\nnext\u0001", "q\"\\k", null, 200)
			.problemDetails("https://example.com/p/", "/a\"b"), StandardCharsets.UTF_8);
		assertThat(json).contains("\"instance\":\"/a\\\"b\"")
			.contains("\"detail\":\"line\\nnext\\u0001\"")
			.contains("\"idempotencyKey\":\"q\\\"\\\\k\"")
			.endsWith(",\"originalStatus\":200}");
	}

	@Test
	void problemStatusesAndSlugsAreStable() {
		assertThat(IdempotencyProblem.KEY_MISSING.slug()).isEqualTo("idempotency-key-missing");
		assertThat(IdempotencyProblem.KEY_INVALID.slug()).isEqualTo("idempotency-key-invalid");
		assertThat(IdempotencyProblem.REQUEST_TOO_LARGE.status()).isEqualTo(413);
		assertThat(IdempotencyProblem.KEY_REUSED.status()).isEqualTo(422);
		assertThat(IdempotencyProblem.REQUEST_IN_PROGRESS.status()).isEqualTo(409);
		assertThat(IdempotencyProblem.STORE_UNAVAILABLE.status()).isEqualTo(503);
		assertThat(IdempotencyProblem.RESPONSE_NOT_REPLAYABLE.slug()).isEqualTo("response-not-replayable");
	}

}
