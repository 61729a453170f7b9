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

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.spring.actuate.OpsTestApplication.OpsController;
import dev.idempotency.test.servers.TestServers;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.test.context.TestPropertySource;

/**
 * Base of the operations tests: the {@link OpsTestApplication} on a real server with the
 * tiered store over real Redis and PostgreSQL (each context with its own key prefix and
 * schema), unless a subclass imports other servers.
 *
 * @author Idempotency contributors
 */
@SpringBootTest(classes = OpsTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT)
@TestPropertySource(properties = {
		"spring.autoconfigure.exclude=org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration,"
				+ "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration,"
				+ "org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration",
		"spring.data.redis.repositories.enabled=false", "idempotency.store.type=tiered",
		"idempotency.redis.key-prefix=it-ops-${random.uuid}:", "idempotency.scope-header=X-Tenant",
		"idempotency.policies.metered.max-request-body=1KB", "management.endpoint.health.show-details=always" })
abstract class AbstractOpsIT {

	static final JsonMapper json = JsonMapper.builder().build();

	@LocalServerPort
	int port;

	@Autowired
	OpsController controller;

	final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	// a port on which nothing listens
	static int closedPort() {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	static String newKey() {
		return UUID.randomUUID().toString();
	}

	URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.port + path);
	}

	HttpResponse<String> post(String path, @Nullable String key, String body, String... headers)
			throws IOException, InterruptedException {
		HttpRequest.Builder request = HttpRequest.newBuilder(uri(path))
			.POST(BodyPublishers.ofString(body, StandardCharsets.UTF_8))
			.header("Content-Type", "text/plain");
		if (key != null) {
			request.header("Idempotency-Key", key);
		}
		for (int i = 0; i < headers.length; i += 2) {
			request.header(headers[i], headers[i + 1]);
		}
		return send(request);
	}

	HttpResponse<String> get(String path) throws IOException, InterruptedException {
		return send(HttpRequest.newBuilder(uri(path)).GET());
	}

	HttpResponse<String> delete(String path) throws IOException, InterruptedException {
		return send(HttpRequest.newBuilder(uri(path)).DELETE());
	}

	HttpResponse<String> send(HttpRequest.Builder request) throws IOException, InterruptedException {
		return this.client.send(request.build(), BodyHandlers.ofString(StandardCharsets.UTF_8));
	}

	static JsonNode parse(HttpResponse<String> response) {
		return json.readTree(response.body());
	}

	/**
	 * Real Redis and PostgreSQL.
	 */
	@TestConfiguration(proxyBeanMethods = false)
	static class RealServers {

		@Bean(destroyMethod = "destroy")
		LettuceConnectionFactory redisConnectionFactory() {
			return TestServers.redis().connectionFactory();
		}

		@Bean(destroyMethod = "")
		HikariDataSource dataSource() {
			return TestServers.postgres().dataSource("it_ops_" + Long.toHexString(System.nanoTime()));
		}

		@Bean
		SchemaDropper schemaDropper(HikariDataSource dataSource) {
			return new SchemaDropper(dataSource);
		}

	}

	/**
	 * Drops the test's schema when the context closes, then closes the pool.
	 */
	static final class SchemaDropper implements AutoCloseable {

		private final HikariDataSource dataSource;

		SchemaDropper(HikariDataSource dataSource) {
			this.dataSource = dataSource;
		}

		@Override
		public void close() {
			TestServers.Postgres.dropSchema(this.dataSource, this.dataSource.getSchema());
			this.dataSource.close();
		}

	}

}
