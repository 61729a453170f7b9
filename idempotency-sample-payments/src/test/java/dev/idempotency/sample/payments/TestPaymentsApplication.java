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

package dev.idempotency.sample.payments;

import java.util.Map;

import dev.idempotency.test.servers.TestServers;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;

/**
 * Runs the sample with no servers installed: Redis and PostgreSQL come from the
 * environment when {@code SPRING_DATASOURCE_URL} / {@code SPRING_DATA_REDIS_HOST} (or the
 * test variables of {@link TestServers}) are set, else from Testcontainers when Docker is
 * available, else from embedded servers started in this JVM.
 * <p>
 * Run with
 * {@code ./mvnw -pl idempotency-sample-payments -am -DskipTests test-compile spring-boot:test-run}.
 *
 * @author Idempotency contributors
 */
public final class TestPaymentsApplication {

	private TestPaymentsApplication() {
	}

	public static void main(String[] args) {
		useLocalServersUnlessConfigured();
		SpringApplication.from(PaymentsApplication::main).with(Greeting.class).run(args);
	}

	private static void useLocalServersUnlessConfigured() {
		if (!isConfigured("spring.data.redis.host", "SPRING_DATA_REDIS_HOST")) {
			TestServers.Redis redis = TestServers.redis();
			System.setProperty("spring.data.redis.host", redis.host());
			System.setProperty("spring.data.redis.port", String.valueOf(redis.port()));
			System.out.println("Redis: " + redis.source() + " server at " + redis.host() + ":" + redis.port());
		}
		if (!isConfigured("spring.datasource.url", "SPRING_DATASOURCE_URL")) {
			TestServers.Postgres postgres = TestServers.postgres();
			System.setProperty("spring.datasource.url", postgres.jdbcUrl());
			System.setProperty("spring.datasource.username", postgres.username());
			System.setProperty("spring.datasource.password", postgres.password());
			System.out.println("PostgreSQL: " + postgres.source() + " server at " + postgres.jdbcUrl());
		}
	}

	private static boolean isConfigured(String property, String variable) {
		Map<String, String> environment = System.getenv();
		return System.getProperty(property) != null || environment.containsKey(variable);
	}

	/**
	 * Tells the newcomer where the service runs and how to log in.
	 */
	@TestConfiguration(proxyBeanMethods = false)
	static class Greeting {

		@Bean
		ApplicationListener<ApplicationReadyEvent> greeting() {
			return (event) -> {
				int port = ((WebServerApplicationContext) event.getApplicationContext()).getWebServer().getPort();
				System.out.printf("%n  Payments sample running at http://localhost:%d/%n"
						+ "  Demo users (HTTP Basic): alice / alice-secret, bob / bob-secret, admin / admin-secret (ADMIN)%n"
						+ "  Try: curl -u alice:alice-secret -H 'Content-Type: application/json' "
						+ "-d '{\"currency\":\"EUR\",\"initialBalance\":10000}' -H 'Idempotency-Key: acct-1' "
						+ "http://localhost:%d/accounts%n%n", port, port);
			};
		}

	}

}
