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
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import dev.idempotency.test.TcpProxy;
import dev.idempotency.test.servers.TestServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestInstance.Lifecycle;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances of a reactive application on one Redis: requests with one key raced
 * across both run the handler once, and a Redis that hangs under one instance stalls its
 * idempotent requests, never its event loop. Instance A reaches Redis through a
 * {@link TcpProxy}, which the hang pauses; B reaches it directly.
 *
 * @author Idempotency contributors
 */
@TestInstance(Lifecycle.PER_CLASS)
class WebFluxInstancesIT {

	private final HttpClient client = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	private TcpProxy redisProxy;

	private ConfigurableApplicationContext a;

	private ConfigurableApplicationContext b;

	@BeforeAll
	void startInstances() throws IOException {
		String prefix = "it-webflux-instances-" + UUID.randomUUID() + ":";
		TestServers.Redis redis = TestServers.redis();
		this.redisProxy = TcpProxy.start(redis.host(), redis.port());
		this.a = start(new TestServers.Redis(this.redisProxy.host(), this.redisProxy.port(), "proxy")
			.connectionFactory(Duration.ofSeconds(3)), prefix);
		this.b = start(redis.connectionFactory(), prefix);
	}

	@AfterAll
	void stopInstances() {
		for (ConfigurableApplicationContext context : new ConfigurableApplicationContext[] { this.a, this.b }) {
			if (context != null) {
				context.close();
			}
		}
		if (this.redisProxy != null) {
			this.redisProxy.close();
		}
	}

	private static ConfigurableApplicationContext start(LettuceConnectionFactory redis, String prefix) {
		Map<String, Object> properties = new LinkedHashMap<>();
		properties.put("server.port", "0");
		properties.put("spring.main.banner-mode", "off");
		properties.put("spring.main.web-application-type", "reactive");
		properties.put("spring.autoconfigure.exclude",
				"org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration,"
						+ "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration,"
						+ "org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration");
		properties.put("spring.data.redis.repositories.enabled", "false");
		properties.put("idempotency.store.type", "redis");
		// the policies that the contract application's handlers name
		properties.put("idempotency.policies.crash.lock-timeout", "500ms");
		properties.put("idempotency.policies.brief.ttl", "1s");
		properties.put("idempotency.policies.brief.lock-timeout", "300ms");
		properties.put("idempotency.policies.open.on-store-failure", "fail-open");
		properties.put("idempotency.policies.small.max-request-body", "1KB");
		properties.put("idempotency.policies.small.max-response-body", "1KB");
		properties.put("idempotency.policies.lenient.fingerprint.excluded-json-pointers", "/sentAt");
		properties.put("idempotency.policies.raw.fingerprint.json", "raw");
		properties.put("idempotency.policies.patient.in-flight-wait", "5s");
		properties.put("idempotency.policies.webhook-header.key.header", "webhook-id");
		properties.put("idempotency.policies.webhook-body.key.json-pointer", "/data/id");
		properties.put("idempotency.redis.key-prefix", prefix);
		return new SpringApplicationBuilder(WebFluxContractTestApplication.class).properties(properties)
			.initializers((context) -> ((GenericApplicationContext) context).registerBean("redisConnectionFactory",
					LettuceConnectionFactory.class, () -> redis))
			.run();
	}

