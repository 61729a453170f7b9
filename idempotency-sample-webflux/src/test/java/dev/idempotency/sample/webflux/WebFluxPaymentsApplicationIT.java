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

package dev.idempotency.sample.webflux;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import dev.idempotency.test.servers.TestServers;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's story against the WebFlux sample, as a client sees it, with its records in
 * a real Redis: a payment charged once however it is retried.
 *
 * @author Idempotency contributors
 */
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT)
@ActiveProfiles("redis")
class WebFluxPaymentsApplicationIT {

	private static final String PAYMENT = "{\"account\":\"acc-42\",\"amount\":1299,\"currency\":\"EUR\"}";

	@LocalServerPort
	int port;

	private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@DynamicPropertySource
	static void redis(DynamicPropertyRegistry registry) {
		TestServers.Redis redis = TestServers.redis();
		registry.add("spring.data.redis.host", redis::host);
		registry.add("spring.data.redis.port", redis::port);
		registry.add("idempotency.redis.key-prefix", () -> "sample-webflux-" + UUID.randomUUID() + ":");
	}

	@Test
	void aPaymentIsChargedOnceAndItsRetryGetsTheSameAnswer() throws Exception {
		long before = charges();
		String key = UUID.randomUUID().toString();
		HttpResponse<String> first = pay(key, PAYMENT);
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(first.body()).contains("\"status\":\"ACCEPTED\"");
		assertThat(first.headers().firstValue("Idempotency-Expires")).isPresent();
		HttpResponse<String> retry = pay(key, PAYMENT);
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(charges()).isEqualTo(before + 1);
	}

	@Test
	void concurrentRetriesChargeOnce() throws Exception {
		long before = charges();
		String key = UUID.randomUUID().toString();
		List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
		for (int i = 0; i < 8; i++) {
			sent.add(this.client.sendAsync(request(key, PAYMENT), BodyHandlers.ofString()));
		}
		List<Integer> statuses = new ArrayList<>();
		for (CompletableFuture<HttpResponse<String>> response : sent) {
			statuses.add(response.get().statusCode());
		}
		// one ran; the others were told it was in progress (409) or got its replay
		assertThat(statuses).containsOnly(201, 409).contains(201);
		HttpResponse<String> settled = pay(key, PAYMENT);
		for (int attempt = 0; settled.statusCode() == 409 && attempt < 20; attempt++) {
			Thread.sleep(100);
			settled = pay(key, PAYMENT);
		}
		assertThat(settled.statusCode()).isEqualTo(201);
		assertThat(charges()).isEqualTo(before + 1);
	}

	@Test
	void misuseIsAnsweredWithProblems() throws Exception {
		String key = UUID.randomUUID().toString();
		assertThat(pay(key, PAYMENT).statusCode()).isEqualTo(201);
		HttpResponse<String> reused = pay(key, PAYMENT.replace("1299", "1300"));
		assertThat(reused.statusCode()).isEqualTo(422);
		assertThat(reused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		HttpResponse<String> missing = pay(null, PAYMENT);
		assertThat(missing.statusCode()).isEqualTo(400);
		assertThat(missing.body()).contains("idempotency-key-missing");
		HttpResponse<String> rejected = pay(UUID.randomUUID().toString(), "{\"account\":\"acc-42\",\"amount\":0}");
		assertThat(rejected.statusCode()).isEqualTo(422);
		assertThat(rejected.body()).contains("a positive amount");
	}

	private HttpResponse<String> pay(@Nullable String key, String body) throws Exception {
		return this.client.send(request(key, body), BodyHandlers.ofString());
	}

	private HttpRequest request(@Nullable String key, String body) {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/payments"))
			.header("Content-Type", "application/json")
			.POST(BodyPublishers.ofString(body));
		if (key != null) {
			request.header("Idempotency-Key", key);
		}
		return request.build();
	}

	private long charges() throws Exception {
		String body = this.client
			.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/charges")).build(),
					BodyHandlers.ofString())
			.body();
		return Long.parseLong(body.replaceAll("[^0-9]", ""));
	}

}
