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

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * The store contract in the transactional mode on a real PostgreSQL server (see
 * {@link AbstractJdbcTransactionalStoreIT}).
 *
 * @author Idempotency contributors
 */
@Tag("contract")
class JdbcIdempotencyStoreTransactionalIT extends AbstractJdbcTransactionalStoreIT {

	private static PostgresTestDatabase database;

	@BeforeAll
	static void createSchema() {
		database = PostgresTestDatabase.create("idem_jdbc_tx_contract");
		new JdbcIdempotencySchemaInitializer(database.dataSource()).initialize();
	}

	@AfterAll
	static void dropSchema() {
		database.close();
	}

	@Override
	protected DataSource dataSource() {
		return database.dataSource();
	}

}