	@Test
	void oneKeyRacedAcrossBothInstancesRunsTheHandlerOnce() throws Exception {
		String key = UUID.randomUUID().toString();
		List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
		for (int i = 0; i < 16; i++) {
			sent.add(this.client.sendAsync(slow((i % 2 == 0) ? this.a : this.b, key, 300), BodyHandlers.ofString()));
		}
		List<HttpResponse<String>> answered = new ArrayList<>();
		for (CompletableFuture<HttpResponse<String>> response : sent) {
			answered.add(response.get());
		}
		assertThat(answered).extracting(HttpResponse::statusCode).containsOnly(200, 409).contains(200);
		assertThat(runs(key)).isEqualTo(1);
		String body = answered.stream().filter((r) -> r.statusCode() == 200).findFirst().orElseThrow().body();
		for (ConfigurableApplicationContext instance : List.of(this.a, this.b)) {
			HttpResponse<String> replay = this.client.send(slow(instance, key, 300), BodyHandlers.ofString());
			assertThat(replay.statusCode()).isEqualTo(200);
			assertThat(replay.body()).isEqualTo(body);
			assertThat(replay.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		}
		assertThat(runs(key)).isEqualTo(1);
	}

	@Test
	void aRedisThatHangsStallsTheIdempotentRequestNotTheEventLoop() throws Exception {
		String key = UUID.randomUUID().toString();
		this.redisProxy.pause();
		long paused = System.nanoTime();
		CompletableFuture<HttpResponse<String>> stalled;
		try {
			stalled = this.client.sendAsync(slow(this.a, key, 10), BodyHandlers.ofString());
			Thread.sleep(300);
			// while the store call hangs, the instance still serves: its event loop is
			// free
			for (int i = 0; i < 20; i++) {
				long start = System.nanoTime();
				HttpResponse<String> plain = this.client.send(HttpRequest.newBuilder(uri(this.a, "/plain"))
					.timeout(Duration.ofSeconds(2))
					.POST(BodyPublishers.ofString("x"))
					.build(), BodyHandlers.ofString());
				assertThat(plain.statusCode()).isEqualTo(200);
				assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(2));
			}
			if (Duration.ofNanos(System.nanoTime() - paused).compareTo(Duration.ofMillis(2500)) < 0) {
				// within the command time-out (3 s): the store call still waits
				assertThat(stalled).isNotDone();
			}
		}
		finally {
			this.redisProxy.resume();
		}
		// once Redis answers again (or the command times out), the stalled request ends
		// with an answer of the contract: the handler's, or 503 if the store gave up
		HttpResponse<String> ended = stalled.get();
		assertThat(ended.statusCode()).isIn(200, 503);
		assertThat(runs(key)).isLessThanOrEqualTo(1);
	}

	@Test
	void aRedisThatHangsUnderARunningHandlerLeavesItsAnswerAndTheEventLoopAlone() throws Exception {
		String key = UUID.randomUUID().toString();
		CompletableFuture<HttpResponse<String>> running = this.client.sendAsync(slow(this.a, key, 800),
				BodyHandlers.ofString());
		for (int i = 0; i < 250 && runs(key) == 0; i++) {
			Thread.sleep(20);
		}
		assertThat(runs(key)).isEqualTo(1);
		// the handler runs; its store goes silent, and its completion will wait for it
		this.redisProxy.pause();
		try {
			for (int i = 0; i < 20; i++) {
				HttpResponse<String> plain = this.client.send(HttpRequest.newBuilder(uri(this.a, "/plain"))
					.timeout(Duration.ofSeconds(2))
					.POST(BodyPublishers.ofString("x"))
					.build(), BodyHandlers.ofString());
				assertThat(plain.statusCode()).isEqualTo(200);
			}
		}
		finally {
			this.redisProxy.resume();
		}
		// the handler ran once and its client gets its answer, stored or not
		HttpResponse<String> answered = running.get();
		assertThat(answered.statusCode()).isEqualTo(200);
		assertThat(answered.body()).startsWith("slow 1 ");
		assertThat(runs(key)).isEqualTo(1);
	}

	private int runs(String key) {
		return this.a.getBean(HandlerCounter.class).count("slow", key)
				+ this.b.getBean(HandlerCounter.class).count("slow", key);
	}

	private HttpRequest slow(ConfigurableApplicationContext instance, String key, long millis) {
		return HttpRequest.newBuilder(uri(instance, "/slow?millis=" + millis))
			.header("Idempotency-Key", key)
			.POST(BodyPublishers.ofString("a"))
			.build();
	}

	private static URI uri(ConfigurableApplicationContext instance, String path) {
		int port = ((WebServerApplicationContext) instance).getWebServer().getPort();
		return URI.create("http://127.0.0.1:" + port + path);
	}

}
