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

import java.util.Locale;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.spring.store.tiered.TieredIdempotencyStore;
import dev.idempotency.test.servers.TestServers;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP contract over the tiered store (Redis in front of PostgreSQL) on real servers:
 * what {@code idempotency.store.type=auto} chooses when both exist.
 *
 * @author Idempotency contributors
 */
@Import(TieredHttpContractIT.Servers.class)
@TestPropertySource(properties = { "idempotency.store.type=auto", "idempotency.redis.key-prefix=it-http-tiered:",
		"spring.data.redis.repositories.enabled=false" })
class TieredHttpContractIT extends AbstractHttpContractIT {

	private static final String SCHEMA = "it_http_tiered_" + Long.toHexString(System.nanoTime());

	@Override
	protected boolean confirmsTakeover() {
		return true;
	}

	@Test
	void usesTheTieredStore() {
		assertThat(outage().delegate()).isInstanceOf(TieredIdempotencyStore.class);
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Servers {

		@Bean(destroyMethod = "destroy")
		LettuceConnectionFactory redisConnectionFactory() {
			return TestServers.redis().connectionFactory();
		}

		@Bean(destroyMethod = "")
		HikariDataSource dataSource(Environment environment) {
			return TestServers.postgres().dataSource(schema(environment));
		}

		@Bean
		SchemaDropper schemaDropper(HikariDataSource dataSource, Environment environment) {
			return new SchemaDropper(dataSource, schema(environment));
		}

		// one schema per claim mode and encryption setting: the contexts stay cached
		// side by side
		private static String schema(Environment environment) {
			String schema = SCHEMA + "_"
					+ environment.getProperty("idempotency.tiered.claim", "durable").toLowerCase(Locale.ROOT);
			return environment.getProperty("idempotency.encryption.enabled", Boolean.class, false) ? schema + "_enc"
					: schema;
		}

	}

	/**
	 * Drops the test's schema when the context closes, then closes the pool.
	 */
	static final class SchemaDropper implements AutoCloseable {

		private final HikariDataSource dataSource;

		private final String schema;

		SchemaDropper(HikariDataSource dataSource, String schema) {
			this.dataSource = dataSource;
			this.schema = schema;
		}

		@Override
		public void close() {
			TestServers.Postgres.dropSchema(this.dataSource, this.schema);
			this.dataSource.close();
		}

	}

}
