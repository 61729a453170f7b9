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

import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.test.AbstractIdempotencyStoreTests;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * The store contract on a real PostgreSQL server, with the table created by the shipped
 * migration.
 *
 * @author Idempotency contributors
 */
@Tag("contract")
class JdbcIdempotencyStoreIT extends AbstractIdempotencyStoreTests {

	private static PostgresTestDatabase database;

	@BeforeAll
	static void createSchema() {
		database = PostgresTestDatabase.create("idem_jdbc_contract");
		new JdbcIdempotencySchemaInitializer(database.dataSource()).initialize();
	}

	@AfterAll
	static void dropSchema() {
		database.close();
	}

	// the contract's lapse tests take a lapsed lease over at first sight; the confirmed
	// takeover, the default, is tested in JdbcIdempotencyStorePostgresIT
	@Override
	protected IdempotencyStore createStore() {
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(database.dataSource());
		store.setConfirmTakeover(false);
		return store;
	}

}
