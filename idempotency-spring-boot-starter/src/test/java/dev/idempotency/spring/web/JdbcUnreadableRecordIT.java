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

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.test.servers.TestServers;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link AbstractUnreadableRecordIT} on a real PostgreSQL server.
 *
 * @author Idempotency contributors
 */
@Import(JdbcUnreadableRecordIT.Database.class)
@TestPropertySource(properties = { "idempotency.store.type=jdbc", "idempotency.jdbc.cleanup.enabled=false" })
class JdbcUnreadableRecordIT extends AbstractUnreadableRecordIT {

	private static final String SCHEMA = "it_unreadable_" + Long.toHexString(System.nanoTime());

	@Autowired
	HikariDataSource dataSource;

	@Override
	void replaceStoredResponse(IdempotencyKey key, byte[] response) {
		int updated = new JdbcTemplate(this.dataSource)
			.update("UPDATE idempotency_record SET response = ? WHERE id = ? AND status = 'C'", response, key.digest());
		assertThat(updated).isOne();
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Database {

		@Bean(destroyMethod = "")
		HikariDataSource dataSource() {
			return TestServers.postgres().dataSource(SCHEMA);
		}

		@Bean
		TieredHttpContractIT.SchemaDropper schemaDropper(HikariDataSource dataSource) {
			return new TieredHttpContractIT.SchemaDropper(dataSource, SCHEMA);
		}

	}

}
