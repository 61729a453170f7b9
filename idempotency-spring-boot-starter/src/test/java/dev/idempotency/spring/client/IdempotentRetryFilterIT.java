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

package dev.idempotency.spring.client;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClientRequest;

import org.springframework.boot.Banner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.test.context.TestPropertySource;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientRequestException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link IdempotentRetryFilter} against the library's own server side: the applications
 * of the HTTP contract tests, on Tomcat (the servlet filter) and on Reactor Netty (the
 * WebFlux filter), each with its in-memory store. A call whose first attempt is lost runs
 * the handler once: its retry, with the same key, gets the stored response.
 *
 * @author Idempotency contributors
 */
class IdempotentRetryFilterIT {

	private static final Duration TIMEOUT = Duration.ofSeconds(60);

	private static final Map<Stack, ConfigurableApplicationContext> applications = new EnumMap<>(Stack.class);

	@BeforeAll
	static void startApplications() throws ClassNotFoundException {
		// the contract's applications and settings are package-private to its own
		// package; the settings choose the in-memory store and configure the policies
		// that the applications' handlers name
		TestPropertySource contract = Class.forName("dev.idempotency.spring.web.AbstractWebIT")
			.getAnnotation(TestPropertySource.class);
		List<String> arguments = new ArrayList<>();
		arguments.add("--server.port=0");
		for (String property : contract.properties()) {
			arguments.add("--" + property);
		}
		for (Stack stack : Stack.values()) {
			SpringApplication application = new SpringApplication(Class.forName(stack.application));
			application.setWebApplicationType(stack.type);
			application.setBannerMode(Banner.Mode.OFF);
			applications.put(stack, application.run(arguments.toArray(String[]::new)));
		}
	}

	@AfterAll
	static void stopApplications() {
		applications.values().forEach(ConfigurableApplicationContext::close);
		applications.clear();
	}

