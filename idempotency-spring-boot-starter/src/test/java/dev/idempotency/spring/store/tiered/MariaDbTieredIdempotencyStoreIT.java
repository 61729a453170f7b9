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

package dev.idempotency.spring.store.tiered;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencySchemaInitializer;
import dev.idempotency.spring.store.jdbc.MariaDbTestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * {@link TieredIdempotencyStore} over a real Redis and a real MariaDB: every case of
 * {@link TieredIdempotencyStoreIT} (the store contract, a Redis that loses its data, a
 * Redis that cannot be reached) with MariaDB as the durable tier.
 *
 * @author Idempotency contributors
 */
@Tag("contract")
class MariaDbTieredIdempotencyStoreIT extends TieredIdempotencyStoreIT {

	private static MariaDbTestDatabase database;

	// after the superclass's, which connects Redis (and PostgreSQL, left unused): the
	// durable tier is MariaDB's
	@BeforeAll
	static void useMariaDb() {
		database = MariaDbTestDatabase.create("idem_tiered_maria");
		dataSource = (HikariDataSource) database.dataSource();
		new JdbcIdempotencySchemaInitializer(dataSource).initialize();
	}

	// before the superclass's, which deletes the Redis keys and disconnects
	@AfterAll
	static void dropMariaDb() {
		database.close();
	}

	@Override
	String remainingMillisSql() {
		return "SELECT CEIL(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) / 1000) FROM idempotency_record"
				+ " WHERE id = ?";
	}

	@Override
	protected int raceKeys() {
		return 250;
	}

}
