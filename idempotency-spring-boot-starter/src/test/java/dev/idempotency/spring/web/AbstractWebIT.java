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
import java.nio.charset.StandardCharsets;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.TestPropertySource;

/**
 * Base of the tests that talk HTTP to the {@link ContractTestApplication} on a real
 * server. Subclasses that do not change the configuration share one application context.
 * <p>
 * The auto-configurations of Redis, DataSource and Flyway are excluded, so that the store
 * is the in-memory one unless a subclass supplies a store, or the connection factory and
 * data source of one (with {@code @Import} and {@code idempotency.store.type}).
 *
 * @author Idempotency contributors
 */
@SpringBootTest(classes = ContractTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT)
@TestPropertySource(properties = {
		"spring.autoconfigure.exclude=org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration,"
				+ "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration,"
				+ "org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration",
		"idempotency.scope-header=X-Tenant", "idempotency.policies.crash.lock-timeout=500ms",
		"idempotency.policies.brief.ttl=1s", "idempotency.policies.brief.lock-timeout=300ms",
		"idempotency.policies.open.on-store-failure=fail-open", "idempotency.policies.small.max-request-body=1KB",
		"idempotency.policies.small.max-response-body=1KB", "idempotency.fingerprint.headers=X-Account",
		"idempotency.policies.lenient.fingerprint.excluded-json-pointers=/sentAt",
		"idempotency.policies.raw.fingerprint.json=raw", "idempotency.policies.patient.in-flight-wait=5s",
		"idempotency.client-ttl-header=X-TTL", "idempotency.policies.webhook-header.key.header=webhook-id",
		"idempotency.policies.webhook-body.key.json-pointer=/data/id" })
abstract class AbstractWebIT {

	static final String KEY = "Idempotency-Key";

	@LocalServerPort
	int port;

	@Autowired
	HandlerCounter counter;

	final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	static String newKey() {
		return UUID.randomUUID().toString();
	}

	URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.port + path);
	}

	HttpResponse<byte[]> post(String path, @Nullable String key, String body, String... headers)
			throws IOException, InterruptedException {
		HttpRequest.Builder request = HttpRequest.newBuilder(uri(path))
			.POST(BodyPublishers.ofString(body, StandardCharsets.UTF_8));
		if (key != null) {
			request.header(KEY, key);
		}
		for (int i = 0; i < headers.length; i += 2) {
			request.header(headers[i], headers[i + 1]);
		}
		return send(request.build());
	}

	HttpResponse<byte[]> send(HttpRequest request) throws IOException, InterruptedException {
		return this.client.send(request, BodyHandlers.ofByteArray());
	}

	static String text(HttpResponse<byte[]> response) {
		return new String(response.body(), StandardCharsets.UTF_8);
	}

	static String problem(String slug, int status, String title, String detail, String instance, @Nullable String key) {
		return "{\"type\":\"https://idempotency.dev/problems/" + slug + "\",\"title\":\"" + title + "\",\"status\":"
				+ status + ",\"detail\":\"" + detail + "\",\"instance\":\"" + instance + "\""
				+ ((key != null) ? ",\"idempotencyKey\":\"" + key + "\"" : "") + "}";
	}

}
