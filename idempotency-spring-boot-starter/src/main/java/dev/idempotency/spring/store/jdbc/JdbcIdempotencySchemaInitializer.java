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
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Map;
import java.util.Objects;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.core.api.output.MigrateResult;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.datasource.SingleConnectionDataSource;

/**
 * Creates and upgrades the table of {@link JdbcIdempotencyStore} with Flyway, from the
 * migration scripts shipped in this jar under {@value #LOCATION}.
 * <p>
 * The library keeps its own Flyway history table ({@value #DEFAULT_HISTORY_TABLE} by
 * default), so its migrations never mix with the application's, even in the same schema
 * and even when the application uses Flyway too. A schema that already holds other
 * objects is baselined at version 0, below the library's first migration, so that every
 * migration of the library still runs there. The scripts create objects only if they do
 * not exist yet, so a table created by hand from the documented DDL is adopted.
 * <p>
 * Run it before the store is used, and after the application's own Flyway migration if
 * the application has one: Flyway refuses by default to migrate a non-empty schema that
 * has no history table of its own, and the library's table would make the schema
 * non-empty. Concurrent runs from several instances are serialized by Flyway's lock.
 * <p>
 * Instances are not thread-safe while being configured; {@link #initialize()} may be
 * called any number of times. No argument may be {@code null}.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public class JdbcIdempotencySchemaInitializer {

	/**
	 * Class path location of the PostgreSQL migration scripts.
	 */
	public static final String LOCATION = "classpath:dev/idempotency/spring/store/jdbc/migration/postgresql";

	/**
	 * Default name of the library's Flyway history table.
	 */
	public static final String DEFAULT_HISTORY_TABLE = "idempotency_schema_history";

	// arbitrary, fixed: identifies the library's migration among advisory locks
	private static final long MIGRATION_LOCK_ID = 0x1de4_7e9c_0000_0000L;

	private static final Log logger = LogFactory.getLog(JdbcIdempotencySchemaInitializer.class);

	private final DataSource dataSource;

	private TableName table = TableName.parse(TableName.DEFAULT);

	private @Nullable String historyTable;

	/**
	 * Create an initializer.
	 * @param dataSource the data source of the store, never {@code null}; its user needs
	 * the privilege to create tables (and the schema, if the table name names one that
	 * does not exist)
	 */
	public JdbcIdempotencySchemaInitializer(DataSource dataSource) {
		this.dataSource = Objects.requireNonNull(dataSource, "'dataSource' must not be null");
	}

	/**
	 * Set the name of the records table, as given to
	 * {@link JdbcIdempotencyStore#setTableName(String)}. When it names a schema, the
	 * history table is kept in that schema (created if missing); otherwise in the
	 * connection's current schema.
	 * @param tableName the table name, never {@code null}
	 * @throws IllegalArgumentException if the name is not a plain, optionally
	 * schema-qualified SQL identifier
	 */
	public void setTableName(String tableName) {
		this.table = TableName.parse(tableName);
	}

	/**
	 * Set the name of the library's Flyway history table. Defaults to
	 * {@value #DEFAULT_HISTORY_TABLE} for the default records table, and to the records
	 * table's name followed by {@code _schema_history} for any other, so that two records
	 * tables in one schema keep separate histories.
	 * @param historyTable an unqualified SQL identifier, never {@code null}
	 * @throws IllegalArgumentException if the name is not a plain SQL identifier
	 */
	public void setHistoryTable(String historyTable) {
		TableName name = TableName.parse(historyTable);
		if (name.schema() != null) {
			throw new IllegalArgumentException("'historyTable' must not name a schema; it lives with the table");
		}
		this.historyTable = name.simpleName();
	}

	/**
	 * Return the name of the library's Flyway history table.
	 * @return the history table name
	 */
	public String getHistoryTable() {
		if (this.historyTable != null) {
			return this.historyTable;
		}
		return TableName.DEFAULT.equals(this.table.simpleName()) ? DEFAULT_HISTORY_TABLE
				: this.table.simpleName() + "_schema_history";
	}

	/**
	 * Apply every migration of the library that the database does not have yet. Does
	 * nothing when the schema is up to date.
	 * @throws org.flywaydb.core.api.FlywayException if the migration fails
	 */
	public void initialize() {
		// Instances that start together would race on creating and baselining the history
		// table; a session-level advisory lock lets one migrate while the others wait and
		// then find nothing to do. Flyway runs on that same connection, so start-up needs
		// one connection of the pool, never a second that a busy pool may not hand out.
		try (Connection lock = this.dataSource.getConnection()) {
			advisoryLock(lock, "SELECT pg_advisory_lock(?)");
			try {
				MigrateResult result = createFlyway(new SingleConnectionDataSource(lock, true)).migrate();
				if (result.migrationsExecuted > 0 && logger.isInfoEnabled()) {
					logger.info("Applied " + result.migrationsExecuted + " migration(s) to idempotency table '"
							+ this.table + "', now at version " + result.targetSchemaVersion);
				}
			}
			finally {
				advisoryLock(lock, "SELECT pg_advisory_unlock(?)");
			}
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Could not lock the idempotency schema migration", ex);
		}
	}

	private void advisoryLock(Connection connection, String sql) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(sql)) {
			statement.setLong(1, MIGRATION_LOCK_ID ^ getHistoryTable().hashCode());
			statement.execute();
		}
		if (!connection.getAutoCommit()) {
			connection.commit();
		}
	}

	private Flyway createFlyway(DataSource connection) {
		FluentConfiguration configuration = Flyway.configure(JdbcIdempotencySchemaInitializer.class.getClassLoader())
			.dataSource(connection)
			// Flyway's own lock at session level, on the one connection it is given: a
			// transactional lock would need a second connection
			.configuration(Map.of("flyway.postgresql.transactional.lock", "false"))
			.locations(LOCATION)
			.table(getHistoryTable())
			.placeholders(
					Map.of("table_name", this.table.qualifiedName(), "table_simple_name", this.table.simpleName()))
			// version 0 is below every migration of the library: a schema that already
			// holds the application's objects is baselined without skipping any of them
			.baselineOnMigrate(true)
			.baselineVersion("0")
			.baselineDescription("<< idempotency baseline >>")
			.cleanDisabled(true);
		String schema = this.table.schema();
		if (schema != null) {
			configuration.schemas(schema).defaultSchema(schema);
		}
		return configuration.load();
	}

}
