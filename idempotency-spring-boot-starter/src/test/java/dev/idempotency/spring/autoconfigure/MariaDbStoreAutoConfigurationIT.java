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

import java.util.Map;

import javax.sql.DataSource;

import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.spring.store.jdbc.JdbcDialect;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spring.store.jdbc.MariaDbTestDatabase;
import dev.idempotency.spring.store.jdbc.MariaDbTestDatabase.Driver;
import dev.idempotency.spring.store.tiered.TieredIdempotencyStore;
import dev.idempotency.test.servers.TestServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestInstance.Lifecycle;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Store selection on a real MariaDB server: {@code auto} picks the durable tier on
 * MariaDB as on PostgreSQL, creates its table there, and the start-up line names the
 * database; both drivers are told MariaDB from their metadata.
 *
 * @author Idempotency contributors
 */
@ExtendWith(OutputCaptureExtension.class)
@TestInstance(Lifecycle.PER_CLASS)
class MariaDbStoreAutoConfigurationIT {

	private MariaDbTestDatabase database;

	private LettuceConnectionFactory redis;

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
		.withPropertyValues("idempotency.jdbc.cleanup.interval=1h", "idempotency.redis.key-prefix=it-maria-config:");

	@BeforeAll
	void start() {
		this.database = MariaDbTestDatabase.create("it_maria_config");
		this.redis = TestServers.redis().connectionFactory();
	}

	@AfterAll
	void stop() {
		if (this.redis != null) {
			this.redis.destroy();
		}
		if (this.database != null) {
			this.database.close();
		}
	}

	@Test
	void autoWithMariaDbAlonePicksTheJdbcStoreAndCreatesItsTable(CapturedOutput output) {
		DataSource dataSource = this.database.dataSource();
		this.runner.withBean(DataSource.class, () -> dataSource, (definition) -> definition.setDestroyMethodName(""))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(IdempotencyStore.class)).isInstanceOfSatisfying(JdbcIdempotencyStore.class,
						(store) -> assertThat(store.getDialect()).isEqualTo(JdbcDialect.MARIADB));
				assertThat(new JdbcTemplate(dataSource).queryForObject(
						"SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ?",
						Integer.class, this.database.database(), "idempotency_record"))
					.isOne();
			});
		assertThat(output).contains("Idempotency store: jdbc, MariaDB (MariaDB 10.")
			.contains("(idempotency.store.type=auto: a MariaDB DataSource present, no Redis)");
	}

	@Test
	void autoWithRedisAndMariaDbThroughMySqlConnectorPicksTheTieredStore(CapturedOutput output) {
		DataSource dataSource = this.database.dataSource(Driver.MYSQL, Map.of());
		LettuceConnectionFactory redis = this.redis;
		this.runner.withBean(DataSource.class, () -> dataSource, (definition) -> definition.setDestroyMethodName(""))
			.withBean(RedisConnectionFactory.class, () -> redis, (definition) -> definition.setDestroyMethodName(""))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(IdempotencyStore.class)).isInstanceOfSatisfying(TieredIdempotencyStore.class,
						(tiered) -> assertThat(((JdbcIdempotencyStore) tiered.getDurableTier()).getDialect())
							.isEqualTo(JdbcDialect.MARIADB));
			});
		// MySQL Connector/J names every server MySQL; the version tells MariaDB
		assertThat(output).contains("Idempotency store: tiered, Redis in front of MariaDB (MySQL ")
			.contains("(idempotency.store.type=auto: Redis and a MariaDB DataSource present)");
	}

	@Test
	void transactionalPolicyOnMariaDbGetsTransactionalClaims() {
		DataSource dataSource = this.database.dataSource();
		this.runner.withBean(DataSource.class, () -> dataSource, (definition) -> definition.setDestroyMethodName(""))
			.withPropertyValues("idempotency.store.type=jdbc")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				JdbcIdempotencyStore store = context.getBean(JdbcIdempotencyStore.class);
				assertThat(store.getDialect()).isEqualTo(JdbcDialect.MARIADB);
			});
	}

}
