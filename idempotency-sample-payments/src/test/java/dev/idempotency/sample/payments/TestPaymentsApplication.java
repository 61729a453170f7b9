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

import java.util.Arrays;
import java.util.Map;

import dev.idempotency.test.servers.TestServers;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.SimpleCommandLinePropertySource;
import org.springframework.core.env.StandardEnvironment;

/**
 * Runs the sample with no servers installed: Redis and PostgreSQL come from the
 * environment when {@code SPRING_DATASOURCE_URL} / {@code SPRING_DATA_REDIS_HOST} (or the
 * test variables of {@link TestServers}) are set, else from Testcontainers when Docker is
 * available, else from embedded servers started in this JVM.
 * <p>
 * With the profile {@code mariadb} the database is MariaDB instead, the {@code payments}
 * database of the server of {@link TestServers#mariadb()} (its test variables, else
 * Testcontainers, else the local server on 127.0.0.1:3306) unless
 * {@code SPRING_DATASOURCE_URL} names one. There is no embedded MariaDB: without a server
 * the start fails, saying how to provide one.
 * <p>
 * Run with
 * {@code ./mvnw -pl idempotency-sample-payments -am -DskipTests test-compile spring-boot:test-run},
 * on MariaDB with {@code -Dspring-boot.run.profiles=mariadb} added.
 *
 * @author Idempotency contributors
 */
public final class TestPaymentsApplication {

	private TestPaymentsApplication() {
	}

	public static void main(String[] args) {
		useLocalServersUnlessConfigured(isMariaDbProfileActive(args));
		SpringApplication.from(PaymentsApplication::main).with(Greeting.class).run(args);
	}

	// the profile from the arguments (as the Maven plugin passes it), a system property
	// or
	// SPRING_PROFILES_ACTIVE
	private static boolean isMariaDbProfileActive(String[] args) {
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources().addFirst(new SimpleCommandLinePropertySource(args));
		return Arrays.asList(environment.getActiveProfiles()).contains("mariadb");
	}

	private static void useLocalServersUnlessConfigured(boolean mariadb) {
		if (!isConfigured("spring.data.redis.host", "SPRING_DATA_REDIS_HOST")) {
			TestServers.Redis redis = TestServers.redis();
			System.setProperty("spring.data.redis.host", redis.host());
			System.setProperty("spring.data.redis.port", String.valueOf(redis.port()));
			System.out.println("Redis: " + redis.source() + " server at " + redis.host() + ":" + redis.port());
		}
		if (mariadb && !isConfigured("spring.datasource.url", "SPRING_DATASOURCE_URL")) {
			TestServers.MariaDb server = mariaDbServer();
			String url = server.jdbcUrl("payments", TestServers.MariaDb.Driver.MARIADB)
					+ "?createDatabaseIfNotExist=true";
			System.setProperty("spring.datasource.url", url);
			System.setProperty("spring.datasource.username", server.username());
			System.setProperty("spring.datasource.password", server.password());
			String source = server.source().endsWith("server") ? server.source() : server.source() + " server";
			System.out.println("MariaDB: " + source + " at " + url);
		}
		else if (!isConfigured("spring.datasource.url", "SPRING_DATASOURCE_URL")) {
			TestServers.Postgres postgres = TestServers.postgres();
			System.setProperty("spring.datasource.url", postgres.jdbcUrl());
			System.setProperty("spring.datasource.username", postgres.username());
			System.setProperty("spring.datasource.password", postgres.password());
			System.out.println("PostgreSQL: " + postgres.source() + " server at " + postgres.jdbcUrl());
		}
	}

	private static TestServers.MariaDb mariaDbServer() {
		try {
			return TestServers.mariadb();
		}
		catch (IllegalStateException ex) {
			throw new IllegalStateException("The profile mariadb runs the sample on MariaDB, and there is no embedded"
					+ " MariaDB to start: set SPRING_DATASOURCE_URL (jdbc:mariadb://host:port/database),"
					+ " SPRING_DATASOURCE_USERNAME and SPRING_DATASOURCE_PASSWORD, or provide a server as follows. "
					+ ex.getMessage(), ex);
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
