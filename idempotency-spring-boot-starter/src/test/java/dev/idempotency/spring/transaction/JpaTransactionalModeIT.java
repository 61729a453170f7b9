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

package dev.idempotency.spring.transaction;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.spring.Idempotent;
import dev.idempotency.spring.transaction.TransactionalTestApplication.Ledger;
import dev.idempotency.test.servers.TestServers;
import jakarta.persistence.EntityManager;
import jakarta.persistence.EntityManagerFactory;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestInstance.Lifecycle;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.orm.jpa.JpaTransactionManager;
import org.springframework.orm.jpa.LocalContainerEntityManagerFactoryBean;
import org.springframework.orm.jpa.SharedEntityManagerCreator;
import org.springframework.orm.jpa.vendor.HibernateJpaVendorAdapter;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The transactional mode under a {@link JpaTransactionManager} of the store's
 * {@link DataSource}, on a real PostgreSQL: the start-up checks accept it, and an entity
 * the handler persists, a row it writes through JDBC, the claim and the stored response
 * commit together or not at all. Hibernate is set up by hand for this class only, so that
 * no other test runs with JPA.
 *
 * @author Idempotency contributors
 */
@TestInstance(Lifecycle.PER_CLASS)
class JpaTransactionalModeIT {

	private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	private final String schema = "it_tx_jpa_" + Long.toHexString(System.nanoTime());

	private HikariDataSource dataSource;

	private JdbcTemplate jdbc;

	private ConfigurableApplicationContext app;

	@BeforeAll
	void start() {
		this.dataSource = TestServers.postgres().dataSource(this.schema);
		this.jdbc = new JdbcTemplate(this.dataSource);
		for (String statement : (TransactionalTestApplication.SCHEMA_DDL + ";" + JpaLedgerEntry.DDL).split(";")) {
			if (!statement.isBlank()) {
				this.jdbc.execute(statement);
			}
		}
		Map<String, Object> properties = new LinkedHashMap<>();
		properties.put("server.port", "0");
		properties.put("spring.main.banner-mode", "off");
		properties.put("spring.autoconfigure.exclude",
				"org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration,"
						+ "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration,"
						+ "org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration");
		properties.put("spring.data.redis.repositories.enabled", "false");
		properties.put("idempotency.store.type", "jdbc");
		properties.put("idempotency.policies.ledger.transactional", "true");
		properties.put("idempotency.policies.ledger.lock-timeout", "5s");
		// the application's other idempotent endpoint and method
		properties.put("idempotency.policies.quick.transactional", "true");
		properties.put("idempotency.policies.nested.lock-timeout", "900ms");
		DataSource dataSource = this.dataSource;
		this.app = new SpringApplicationBuilder(TransactionalTestApplication.class, JpaConfiguration.class)
			.properties(properties)
			.initializers((context) -> ((GenericApplicationContext) context).registerBean("dataSource",
					DataSource.class, () -> dataSource, (definition) -> definition.setDestroyMethodName("")))
			.run();
	}

	@AfterAll
	void stop() {
		if (this.app != null) {
			this.app.close();
		}
		if (this.dataSource != null) {
			TestServers.Postgres.dropSchema(this.dataSource, this.schema);
			this.dataSource.close();
		}
	}

	@Test
	void startUpChecksAcceptAJpaTransactionManagerOfTheStoresDataSource() {
		PlatformTransactionManager manager = this.app.getBean(PlatformTransactionManager.class);
		assertThat(manager).isInstanceOf(JpaTransactionManager.class);
		assertThat(((JpaTransactionManager) manager).getDataSource()).isSameAs(this.dataSource);
	}

	@Test
	void persistedEntityCommitsWithTheStoredResponse() throws Exception {
		String key = newKey();
		HttpResponse<String> first = post(key, "");
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(first.body()).contains("\"id\":");
		assertThat(jpaEntries(key)).isOne();
		assertThat(ledgerEntries(key)).isOne();
		assertThat(recordStatus(key)).isEqualTo("C");
		HttpResponse<String> retry = post(key, "");
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(jpaEntries(key)).isOne();
		assertThat(ledgerEntries(key)).isOne();
	}

