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

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.IdempotencyStore;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.Order;
import org.springframework.test.annotation.DirtiesContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Redaction before storing ({@link StoredResponseCustomizer} beans), on a real server:
 * the first request's client gets the handler's whole response, retries get the stored,
 * redacted one; a customizer that fails leaves only the status stored.
 *
 * @author Idempotency contributors
 */
@DirtiesContext
@Import(StoredResponseCustomizerIT.Redaction.class)
class StoredResponseCustomizerIT extends AbstractWebIT {

	static final String REDACTED_BODY = "{\"redacted\":true}";

	// the header names the first customizer was shown
	static final List<String> SEEN_HEADERS = new CopyOnWriteArrayList<>();

	@Autowired
	IdempotencyStore store;

	@Test
	void firstClientGetsTheWholeResponseAndRetriesTheRedactedOne() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/payments", key, "{}");
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(text(first)).contains("\"run\":1");
		assertThat(first.headers().firstValue("X-Payment-Id")).isPresent();
		assertThat(first.headers().firstValue("Set-Cookie")).isPresent();
		HttpResponse<byte[]> retry = post("/payments", key, "{}");
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(text(retry)).isEqualTo(REDACTED_BODY);
		assertThat(retry.headers().firstValue("X-Payment-Id")).isEmpty();
		assertThat(retry.headers().firstValue("Set-Cookie")).isEmpty();
		assertThat(retry.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
		assertThat(this.counter.count("payments", key)).isOne();
		StoredResponse stored = this.store.find(IdempotencyKey.global(key)).orElseThrow().response();
		assertThat(new String(stored.bodyBytes(), StandardCharsets.UTF_8)).isEqualTo(REDACTED_BODY);
		assertThat(stored.headers()).extracting((header) -> header.name())
			.contains("Content-Type")
			.doesNotContain("X-Payment-Id", "Set-Cookie");
		// the headers never stored were left out before the customizer saw the response
		assertThat(SEEN_HEADERS).contains("Content-Type", "X-Payment-Id").doesNotContain("Set-Cookie");
	}

	@Test
	void customizersApplyInOrderAndSeeThePolicy() throws Exception {
		String key = newKey();
		post("/payments", key, "{}", "X-Second-Customizer", "on");
		StoredResponse stored = this.store.find(IdempotencyKey.global(key)).orElseThrow().response();
		assertThat(new String(stored.bodyBytes(), StandardCharsets.UTF_8)).isEqualTo("default:" + REDACTED_BODY);
	}

	@Test
	void failingCustomizerStoresOnlyTheStatus() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/payments", key, "{}", "X-Fail-Redaction", "yes");
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(text(first)).contains("\"run\":1");
		StoredResponse stored = this.store.find(IdempotencyKey.global(key)).orElseThrow().response();
		assertThat(stored.isBodyRetained()).isFalse();
		assertThat(stored.headers()).isEmpty();
		HttpResponse<byte[]> retry = post("/payments", key, "{}", "X-Fail-Redaction", "yes");
		assertThat(text(retry)).contains("response-not-replayable");
		assertThat(this.counter.count("payments", key)).isOne();
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Redaction {

		@Bean
		@Order(1)
		StoredResponseCustomizer redactPayments() {
			return (request, policy, response) -> {
				if (request.getHeader("X-Fail-Redaction") != null) {
					throw new IllegalStateException("redaction failed");
				}
				if (!request.getRequestURI().equals("/payments")) {
					return response;
				}
				SEEN_HEADERS.clear();
				response.headers().forEach((header) -> SEEN_HEADERS.add(header.name()));
				return new StoredResponse(response.status(),
						response.headers()
							.stream()
							.filter((header) -> !header.name().equalsIgnoreCase("X-Payment-Id"))
							.toList(),
						REDACTED_BODY.getBytes(StandardCharsets.UTF_8));
			};
		}

		@Bean
		@Order(2)
		StoredResponseCustomizer prefixWithPolicy() {
			return (request, policy, response) -> {
				if (request.getHeader("X-Second-Customizer") == null) {
					return response;
				}
				return new StoredResponse(response.status(), List.copyOf(response.headers()),
						(policy + ":" + new String(response.bodyBytes(), StandardCharsets.UTF_8))
							.getBytes(StandardCharsets.UTF_8));
			};
		}

	}

}
