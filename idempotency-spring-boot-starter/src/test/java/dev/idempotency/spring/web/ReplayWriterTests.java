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
import java.time.Instant;
import java.util.List;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.engine.Decision;
import dev.idempotency.spring.http.Refusal;
import dev.idempotency.spring.http.StoredHeaders;
import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link ReplayWriter}.
 *
 * @author Idempotency contributors
 */
class ReplayWriterTests {

	private static final Instant EXPIRES_AT = Instant.parse("2026-03-01T12:00:00Z");

	private static final String EXPIRES = "Sun, 01 Mar 2026 12:00:00 GMT";

	private final ProblemWriter problems = new ProblemWriter("https://example.com/p/", null);

	private final StoredHeaders storedHeaders = new StoredHeaders(List.of(), List.of("X-Secret"));

	private final MockHttpServletRequest request = new MockHttpServletRequest("POST", "/orders");

	private final MockHttpServletResponse response = new MockHttpServletResponse();

	@Test
	void replayWritesTheStoredResponseWithReplayAndExpiryHeaders() throws Exception {
		StoredResponse stored = new StoredResponse(
				201, List.of(new HttpHeader("Content-Type", "application/json"),
						new HttpHeader("Location", "/orders/1"), new HttpHeader("X-Secret", "s")),
				"{\"id\":1}".getBytes(StandardCharsets.UTF_8));
		write(new ReplayWriter(this.storedHeaders, true), new Decision.Replay(stored, EXPIRES_AT));
		assertThat(this.response.getStatus()).isEqualTo(201);
		assertThat(this.response.getContentType()).isEqualTo("application/json");
		assertThat(this.response.getHeader("Location")).isEqualTo("/orders/1");
		assertThat(this.response.getHeader("X-Secret")).isNull();
		assertThat(this.response.getHeader(IdempotencyFilter.REPLAYED_HEADER)).isEqualTo("true");
		assertThat(this.response.getHeader(IdempotencyFilter.EXPIRES_HEADER)).isEqualTo(EXPIRES);
		assertThat(this.response.getContentLength()).isEqualTo(8);
		assertThat(this.response.getContentAsString()).isEqualTo("{\"id\":1}");
	}

	@Test
	void expiryHeaderCanBeTurnedOff() throws Exception {
		StoredResponse stored = new StoredResponse(200, List.of(), new byte[0]);
		write(new ReplayWriter(this.storedHeaders, false), new Decision.Replay(stored, EXPIRES_AT));
		assertThat(this.response.getHeader(IdempotencyFilter.REPLAYED_HEADER)).isEqualTo("true");
		assertThat(this.response.getHeader(IdempotencyFilter.EXPIRES_HEADER)).isNull();
	}

	@Test
	void responseStoredWithoutBodyIsAProblemWithTheOriginalStatus() throws Exception {
		StoredResponse stored = StoredResponse.withoutBody(201, List.of(new HttpHeader("Location", "/orders/1")));
		write(new ReplayWriter(this.storedHeaders, true), new Decision.Replay(stored, EXPIRES_AT));
		assertThat(this.response.getStatus()).isEqualTo(410);
		assertThat(this.response.getContentAsString()).contains("\"originalStatus\":201");
		assertThat(this.response.getHeader(IdempotencyFilter.REPLAYED_HEADER)).isNull();
		assertThat(this.response.getHeader(IdempotencyFilter.EXPIRES_HEADER)).isEqualTo(EXPIRES);
	}

	@Test
	void unreadableResponseIsAProblemWithoutOriginalStatus() throws Exception {
		write(new ReplayWriter(this.storedHeaders, true), new Decision.Replay(StoredResponse.unreadable(), EXPIRES_AT));
		assertThat(this.response.getStatus()).isEqualTo(410);
		assertThat(this.response.getContentAsString()).doesNotContain("originalStatus");
		assertThat(this.response.getHeader(IdempotencyFilter.EXPIRES_HEADER)).isEqualTo(EXPIRES);
	}

	// a replay as the filter answers it: the stored response, or the refusal's problem
	private void write(ReplayWriter writer, Decision.Replay replay) throws Exception {
		Refusal refusal = writer.write(replay, "k-1", this.response);
		if (refusal != null) {
			this.problems.write(this.request, this.response, refusal);
		}
	}

}