	@Test
	void failedHandlerLeavesNeitherItsEntityNorItsClaim() throws Exception {
		String thrown = newKey();
		assertThat(post(thrown, "fail").statusCode()).isEqualTo(500);
		String busy = newKey();
		assertThat(post(busy, "unavailable").statusCode()).isEqualTo(503);
		for (String key : List.of(thrown, busy)) {
			assertThat(jpaEntries(key)).isZero();
			assertThat(ledgerEntries(key)).isZero();
			assertThat(recordStatus(key)).isNull();
			HttpResponse<String> retry = post(key, "");
			assertThat(retry.statusCode()).isEqualTo(201);
			assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
			assertThat(jpaEntries(key)).isOne();
			assertThat(ledgerEntries(key)).isOne();
		}
	}

	private HttpResponse<String> post(String key, String mode) throws IOException, InterruptedException {
		int port = ((WebServerApplicationContext) this.app).getWebServer().getPort();
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/jpa-ledger"))
			.header("Content-Type", "text/plain")
			.header("Idempotency-Key", key)
			.POST(BodyPublishers.ofString("jpa", StandardCharsets.UTF_8));
		if (!mode.isEmpty()) {
			request.header("X-Mode", mode);
		}
		return this.client.send(request.build(), BodyHandlers.ofString(StandardCharsets.UTF_8));
	}

	private long jpaEntries(String key) {
		return new LedgerRows(this.jdbc).count("jpa_entry", key);
	}

	private long ledgerEntries(String key) {
		return new LedgerRows(this.jdbc).count("ledger_entry", key);
	}

	private @Nullable String recordStatus(String key) {
		return new LedgerRows(this.jdbc).recordStatus(key);
	}

	private static String newKey() {
		return UUID.randomUUID().toString();
	}

	/**
	 * Hibernate on the application's data source, its transaction manager, and an
	 * endpoint that persists an entity.
	 */
	@Configuration(proxyBeanMethods = false)
	static class JpaConfiguration {

		@Bean
		LocalContainerEntityManagerFactoryBean entityManagerFactory(DataSource dataSource) {
			LocalContainerEntityManagerFactoryBean factory = new LocalContainerEntityManagerFactoryBean();
			factory.setDataSource(dataSource);
			factory.setJpaVendorAdapter(new HibernateJpaVendorAdapter());
			factory.setPackagesToScan(JpaLedgerEntry.class.getPackageName());
			factory.setJpaPropertyMap(Map.of("hibernate.hbm2ddl.auto", "none"));
			return factory;
		}

		@Bean
		JpaTransactionManager transactionManager(EntityManagerFactory entityManagerFactory) {
			return new JpaTransactionManager(entityManagerFactory);
		}

		@Bean
		JpaLedgerController jpaLedgerController(EntityManagerFactory entityManagerFactory, Ledger ledger) {
			return new JpaLedgerController(SharedEntityManagerCreator.createSharedEntityManager(entityManagerFactory),
					ledger);
		}

	}

	/**
	 * Persists an entity and writes a ledger entry through JDBC, in the request's
	 * transaction.
	 */
	@RestController
	static class JpaLedgerController {

		private final EntityManager entityManager;

		private final Ledger ledger;

		JpaLedgerController(EntityManager entityManager, Ledger ledger) {
			this.entityManager = entityManager;
			this.ledger = ledger;
		}

		@PostMapping(path = "/jpa-ledger", produces = MediaType.APPLICATION_JSON_VALUE)
		@Idempotent("ledger")
		ResponseEntity<String> post(@RequestHeader("Idempotency-Key") String key, @RequestBody String body,
				@RequestHeader(name = "X-Mode", defaultValue = "") String mode) {
			JpaLedgerEntry entry = new JpaLedgerEntry(key, body);
			this.entityManager.persist(entry);
			// the insert runs now, on the transaction's connection
			this.entityManager.flush();
			this.ledger.record(key, body);
			switch (mode) {
				case "fail" -> throw new IllegalStateException("handler failed after its writes");
				case "unavailable" -> {
					return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE).body("{\"error\":\"busy\"}");
				}
				default -> {
				}
			}
			return ResponseEntity.status(HttpStatus.CREATED)
				.body("{\"key\":\"" + key + "\",\"id\":" + entry.getId() + "}");
		}

	}

}
