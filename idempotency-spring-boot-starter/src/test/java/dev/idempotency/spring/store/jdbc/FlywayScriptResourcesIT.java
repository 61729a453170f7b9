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
import java.sql.SQLException;
import java.util.Collection;
import java.util.List;

import javax.sql.DataSource;

import org.flywaydb.core.api.ResourceProvider;
import org.flywaydb.core.api.resource.LoadableResource;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The scripts that {@link FlywaySchemaMigration.ScriptResources} hands to Flyway in a
 * native image, where Flyway's scanner finds none: on the JVM, Flyway given them migrates
 * a new database as Flyway's own scanning does, the same migrations with the same script
 * names and checksums in the library's history, on PostgreSQL and on MariaDB.
 *
 * @author Idempotency contributors
 */
class FlywayScriptResourcesIT {

	private static final TableName TABLE = TableName.parse("idempotency_record");

	private static final String HISTORY = "idempotency_schema_history";

	@Test
	void theScriptsOfALocationAreListedByTheirNames() {
		FlywaySchemaMigration.ScriptResources postgresql = new FlywaySchemaMigration.ScriptResources(
				getClass().getClassLoader(), JdbcIdempotencySchemaInitializer.LOCATION);
		assertThat(postgresql.getResources("V", new String[] { ".sql" }).stream().map(LoadableResource::getFilename))
			.containsExactlyInAnyOrder("V1__create_idempotency_record.sql", "V2__add_takeover_at.sql",
					"V3__index_purge_after.sql");
		assertThat(postgresql.getResources("R", new String[] { ".sql" })).isEmpty();
		assertThat(postgresql.getResource("V2__add_takeover_at.sql")).isNotNull()
			.satisfies((script) -> assertThat(script.getAbsolutePath())
				.isEqualTo("dev/idempotency/spring/store/jdbc/migration/postgresql/V2__add_takeover_at.sql"));
		assertThat(postgresql.getResource("V9__none.sql")).isNull();
		FlywaySchemaMigration.ScriptResources mariadb = new FlywaySchemaMigration.ScriptResources(
				getClass().getClassLoader(), JdbcIdempotencySchemaInitializer.MARIADB_LOCATION);
		assertThat(mariadb.getResources("", new String[] { ".sql" }).stream().map(LoadableResource::getFilename))
			.containsExactly("V1__create_idempotency_record.sql");
	}

	@Test
	void flywayMigratesPostgreSqlFromTheListedScriptsAsFromItsOwnScan() throws SQLException {
		try (PostgresTestDatabase scanned = PostgresTestDatabase.create("idem_flyway_scan");
				PostgresTestDatabase listed = PostgresTestDatabase.create("idem_flyway_list")) {
			assertSameHistory(JdbcDialect.POSTGRESQL, scanned.dataSource(), listed.dataSource(), 3);
		}
	}

	@Test
	void flywayMigratesMariaDbFromTheListedScriptsAsFromItsOwnScan() throws SQLException {
		try (MariaDbTestDatabase scanned = MariaDbTestDatabase.create("idem_flyway_scan");
				MariaDbTestDatabase listed = MariaDbTestDatabase.create("idem_flyway_list")) {
			assertSameHistory(JdbcDialect.MARIADB, scanned.dataSource(), listed.dataSource(), 1);
		}
	}

	private void assertSameHistory(JdbcDialect dialect, DataSource scanned, DataSource listed, int migrations)
			throws SQLException {
		assertThat(migrate(dialect, scanned, null)).isEqualTo(migrations);
		CountingScripts scripts = new CountingScripts(new FlywaySchemaMigration.ScriptResources(
				getClass().getClassLoader(), JdbcIdempotencySchemaInitializer.location(dialect)));
		assertThat(migrate(dialect, listed, scripts)).isEqualTo(migrations);
		assertThat(scripts.listings).as("listings of scripts Flyway had from the provider").isPositive();
		List<String> history = history(listed);
		assertThat(history).hasSize(migrations).isEqualTo(history(scanned));
		assertThat(history.get(0)).startsWith("1|create idempotency record|SQL|V1__create_idempotency_record.sql|");
		// the table is there, and a second run has nothing left to do
		assertThat(new JdbcTemplate(listed).queryForObject("SELECT count(*) FROM idempotency_record", Long.class))
			.isZero();
		assertThat(migrate(dialect, listed, scripts)).isZero();
	}

	private int migrate(JdbcDialect dialect, DataSource dataSource, @Nullable ResourceProvider scripts)
			throws SQLException {
		try (Connection connection = dataSource.getConnection()) {
			return FlywaySchemaMigration.migrate(connection, dialect, TABLE, HISTORY, getClass().getClassLoader(),
					scripts);
		}
	}

	private static List<String> history(DataSource dataSource) {
		return new JdbcTemplate(dataSource).query(
				"SELECT version, description, type, script, checksum FROM " + HISTORY + " ORDER BY installed_rank",
				(row, number) -> row.getString("version") + "|" + row.getString("description") + "|"
						+ row.getString("type") + "|" + row.getString("script") + "|" + row.getString("checksum"));
	}

	// tells whether Flyway read its scripts from the given provider, not from its scanner
	private static final class CountingScripts implements ResourceProvider {

		private final ResourceProvider delegate;

		private int listings;

		CountingScripts(ResourceProvider delegate) {
			this.delegate = delegate;
		}

		@Override
		public @Nullable LoadableResource getResource(String name) {
			return this.delegate.getResource(name);
		}

		@Override
		public Collection<LoadableResource> getResources(String prefix, String[] suffixes) {
			Collection<LoadableResource> found = this.delegate.getResources(prefix, suffixes);
			if (!found.isEmpty()) {
				this.listings++;
			}
			return found;
		}

	}

}
