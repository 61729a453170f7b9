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

package dev.idempotency.spring.autoconfigure;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.test.servers.TestServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link JdbcCleanupScheduler} as auto-configured, on a real PostgreSQL server.
 *
 * @author Idempotency contributors
 */
class JdbcCleanupSchedulerIT {

	private static final String SCHEMA = "it_cleanup_" + Long.toHexString(System.nanoTime());

	// completed rows whose record expired a minute ago
	private static final String INSERT_EXPIRED = """
			INSERT INTO idempotency_record (id, scope, idem_key, fingerprint, status, owner_token, created_at,
				lease_expires_at, expires_at, response)
			SELECT sha256(convert_to(? || n, 'UTF8')), 'tenant', ? || n, sha256('fp'), 'C', gen_random_uuid(),
				now() - INTERVAL '1 day', NULL, now() - INTERVAL '1 minute', '\\x01'::bytea
			FROM generate_series(1, ?) AS n
			""";

	private static HikariDataSource dataSource;

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
		.withUserConfiguration(DataSourceBean.class)
		.withPropertyValues("idempotency.store.type=jdbc", "idempotency.jdbc.cleanup.interval=200ms",
				"idempotency.jdbc.cleanup.batch-size=10");

	@BeforeAll
	static void server() {
		dataSource = TestServers.postgres().dataSource(SCHEMA);
	}

	@AfterAll
	static void closeServer() {
		TestServers.Postgres.dropSchema(dataSource, SCHEMA);
		dataSource.close();
	}

	@Test
	void deletesExpiredRowsPeriodicallyUntilTheContextCloses() {
		AtomicReference<JdbcCleanupScheduler> scheduler = new AtomicReference<>();
		this.runner.run((context) -> {
			scheduler.set(context.getBean(JdbcCleanupScheduler.class));
			assertThat(scheduler.get().isRunning()).isTrue();
			insertExpired("first-", 25);
			// more than one batch, so more than one statement
			await().atMost(Duration.ofMinutes(1)).until(() -> rows() == 0);
			insertExpired("second-", 5);
			await().atMost(Duration.ofMinutes(1)).until(() -> rows() == 0);
		});
		assertThat(scheduler.get().isRunning()).isFalse();
		insertExpired("after-close-", 5);
		// ten intervals: a run still scheduled would have deleted them
		await().pollDelay(Duration.ofSeconds(2)).until(() -> true);
		assertThat(rows()).isEqualTo(5);
	}

	private static void insertExpired(String prefix, int count) {
		new JdbcTemplate(dataSource).update(INSERT_EXPIRED, prefix, prefix, count);
	}

	private static int rows() {
		Integer rows = new JdbcTemplate(dataSource).queryForObject("SELECT count(*) FROM idempotency_record",
				Integer.class);
		return (rows != null) ? rows : -1;
	}

	@Configuration(proxyBeanMethods = false)
	static class DataSourceBean {

		// the shared data source outlives each context
		@Bean(destroyMethod = "")
		DataSource dataSource() {
			return dataSource;
		}

	}

}
