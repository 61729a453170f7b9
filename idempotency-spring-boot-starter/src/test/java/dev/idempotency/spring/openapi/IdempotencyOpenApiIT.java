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
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests of the OpenAPI document of an application with idempotent endpoints, read over
 * HTTP from springdoc's {@code /v3/api-docs}.
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
				"idempotency.policies.events.key.json-pointer=/id", "idempotency.endpoints[0].methods=PUT",
				"idempotency.endpoints[0].path=/legacy/orders/{id}" })
class IdempotencyOpenApiIT {

	static final String PROBLEM_REF = "#/components/schemas/ProblemDetail";

	@LocalServerPort
	int port;

	JsonNode paths;

	JsonNode document;

	@BeforeEach
	void readDocument() throws IOException, InterruptedException {
		this.document = apiDocs(this.port);
		this.paths = this.document.path("paths");
	}

	static JsonNode apiDocs(int port) throws IOException, InterruptedException {
		HttpClient client = HttpClient.newHttpClient();
		HttpResponse<String> response = client.send(
				HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v3/api-docs")).build(),
				BodyHandlers.ofString());
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		return JsonMapper.shared().readTree(response.body());
	}

	static @Nullable JsonNode headerParameter(JsonNode operation, String name) {
		for (JsonNode parameter : operation.path("parameters")) {
			if ("header".equals(parameter.path("in").asString()) && name.equals(parameter.path("name").asString())) {
				return parameter;
			}
		}
		return null;
	}

	@Test
	void requiredKeyIsDocumentedOnAnnotatedPost() {
		JsonNode post = this.paths.path("/payments").path("post");
		JsonNode key = headerParameter(post, "Idempotency-Key");
		assertThat(key).isNotNull();
		assertThat(key.path("required").asBoolean()).isTrue();
		assertThat(key.path("description").asString()).contains("visible ASCII");
		assertThat(key.path("example").asString()).isNotEmpty();
		JsonNode schema = key.path("schema");
		assertThat(schema.path("type").asString()).isEqualTo("string");
		assertThat(schema.path("minLength").asInt()).isEqualTo(1);
		assertThat(schema.path("maxLength").asInt()).isEqualTo(255);
		assertThat(schema.path("pattern").asString()).isEqualTo("^[\\x21-\\x7E]+$");
		assertThat("8e03978e-40d5-43e8-bc93-6894a57f9324").matches(schema.path("pattern").asString());
		assertThat("has space").doesNotMatch(schema.path("pattern").asString());
	}

	@Test
	void optionalKeyIsDocumentedAsNotRequired() {
		JsonNode patch = this.paths.path("/payments/{id}").path("patch");
		JsonNode key = headerParameter(patch, "Idempotency-Key");
		assertThat(key).isNotNull();
		assertThat(key.path("required").asBoolean(true)).isFalse();
		assertThat(key.path("description").asString()).contains("without protection");
		// without a required key there is no 'key missing' problem
		assertThat(patch.path("responses")
			.path("400")
			.path("content")
			.path("application/problem+json")
			.path("examples")
			.propertyNames()).containsExactly("idempotency-key-invalid");
	}