	@ParameterizedTest
	@EnumSource(Stack.class)
	void aLostResponseIsRetriedWithTheSameKeyAndReplayed(Stack stack) {
		List<String> keys = new CopyOnWriteArrayList<>();
		AtomicReference<String> lost = new AtomicReference<>();
		AtomicInteger attempts = new AtomicInteger();
		// inside the retry filter, once per attempt: the first response is read, then
		// lost on its way to the caller, as when a connection breaks after the server
		// has answered
		ExchangeFilterFunction lossyNetwork = (request, next) -> {
			keys.add(String.valueOf(request.headers().getFirst(IdempotentRetryFilter.DEFAULT_KEY_HEADER)));
			if (attempts.incrementAndGet() > 1) {
				return next.exchange(request);
			}
			return next.exchange(request).flatMap((response) -> response.bodyToMono(String.class)).flatMap((body) -> {
				lost.set(body);
				return Mono.error(new WebClientRequestException(new IOException("Connection reset"), request.method(),
						request.url(), request.headers()));
			});
		};
		WebClient client = client(stack, lossyNetwork);
		ResponseEntity<String> response = client.post()
			.uri("/payments")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"amount\":\"10.00\"}")
			.retrieve()
			.toEntity(String.class)
			.block(TIMEOUT);
		assertThat(response).isNotNull();
		assertThat(response.getStatusCode().value()).isEqualTo(201);
		assertThat(response.getHeaders().getFirst(IdempotentRetryFilter.REPLAYED_HEADER)).isEqualTo("true");
		// the same payment (its id is random per run of the handler), run once
		assertThat(lost.get()).contains("\"run\":1,");
		assertThat(response.getBody()).isEqualTo(lost.get());
		assertThat(attempts).hasValue(2);
		assertThat(keys).hasSize(2).doesNotContain("null").containsOnly(keys.get(0));
	}

	@ParameterizedTest
	@EnumSource(Stack.class)
	void aTimedOutAttemptIsRetriedThroughRequestInProgressToTheStoredResponse(Stack stack) {
		List<String> outcomes = new CopyOnWriteArrayList<>();
		List<String> keys = new CopyOnWriteArrayList<>();
		AtomicInteger attempts = new AtomicInteger();
		// the first attempt gives up after a second, long before the handler's four
		ExchangeFilterFunction impatientFirstAttempt = (request, next) -> {
			keys.add(String.valueOf(request.headers().getFirst(IdempotentRetryFilter.DEFAULT_KEY_HEADER)));
			ClientRequest attempt = (attempts.incrementAndGet() > 1) ? request : ClientRequest.from(request)
				.httpRequest(
						(http) -> ((HttpClientRequest) http.getNativeRequest()).responseTimeout(Duration.ofSeconds(1)))
				.build();
			return next.exchange(attempt)
				.doOnNext((response) -> outcomes.add(Integer.toString(response.statusCode().value())))
				.doOnError((ex) -> outcomes.add("failed"));
		};
		IdempotentRetryFilter filter = new IdempotentRetryFilter();
		filter.setMaxAttempts(20);
		WebClient client = client(stack, filter, impatientFirstAttempt);
		ResponseEntity<String> response = client.post()
			.uri("/slow?millis=4000")
			.bodyValue("a")
			.retrieve()
			.toEntity(String.class)
			.block(TIMEOUT);
		assertThat(response).isNotNull();
		assertThat(response.getStatusCode().value()).isEqualTo(200);
		assertThat(response.getHeaders().getFirst(IdempotentRetryFilter.REPLAYED_HEADER)).isEqualTo("true");
		assertThat(response.getBody()).startsWith("slow 1 ");
		// a time-out, a 409 (or more) while the handler runs, then its stored answer
		assertThat(outcomes.get(0)).isEqualTo("failed");
		assertThat(outcomes.subList(1, outcomes.size() - 1))
			.allSatisfy((outcome) -> assertThat(outcome).isIn("409", "failed"));
		assertThat(outcomes.get(outcomes.size() - 1)).isEqualTo("200");
		assertThat(keys).hasSize(outcomes.size()).doesNotContain("null").containsOnly(keys.get(0));
		// the key's stored answer is the one run of the handler
		ResponseEntity<String> again = client(stack, (request, next) -> next.exchange(request)).post()
			.uri("/slow?millis=4000")
			.header(IdempotentRetryFilter.DEFAULT_KEY_HEADER, keys.get(0))
			.bodyValue("a")
			.retrieve()
			.toEntity(String.class)
			.block(TIMEOUT);
		assertThat(again).isNotNull();
		assertThat(again.getBody()).isEqualTo(response.getBody());
	}

	private static WebClient client(Stack stack, ExchangeFilterFunction perAttempt) {
		return client(stack, new IdempotentRetryFilter(), perAttempt);
	}

	private static WebClient client(Stack stack, IdempotentRetryFilter filter, ExchangeFilterFunction perAttempt) {
		int port = applications.get(stack).getEnvironment().getRequiredProperty("local.server.port", Integer.class);
		return WebClient.builder()
			.baseUrl("http://127.0.0.1:" + port)
			.clientConnector(new ReactorClientHttpConnector())
			.filter(filter)
			.filter(perAttempt)
			.build();
	}

	/**
	 * The web stacks of the server side, each with its application of the HTTP contract
	 * tests.
	 */
	enum Stack {

		/**
		 * The servlet filter, on Tomcat.
		 */
		SERVLET("dev.idempotency.spring.web.ContractTestApplication", WebApplicationType.SERVLET),

		/**
		 * The WebFlux filter, on Reactor Netty.
		 */
		REACTIVE("dev.idempotency.spring.web.WebFluxContractTestApplication", WebApplicationType.REACTIVE);

		private final String application;

		private final WebApplicationType type;

		Stack(String application, WebApplicationType type) {
			this.application = application;
			this.type = type;
		}

	}

}
