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

import java.sql.Connection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import javax.sql.DataSource;

import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.spring.store.jdbc.MariaDbTestDatabase.Driver;
import dev.idempotency.test.AbstractIdempotencyStoreTests;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestInstance.Lifecycle;

/**
 * The store contract on a real MariaDB server, with the table created by the shipped
 * migration, under the connection options an application may have chosen: both drivers
 * (MariaDB Connector/J and MySQL Connector/J), affected rows counted as changed rows and
 * as found rows, auto-commit on and off, InnoDB's REPEATABLE READ and READ COMMITTED, and
 * claims guarded against uncommitted ones (the transactional mode's) or not. Each variant
 * runs the whole kit, races included; the compatibility lane runs the first only (the
 * others are tagged {@code variant}).
 *
 * @author Idempotency contributors
 */
@Tag("contract")
@TestInstance(Lifecycle.PER_CLASS)
class MariaDbIdempotencyStoreIT {

	// a quarter of the contract's default per variant: four variants race 64 threads on
	// a thousand keys between them, each claim committed with InnoDB's flush to disk
	private static final int RACE_KEYS = 250;

	private MariaDbTestDatabase database;

	// one pool per variant, shared by its cases
	private final Map<String, DataSource> pools = new ConcurrentHashMap<>();

	@BeforeAll
	void createDatabase() {
		this.database = MariaDbTestDatabase.create("idem_maria_contract");
		new JdbcIdempotencySchemaInitializer(this.database.dataSource()).initialize();
	}

	@AfterAll
	void dropDatabase() {
		this.database.close();
	}

	// the contract's lapse tests take a lapsed lease over at first sight; the confirmed
	// takeover, the default, is tested in MariaDbIdempotencyStoreBehaviourIT
	private IdempotencyStore newStore(String variant, Supplier<DataSource> dataSource, boolean guarded) {
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(
				this.pools.computeIfAbsent(variant, (name) -> dataSource.get()));
		store.setConfirmTakeover(false);
		store.setTransactionalClaims(guarded);
		return store;
	}

	/**
	 * MariaDB Connector/J with its defaults: found rows counted, auto-commit on,
	 * REPEATABLE READ.
	 */
	@Nested
	class MariaDbDriverDefaults extends AbstractIdempotencyStoreTests {

		@Override
		protected IdempotencyStore createStore() {
			return newStore("mariadb",
					() -> MariaDbIdempotencyStoreIT.this.database.dataSource(Driver.MARIADB, Map.of()), false);
		}

		@Override
		protected int raceKeys() {
			return RACE_KEYS;
		}

	}

	/**
	 * MySQL Connector/J with its defaults, whose found-rows count made an untouched
	 * duplicate of {@code INSERT ... ON DUPLICATE KEY UPDATE} look like a fresh insert.
	 */
	@Nested
	@Tag("variant")
	class MySqlDriverDefaults extends AbstractIdempotencyStoreTests {

		@Override
		protected IdempotencyStore createStore() {
			return newStore("mysql", () -> MariaDbIdempotencyStoreIT.this.database.dataSource(Driver.MYSQL, Map.of()),
					false);
		}

		@Override
		protected int raceKeys() {
			return RACE_KEYS;
		}

	}

	/**
	 * MariaDB Connector/J counting changed rows, auto-commit off at REPEATABLE READ,
	 * every claim guarded as in the transactional mode.
	 */
	@Nested
	@Tag("variant")
	class MariaDbDriverAffectedRowsManualCommitGuarded extends AbstractIdempotencyStoreTests {

		@Override
		protected IdempotencyStore createStore() {
			return newStore("mariadb-affected-rows",
					() -> new ConnectionSettingsDataSource(MariaDbIdempotencyStoreIT.this.database
						.dataSource(Driver.MARIADB, Map.of("useAffectedRows", "true")), false,
							Connection.TRANSACTION_REPEATABLE_READ),
					true);
		}

		@Override
		protected int raceKeys() {
			return RACE_KEYS;
		}

	}

	/**
	 * MySQL Connector/J counting changed rows, auto-commit off at READ COMMITTED, every
	 * claim guarded as in the transactional mode (whose statements Connector/J must
	 * accept as what they are: a guarded read is a query).
	 */
	@Nested
	@Tag("variant")
	class MySqlDriverAffectedRowsManualCommitReadCommittedGuarded extends AbstractIdempotencyStoreTests {

		@Override
		protected IdempotencyStore createStore() {
			return newStore("mysql-affected-rows",
					() -> new ConnectionSettingsDataSource(MariaDbIdempotencyStoreIT.this.database
						.dataSource(Driver.MYSQL, Map.of("useAffectedRows", "true")), false,
							Connection.TRANSACTION_READ_COMMITTED),
					true);
		}

		@Override
		protected int raceKeys() {
			return RACE_KEYS;
		}

	}

}
