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

package dev.idempotency.spring.openapi;

import java.io.IOException;

import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests of the OpenAPI document with a custom key header, problem type base and without
 * the expiry header, written as OpenAPI 3.0.
 *
 * @author Idempotency contributors
 */
@SpringBootTest(classes = OpenApiTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "idempotency.store.type=memory",
				"spring.autoconfigure.exclude=org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration,"
						+ "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration,"
						+ "org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration",
				"idempotency.policies.open.on-store-failure=fail-open",
				"idempotency.policies.deliveries.key.header=webhook-id",
				"idempotency.policies.events.key.json-pointer=/id", "idempotency.key-header=X-Request-Key",
				"idempotency.problem-type-base=https://example.com/problems/", "idempotency.expires-header=false",
				"springdoc.api-docs.version=openapi_3_0" })
class IdempotencyOpenApiCustomHeaderIT {

	@LocalServerPort
	int port;

	@Test
	void documentsConfiguredKeyHeader() throws IOException, InterruptedException {
		JsonNode document = IdempotencyOpenApiIT.apiDocs(this.port);
		assertThat(document.path("openapi").asString()).startsWith("3.0");
		JsonNode post = document.path("paths").path("/payments").path("post");
		JsonNode key = IdempotencyOpenApiIT.headerParameter(post, "X-Request-Key");
		assertThat(key).isNotNull();
		assertThat(key.path("required").asBoolean()).isTrue();
		assertThat(key.path("schema").path("type").asString()).isEqualTo("string");
		assertThat(key.path("schema").has("types")).isFalse();
		assertThat(document.path("components").path("schemas").path("ProblemDetail").path("type").asString())
			.isEqualTo("object");
		assertThat(IdempotencyOpenApiIT.headerParameter(post, "Idempotency-Key")).isNull();
		JsonNode responses = post.path("responses");
		assertThat(responses.path("422")
			.path("content")
			.path("application/problem+json")
			.path("examples")
			.path("idempotency-key-reused")
			.path("value")
			.path("type")
			.asString()).isEqualTo("https://example.com/problems/idempotency-key-reused");
		assertThat(responses.path("201").path("headers").propertyNames()).contains("Idempotent-Replayed")
			.doesNotContain("Idempotency-Expires");
	}

	@Test
	void documentsKeysTheServerTakesFromTheRequest() throws IOException, InterruptedException {
		JsonNode paths = IdempotencyOpenApiIT.apiDocs(this.port).path("paths");
		JsonNode delivery = paths.path("/webhooks/deliveries").path("post");
		JsonNode deliveryKey = IdempotencyOpenApiIT.headerParameter(delivery, "webhook-id");
		assertThat(deliveryKey).isNotNull();
		assertThat(deliveryKey.path("required").asBoolean()).isTrue();
		assertThat(deliveryKey.path("description").asString()).startsWith("Identifier of the delivery");
		assertThat(IdempotencyOpenApiIT.headerParameter(delivery, "X-Request-Key")).isNull();
		JsonNode event = paths.path("/webhooks/events").path("post");
		assertThat(IdempotencyOpenApiIT.headerParameter(event, "X-Request-Key")).isNull();
		assertThat(event.path("x-idempotency-key").path("in").asString()).isEqualTo("body");
		assertThat(event.path("x-idempotency-key").path("json-pointer").asString()).isEqualTo("/id");
		// a key in the body is always required
		assertThat(event.path("responses")
			.path("400")
			.path("content")
			.path("application/problem+json")
			.path("examples")
			.propertyNames()).contains("idempotency-key-missing", "idempotency-key-invalid");
		assertThat(event.path("responses").path("409").isMissingNode()).isFalse();
	}

}
