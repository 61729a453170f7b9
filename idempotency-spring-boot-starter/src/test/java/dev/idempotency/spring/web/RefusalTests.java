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
import java.util.Arrays;
import java.util.List;

import dev.idempotency.spring.IdempotencyKeySource;
import dev.idempotency.spring.http.IdempotencyProblem;
import dev.idempotency.spring.http.Refusal;
import dev.idempotency.spring.observation.IdempotencyOutcome;
import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link Refusal}: the problem each refusal is answered with.
 *
 * @author Idempotency contributors
 */
class RefusalTests {

	private final ProblemWriter problems = new ProblemWriter("https://example.com/p/", null);

	private final MockHttpServletRequest request = new MockHttpServletRequest("POST", "/orders");

	private final MockHttpServletResponse response = new MockHttpServletResponse();

	@Test
	void keyMissingNamesTheHeader() throws Exception {
		this.problems.write(this.request, this.response,
				Refusal.keyMissing(IdempotencyKeySource.keyHeader(), "Request-Key"));
		assertProblem(400, "idempotency-key-missing", "Idempotency key missing",
				"This endpoint requires an 'Request-Key' header.");
		assertThat(body()).doesNotContain("idempotencyKey");
	}

	@Test
	void keyInvalidNamesTheHeaderAndTheRules() throws Exception {
		this.problems.write(this.request, this.response,
				Refusal.keyInvalid(IdempotencyKeySource.keyHeader(), "Request-Key"));
		assertProblem(400, "idempotency-key-invalid", "Invalid idempotency key",
				"The 'Request-Key' header must be sent once and hold one key of 1 to 255 visible ASCII characters "
						+ "(0x21-0x7E), as a token or a quoted string.");
		assertThat(body()).doesNotContain("idempotencyKey");
	}

	@Test
	void requestTooLargeNamesTheLimit() throws Exception {
		this.problems.write(this.request, this.response, Refusal.requestTooLarge("k-1", 1024));
		assertProblem(413, "idempotency-request-too-large", "Request body too large",
				"The request body exceeds the 1024 bytes accepted for idempotent requests to this endpoint.");
		assertThat(body()).endsWith(",\"idempotencyKey\":\"k-1\"}");
	}

	@Test
	void requestInProgressSaysWhenToRetry() throws Exception {
		this.problems.write(this.request, this.response, Refusal.inProgress("k-1", Duration.ofSeconds(2)));
		assertProblem(409, "request-in-progress", "Request in progress",
				"A request with this key is still being processed; retry after 2 second(s).");
		assertThat(this.response.getHeader("Retry-After")).isEqualTo("2");
	}

	@Test
	void keyReusedNamesWhatIsCompared() throws Exception {
		this.problems.write(this.request, this.response, Refusal.keyReused("k-1"));
		assertProblem(422, "idempotency-key-reused", "Idempotency key reused",
				"This key was already used for a different request (method, path, query, headers or body).");
		assertThat(this.response.getHeader("Retry-After")).isNull();
	}

	@Test
	void storeUnavailableSaysWhenToRetry() throws Exception {
		this.problems.write(this.request, this.response, Refusal.storeUnavailable("k-1", Duration.ofSeconds(5)));
		assertProblem(503, "idempotency-store-unavailable", "Idempotency store unavailable",
				"The idempotency store is unavailable, so the request was not processed; retry after 5 second(s).");
		assertThat(this.response.getHeader("Retry-After")).isEqualTo("5");
	}

	@Test
	void commitOutcomeUnknownSaysThatTheRetryIsAnsweredEitherWay() throws Exception {
		this.problems.write(this.request, this.response, Refusal.commitOutcomeUnknown("k-1", Duration.ofSeconds(5)));
		assertProblem(503, "idempotency-store-unavailable", "Idempotency store unavailable",
				"The connection to the idempotency store failed while the request was being committed, so whether "
						+ "it was processed is unknown; retry after 5 second(s) with the same key: the retry is "
						+ "answered with the request's response if it was processed, or processes it.");
		assertThat(this.response.getHeader("Retry-After")).isEqualTo("5");
	}

	@Test
	void unreadableResponseHasNoOriginalStatus() throws Exception {
		this.problems.write(this.request, this.response, Refusal.responseUnreadable("k-1"));
		assertProblem(410, "response-not-replayable", "Response not replayable",
				"The request with this key completed, but its stored response cannot be read, so it cannot be "
						+ "replayed.");
		assertThat(body()).doesNotContain("originalStatus");
	}

	@Test
	void responseTooLargeHasTheOriginalStatus() throws Exception {
		this.problems.write(this.request, this.response, Refusal.responseTooLarge("k-1", 201));
		assertProblem(410, "response-not-replayable", "Response not replayable",
				"The request with this key completed with status 201, but its response was too large to keep, "
						+ "so it cannot be replayed.");
		assertThat(body()).endsWith(",\"idempotencyKey\":\"k-1\",\"originalStatus\":201}");
	}

	@Test
	void notAppliedSaysTheRequestWasNotProcessed() throws Exception {
		this.problems.write(this.request, this.response, Refusal.notApplied());
		assertProblem(500, "idempotency-not-applied", "Idempotency not applied",
				"This endpoint is idempotent, but the server did not recognise this request as one of its requests, "
						+ "so it refused to process it rather than process it without protection.");
		assertThat(body()).doesNotContain("idempotencyKey");
		assertThat(this.response.getHeader("Retry-After")).isNull();
	}

	@Test
	void everyProblemIsTheAnswerToSomeRefusal() {
		assertThat(Arrays.stream(Refusal.Kind.values()).map(Refusal.Kind::problem))
			.containsAll(List.of(IdempotencyProblem.values()));
	}

	@Test
	void refusalsBeforeTheHandlerRecordTheirOwnOutcome() {
		assertThat(Refusal.Kind.KEY_MISSING.outcome()).isEqualTo(IdempotencyOutcome.MISSING_KEY);
		assertThat(Refusal.Kind.KEY_REUSED.outcome()).isEqualTo(IdempotencyOutcome.MISMATCH);
		assertThat(Refusal.Kind.IN_PROGRESS.outcome()).isEqualTo(IdempotencyOutcome.IN_PROGRESS);
		// the handler ran: the observation keeps the execution's outcome
		assertThat(Refusal.Kind.ROLLED_BACK.outcome()).isEqualTo(IdempotencyOutcome.EXECUTED);
		assertThat(Refusal.Kind.NOT_APPLIED.outcome()).isNull();
	}

	private void assertProblem(int status, String slug, String title, String detail) throws Exception {
		assertThat(this.response.getStatus()).isEqualTo(status);
		assertThat(this.response.getContentType()).isEqualTo("application/problem+json");
		assertThat(body()).startsWith("{\"type\":\"https://example.com/p/" + slug + "\",\"title\":\"" + title
				+ "\",\"status\":" + status + ",\"detail\":\"" + detail + "\",\"instance\":\"/orders\"");
	}

	private String body() throws Exception {
		return this.response.getContentAsString(StandardCharsets.UTF_8);
	}

}