	@Test
	void problemResponsesAreDocumentedOnIdempotentOperations() {
		for (JsonNode operation : new JsonNode[] { this.paths.path("/payments").path("post"),
				this.paths.path("/payments/{id}").path("patch") }) {
			JsonNode responses = operation.path("responses");
			for (String code : new String[] { "400", "409", "410", "413", "422", "503" }) {
				JsonNode problem = responses.path(code).path("content").path("application/problem+json");
				assertThat(problem.path("schema").path("$ref").asString()).as(code).isEqualTo(PROBLEM_REF);
				assertThat(responses.path(code).path("description").asString()).as(code).isNotEmpty();
			}
			assertThat(responses.path("409").path("headers").has("Retry-After")).isTrue();
			assertThat(responses.path("503").path("headers").has("Retry-After")).isTrue();
			assertThat(responses.path("422")
				.path("content")
				.path("application/problem+json")
				.path("examples")
				.path("idempotency-key-reused")
				.path("value")
				.path("type")
				.asString()).isEqualTo("https://idempotency.dev/problems/idempotency-key-reused");
		}
		JsonNode badRequest = this.paths.path("/payments").path("post").path("responses").path("400");
		assertThat(badRequest.path("content").path("application/problem+json").path("examples").propertyNames())
			.containsExactly("idempotency-key-missing", "idempotency-key-invalid");
		JsonNode problemSchema = this.document.path("components").path("schemas").path("ProblemDetail");
		assertThat(problemSchema.path("properties").propertyNames()).contains("type", "title", "status", "detail",
				"instance", "idempotencyKey");
	}

	@Test
	void successResponsesDocumentReplayAndExpiryHeaders() {
		JsonNode created = this.paths.path("/payments").path("post").path("responses").path("201");
		assertThat(created.path("headers").propertyNames()).contains("Idempotent-Replayed", "Idempotency-Expires");
		JsonNode ok = this.paths.path("/payments/{id}").path("patch").path("responses").path("200");
		assertThat(ok.path("headers").propertyNames()).contains("Idempotent-Replayed", "Idempotency-Expires");
	}

	@Test
	void nothingIsAddedToPlainGet() {
		JsonNode get = this.paths.path("/payments/{id}").path("get");
		assertThat(get.isMissingNode()).isFalse();
		assertThat(headerParameter(get, "Idempotency-Key")).isNull();
		assertThat(get.path("responses").propertyNames()).doesNotContain("400", "409", "410", "413", "422", "503");
		assertThat(get.path("responses").path("200").path("headers").isMissingNode()).isTrue();
	}

	@Test
	void annotationOnClassCoversUnsafeMethodsOnly() {
		JsonNode orders = this.paths.path("/orders");
		assertThat(headerParameter(orders.path("post"), "Idempotency-Key")).isNotNull();
		assertThat(orders.path("post").path("responses").has("422")).isTrue();
		assertThat(orders.path("get").isMissingNode()).isFalse();
		assertThat(headerParameter(orders.path("get"), "Idempotency-Key")).isNull();
		assertThat(orders.path("get").path("responses").has("422")).isFalse();
	}

	@Test
	void responseDocumentedByTheApplicationIsKept() {
		JsonNode responses = this.paths.path("/payments/{id}/refunds").path("post").path("responses");
		assertThat(responses.path("409").path("description").asString()).isEqualTo("The payment cannot be refunded");
		assertThat(responses.path("409").path("content").has("application/problem+json")).isFalse();
		assertThat(responses.path("409").path("headers").has("Retry-After")).isFalse();
		assertThat(responses.has("422")).isTrue();
	}

	@Test
	void failOpenPolicyHasNoStoreUnavailableResponse() {
		JsonNode responses = this.paths.path("/payments/{id}/refunds").path("post").path("responses");
		assertThat(responses.has("503")).isFalse();
		// no request body: no 413 either
		assertThat(responses.has("413")).isFalse();
	}

	@Test
	void configuredEndpointRuleIsDocumented() {
		JsonNode put = this.paths.path("/legacy/orders/{id}").path("put");
		JsonNode key = headerParameter(put, "Idempotency-Key");
		assertThat(key).isNotNull();
		assertThat(key.path("required").asBoolean()).isTrue();
		assertThat(put.path("responses").path("409").path("content").has("application/problem+json")).isTrue();
		JsonNode other = this.paths.path("/legacy/customers/{id}").path("put");
		assertThat(other.isMissingNode()).isFalse();
		assertThat(headerParameter(other, "Idempotency-Key")).isNull();
		assertThat(other.path("responses").has("409")).isFalse();
	}

}
