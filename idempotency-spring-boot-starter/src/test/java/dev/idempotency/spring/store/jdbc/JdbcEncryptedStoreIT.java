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

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.spring.store.AbstractEncryptedStoreIT;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Encryption at rest over {@link JdbcIdempotencyStore} on a real PostgreSQL server: the
 * {@code response} column, read with SQL, holds no clear text.
 *
 * @author Idempotency contributors
 */
class JdbcEncryptedStoreIT extends AbstractEncryptedStoreIT {

	private static PostgresTestDatabase database;

	private static JdbcIdempotencyStore store;

	@BeforeAll
	static void createSchema() {
		database = PostgresTestDatabase.create("idem_jdbc_encrypted");
		new JdbcIdempotencySchemaInitializer(database.dataSource()).initialize();
		store = new JdbcIdempotencyStore(database.dataSource());
	}

	@AfterAll
	static void dropSchema() {
		database.close();
	}

	@Override
	protected IdempotencyStore rawStore() {
		return store;
	}

	@Override
	protected byte[] rawValue(IdempotencyKey key) {
		byte[] value = jdbc().queryForObject(
				"SELECT response FROM " + JdbcIdempotencyStore.DEFAULT_TABLE_NAME + " WHERE scope = ? AND idem_key = ?",
				byte[].class, key.scope(), key.key());
		assertThat(value).isNotNull();
		return value;
	}

	@Override
	protected void replaceRawValue(IdempotencyKey key, byte[] value) {
		int updated = jdbc().update("UPDATE " + JdbcIdempotencyStore.DEFAULT_TABLE_NAME
				+ " SET response = ? WHERE scope = ? AND idem_key = ?", value, key.scope(), key.key());
		assertThat(updated).isOne();
	}

	private static JdbcTemplate jdbc() {
		return new JdbcTemplate(database.dataSource());
	}

}
