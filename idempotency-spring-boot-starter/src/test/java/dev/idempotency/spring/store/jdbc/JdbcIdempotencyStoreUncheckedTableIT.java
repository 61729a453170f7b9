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

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store contract on a real PostgreSQL server, on the shipped table without its three
 * {@code CHECK} constraints, as docs/stores/postgresql.md allows where the database's CPU
 * is what runs out: the store keeps every rule they state by itself.
 *
 * @author Idempotency contributors
 */
@Tag("contract")
@Tag("variant")
class JdbcIdempotencyStoreUncheckedTableIT extends AbstractIdempotencyStoreTests {

	private static PostgresTestDatabase database;

	@BeforeAll
	static void createSchemaWithoutCheckConstraints() {
		database = PostgresTestDatabase.create("idem_jdbc_unchecked");
		new JdbcIdempotencySchemaInitializer(database.dataSource()).initialize();
		JdbcTemplate jdbc = new JdbcTemplate(database.dataSource());
		jdbc.execute("ALTER TABLE idempotency_record DROP CONSTRAINT idempotency_record_id_check,"
				+ " DROP CONSTRAINT idempotency_record_fingerprint_check,"
				+ " DROP CONSTRAINT idempotency_record_status_check");
		assertThat(jdbc.queryForObject("SELECT count(*) FROM pg_constraint"
				+ " WHERE conrelid = 'idempotency_record'::regclass AND contype = 'c'", Integer.class))
			.isZero();
	}

	@AfterAll
	static void dropSchema() {
		database.close();
	}

	@Override
	protected IdempotencyStore createStore() {
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(database.dataSource());
		store.setConfirmTakeover(false);
		return store;
	}

	@Override
	protected int raceKeys() {
		// the primary key decides a race, not the constraints, and JdbcIdempotencyStoreIT
		// races the same statements with the kit's full number of keys
		return 250;
	}

}
