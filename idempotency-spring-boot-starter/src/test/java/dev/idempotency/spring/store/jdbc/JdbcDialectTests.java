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

package dev.idempotency.spring.store.jdbc;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link JdbcDialect}: the database told from what each driver's metadata
 * reports.
 *
 * @author Idempotency contributors
 */
class JdbcDialectTests {

	@Test
	void postgreSqlIsToldByItsName() {
		assertThat(JdbcDialect.of("PostgreSQL", "15.19")).isEqualTo(JdbcDialect.POSTGRESQL);
	}

	@Test
	void mariaDbIsToldByItsNameOrByItsVersionThroughMySqlConnector() {
		assertThat(JdbcDialect.of("MariaDB", "10.11.19-MariaDB-0+deb12u1")).isEqualTo(JdbcDialect.MARIADB);
		assertThat(JdbcDialect.of("MySQL", "10.11.19-MariaDB-0+deb12u1")).isEqualTo(JdbcDialect.MARIADB);
		assertThat(JdbcDialect.of("MySQL", "5.5.5-10.11.19-MariaDB")).isEqualTo(JdbcDialect.MARIADB);
	}

	@Test
	void mySqlServerIsMySqlAndRefusesTransactionalClaims() {
		assertThat(JdbcDialect.of("MySQL", "8.0.36")).isEqualTo(JdbcDialect.MYSQL);
		assertThat(JdbcDialect.MYSQL.supportsTransactionalClaims()).isFalse();
		assertThat(JdbcDialect.MARIADB.supportsTransactionalClaims()).isTrue();
		assertThat(JdbcDialect.POSTGRESQL.supportsTransactionalClaims()).isTrue();
	}

	@Test
	void otherDatabasesHaveNoDialect() {
		assertThat(JdbcDialect.of("H2", "2.4.240")).isNull();
		assertThat(JdbcDialect.of("Microsoft SQL Server", "16.0")).isNull();
		assertThat(JdbcDialect.of(null, null)).isNull();
	}

}
