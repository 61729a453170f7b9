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

package dev.idempotency.spring.actuate;

import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import org.springframework.context.annotation.Import;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code idempotency} Actuator endpoint over HTTP, exposed, on the tiered store over
 * real Redis and PostgreSQL.
 *
 * @author Idempotency contributors
 */
@Import(AbstractOpsIT.RealServers.class)
@TestPropertySource(properties = "management.endpoints.web.exposure.include=health,idempotency")
class IdempotencyEndpointIT extends AbstractOpsIT {

	@Test
	void describesACompletedKeyWithoutItsBody() throws Exception {
		String key = newKey();
		assertThat(post("/ops/pay", key, "secret-card-number", "X-Tenant", "acme").statusCode()).isEqualTo(201);
		HttpResponse<String> response = get(endpoint(key, "header:acme"));
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.body()).doesNotContain("secret-card-number");
		JsonNode record = parse(response);
		assertThat(record.get("scope").asString()).isEqualTo("header:acme");
		assertThat(record.get("key").asString()).isEqualTo(key);
		assertThat(record.get("state").asString()).isEqualTo("COMPLETED");
		assertThat(record.get("fingerprint").asString()).matches("[0-9a-f]{64}");
		assertThat(record.get("leaseExpiresAt").isNull()).isTrue();
		assertThat(Instant.parse(record.get("expiresAt").asString())).isAfter(Instant.now().plusSeconds(3600));
		JsonNode stored = record.get("response");
		assertThat(stored.get("status").asInt()).isEqualTo(201);
		assertThat(stored.get("bodyRetained").asBoolean()).isTrue();
		assertThat(stored.get("bodySize").asInt()).isEqualTo("paid:secret-card-number".length());
		assertThat(stored.get("headerNames").toString()).containsIgnoringCase("Content-Type");
	}

	@Test
	void readsTheGlobalScopeWhenScopeIsAbsentOrEmpty() throws Exception {
		String key = newKey();
		assertThat(post("/ops/pay", key, "a").statusCode()).isEqualTo(201);
		assertThat(get(endpoint(key, null)).statusCode()).isEqualTo(200);
		assertThat(get(endpoint(key, "")).statusCode()).isEqualTo(200);
		assertThat(parse(get(endpoint(key, ""))).get("scope").asString()).isEmpty();
		assertThat(get(endpoint(key, "header:acme")).statusCode()).isEqualTo(404);
	}

	@Test
	void answers404ForAnUnknownKey() throws Exception {
		assertThat(get(endpoint(newKey(), null)).statusCode()).isEqualTo(404);
	}

	@Test
	void answers400ForAnInvalidKey() throws Exception {
		assertThat(get(endpoint("k".repeat(300), null)).statusCode()).isEqualTo(400);
	}

	@Test
	void readsKeysWithReservedCharacters() throws Exception {
		String key = "order/42?x=1&y=#" + newKey();
		assertThat(post("/ops/pay", key, "a").statusCode()).isEqualTo(201);
		assertThat(parse(get(endpoint(key, null))).get("key").asString()).isEqualTo(key);
	}

	@Test
	void evictsAKeySoThatTheNextRequestRunsAgain() throws Exception {
		String key = newKey();
		int runs = this.controller.runs.get();
		assertThat(post("/ops/pay", key, "a", "X-Tenant", "acme").statusCode()).isEqualTo(201);
		HttpResponse<String> evicted = delete(endpoint(key, "header:acme"));
		assertThat(evicted.statusCode()).isEqualTo(200);
		assertThat(parse(evicted).get("evicted").asBoolean()).isTrue();
		assertThat(get(endpoint(key, "header:acme")).statusCode()).isEqualTo(404);
		assertThat(parse(delete(endpoint(key, "header:acme"))).get("evicted").asBoolean()).isFalse();
		HttpResponse<String> again = post("/ops/pay", key, "a", "X-Tenant", "acme");
		assertThat(again.statusCode()).isEqualTo(201);
		assertThat(again.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(this.controller.runs.get()).isEqualTo(runs + 2);
	}

	@Test
	void describesAKeyInProgress() throws Exception {
		String key = newKey();
		this.controller.entered = new CountDownLatch(1);
		this.controller.gate = new CountDownLatch(1);
		CompletableFuture<HttpResponse<String>> running = CompletableFuture.supplyAsync(() -> {
			try {
				return post("/ops/slow", key, "s");
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		});
		try {
			assertThat(this.controller.entered.await(10, TimeUnit.SECONDS)).isTrue();
			JsonNode record = parse(get(endpoint(key, null)));
			assertThat(record.get("state").asString()).isEqualTo("PROCESSING");
			assertThat(Instant.parse(record.get("leaseExpiresAt").asString())).isAfter(Instant.now());
			assertThat(record.get("response").isNull()).isTrue();
		}
		finally {
			this.controller.gate.countDown();
		}
		assertThat(running.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		assertThat(parse(get(endpoint(key, null))).get("state").asString()).isEqualTo("COMPLETED");
	}

	private static String endpoint(String key, @Nullable String scope) {
		String path = "/actuator/idempotency?key=" + URLEncoder.encode(key, StandardCharsets.UTF_8);
		return (scope != null) ? path + "&scope=" + URLEncoder.encode(scope, StandardCharsets.UTF_8) : path;
	}

}
