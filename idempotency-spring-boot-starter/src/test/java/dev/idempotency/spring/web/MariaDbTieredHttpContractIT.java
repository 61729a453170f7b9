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

import java.util.Map;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.spring.store.jdbc.JdbcDialect;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spring.store.jdbc.MariaDbTestDatabase;
import dev.idempotency.spring.store.jdbc.MariaDbTestDatabase.Driver;
import dev.idempotency.spring.store.tiered.TieredIdempotencyStore;
import dev.idempotency.test.servers.TestServers;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP contract over the tiered store with Redis in front of MariaDB, on real
 * servers: what {@code idempotency.store.type=auto} chooses when both exist, reached
 * through MySQL Connector/J with its default found-rows count.
 *
 * @author Idempotency contributors
 */
@Import(MariaDbTieredHttpContractIT.Servers.class)
@TestPropertySource(properties = { "idempotency.store.type=auto", "idempotency.redis.key-prefix=it-http-tiered-maria:",
		"spring.data.redis.repositories.enabled=false" })
class MariaDbTieredHttpContractIT extends AbstractHttpContractIT {

	@Override
	protected boolean confirmsTakeover() {
		return true;
	}

	@Test
	void usesTheTieredStoreOnMariaDb() {
		assertThat(outage().delegate()).isInstanceOfSatisfying(TieredIdempotencyStore.class,
				(tiered) -> assertThat(tiered.getDurableTier()).isInstanceOfSatisfying(JdbcIdempotencyStore.class,
						(jdbc) -> assertThat(jdbc.getDialect()).isEqualTo(JdbcDialect.MARIADB)));
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Servers {

		@Bean(destroyMethod = "destroy")
		LettuceConnectionFactory redisConnectionFactory() {
			return TestServers.redis().connectionFactory();
		}

		@Bean
		MariaDbTestDatabase mariaDbTestDatabase() {
			return MariaDbTestDatabase.create("it_http_tiered");
		}

		// closed with its database
		@Bean(destroyMethod = "")
		HikariDataSource dataSource(MariaDbTestDatabase database) {
			return database.dataSource(Driver.MYSQL, Map.of());
		}

	}

}
