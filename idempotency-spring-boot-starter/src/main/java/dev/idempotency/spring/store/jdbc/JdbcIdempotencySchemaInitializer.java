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

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.sql.DataSource;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.core.NestedExceptionUtils;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.jdbc.datasource.init.ScriptUtils;
import org.springframework.util.ClassUtils;

/**
 * Creates and upgrades the table of {@link JdbcIdempotencyStore} from the migration
 * scripts shipped in this jar for its database, under {@value #LOCATION} for PostgreSQL
 * and {@value #MARIADB_LOCATION} for MariaDB and MySQL: with Flyway when Flyway and its
 * module for the database ({@code flyway-database-postgresql}, {@code flyway-mysql}) are
 * on the class path, else by running the scripts itself.
 * <p>
 * With Flyway, the library keeps its own history table ({@value #DEFAULT_HISTORY_TABLE}
 * by default), so its migrations never mix with the application's, even in the same
 * schema and even when the application uses Flyway too. A schema that already holds other
 * objects is baselined at version 0, below the library's first migration, so that every
 * migration of the library still runs there. Without Flyway the scripts run at each
 * start-up, the first (which creates the table) only when the table is missing: they
 * create and change objects only if that was not done yet ({@code IF NOT EXISTS}), so
 * running them again changes nothing, and a table created by hand from the documented DDL
 * is adopted either way.
 * <p>
 * Run it before the store is used, and after the application's own Flyway migration if
 * the application has one: Flyway refuses by default to migrate a non-empty schema that
 * has no history table of its own, and the library's table would make the schema
 * non-empty. Concurrent runs from several instances are serialized by a session-level
 * advisory lock (PostgreSQL) or named lock ({@code GET_LOCK}, MariaDB and MySQL), held on
 * the one connection the migration runs on.
 * <p>
 * Instances are not thread-safe while being configured; {@link #initialize()} may be
 * called any number of times. No argument may be {@code null}.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public class JdbcIdempotencySchemaInitializer {

	/**
	 * Class path location of the PostgreSQL migration scripts: {@code V<n>__<what>.sql},
	 * applied in the order of {@code n}, with the placeholders {@code ${table_name}} (the
	 * optionally schema-qualified table name) and {@code ${table_simple_name}} (the same
	 * without its schema), in Flyway's syntax.
	 */
	public static final String LOCATION = "classpath:dev/idempotency/spring/store/jdbc/migration/postgresql";

	/**
	 * Class path location of the MariaDB and MySQL migration scripts, named and
	 * parameterized as those under {@link #LOCATION}.
	 */
	public static final String MARIADB_LOCATION = "classpath:dev/idempotency/spring/store/jdbc/migration/mariadb";

	/**
	 * Default name of the library's Flyway history table.
	 */
	public static final String DEFAULT_HISTORY_TABLE = "idempotency_schema_history";

	// arbitrary, fixed: identifies the library's migration among advisory locks
	private static final long MIGRATION_LOCK_ID = 0x1de4_7e9c_0000_0000L;

	private static final Pattern SCRIPT_NAME = Pattern.compile("V(\\d+)__.+\\.sql");

	private static final Log logger = LogFactory.getLog(JdbcIdempotencySchemaInitializer.class);

	private final DataSource dataSource;

	private TableName table = TableName.parse(TableName.DEFAULT);

	private @Nullable String historyTable;

	private @Nullable JdbcDialect dialect;

	private ClassLoader classLoader = JdbcIdempotencySchemaInitializer.class.getClassLoader();

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
	 * tables in one schema keep separate histories. Without Flyway there is no history
	 * table.
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
	 * Set the dialect of the database, instead of reading it from the connection's
	 * metadata.
	 * @param dialect the dialect, never {@code null}
	 */
	public void setDialect(JdbcDialect dialect) {
		this.dialect = Objects.requireNonNull(dialect, "'dialect' must not be null");
	}

	/**
	 * Set the class loader in which Flyway is looked for and the scripts are read: the
	 * application's, when it differs from the one that loaded this class.
	 * @param classLoader the class loader, never {@code null}
	 */
	public void setClassLoader(ClassLoader classLoader) {
		this.classLoader = Objects.requireNonNull(classLoader, "'classLoader' must not be null");
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
	 * Return the migration scripts, in the order they apply, with their placeholders
	 * replaced for the configured table: the DDL that {@link #initialize()} runs.
	 * @return the scripts' SQL, oldest first
	 */
	public List<String> getScripts() {
		JdbcDialect dialect = (this.dialect != null) ? this.dialect : JdbcDialect.POSTGRESQL;
		return scriptResources(dialect).stream().map(this::render).toList();
	}

	/**
	 * Return the migration scripts of a database, in the order they apply, with their
	 * placeholders replaced for the configured table.
	 * @param dialect the database's dialect
	 * @return the scripts' SQL, oldest first
	 */
	public List<String> getScripts(JdbcDialect dialect) {
		return scriptResources(dialect).stream().map(this::render).toList();
	}

	/**
	 * Return the class path location of a database's migration scripts.
	 * @param dialect the database's dialect
	 * @return {@link #LOCATION} for PostgreSQL, {@link #MARIADB_LOCATION} for MariaDB and
	 * MySQL
	 */
	public static String location(JdbcDialect dialect) {
		return (dialect == JdbcDialect.POSTGRESQL) ? LOCATION : MARIADB_LOCATION;
	}

	/**
	 * Apply every migration of the library that the database does not have yet. Does
	 * nothing when the schema is up to date.
	 * @throws IllegalStateException if the database cannot be reached or locked
	 * @throws RuntimeException if a migration fails (Flyway's {@code FlywayException}, or
	 * Spring's {@code ScriptException} without Flyway)
	 */
	public void initialize() {
		// Instances that start together would race on creating the table (and Flyway's
		// history); a session-level advisory lock lets one migrate while the others wait
		// and then find nothing to do. The migration runs on that same connection, so
		// start-up needs one connection of the pool, never a second that a busy pool may
		// not hand out.
		try (Connection connection = this.dataSource.getConnection()) {
			JdbcDialect dialect = (this.dialect != null) ? this.dialect : JdbcDialect.of(connection.getMetaData());
			lock(connection, dialect, true);
			try {
				migrate(connection, dialect);
			}
			finally {
				lock(connection, dialect, false);
			}
		}
		catch (SQLException ex) {
			// the first line an operator reads names the database's own reason (a refused
			// connection, say), not only the step that met it
			Throwable root = NestedExceptionUtils.getMostSpecificCause(ex);
			String reason = (root != ex && root.getMessage() != null) ? ex.getMessage() + ": " + root.getMessage()
					: ex.getMessage();
			throw new IllegalStateException("Could not reach or lock the database to create the idempotency table ("
					+ reason + "); with idempotency.jdbc.initialize-schema=never the table is"
					+ " left to the application's own migrations, and the application starts without the database", ex);
		}
	}

	// Whether Flyway and its module for the database are on the class path. Here, not in
	// FlywaySchemaMigration: loading that class needs Flyway's types.
	private static boolean flywayPresent(ClassLoader classLoader, JdbcDialect dialect) {
		// Flyway 10 and later reach each database through a module of its own
		String module = switch (dialect) {
			case POSTGRESQL -> "org.flywaydb.database.postgresql.PostgreSQLDatabaseType";
			case MARIADB -> "org.flywaydb.database.mysql.mariadb.MariaDBDatabaseType";
			case MYSQL -> "org.flywaydb.database.mysql.MySQLDatabaseType";
		};
		return ClassUtils.isPresent("org.flywaydb.core.Flyway", classLoader)
				&& ClassUtils.isPresent(module, classLoader);
	}

	private void migrate(Connection connection, JdbcDialect dialect) throws SQLException {
		boolean existed = exists(connection, dialect);
		String how;
		if (flywayPresent(this.classLoader, dialect)) {
			int executed = FlywaySchemaMigration.migrate(connection, dialect, this.table, getHistoryTable(),
					this.classLoader);
			if (executed == 0) {
				return;
			}
			how = executed + " migration(s) by Flyway, history table '" + getHistoryTable() + "'";
		}
		else {
			runScripts(connection, dialect, existed);
			if (existed) {
				logger.debug("Idempotency table '" + this.table + "' is up to date");
				return;
			}
			how = "the scripts under " + location(dialect) + " (Flyway"
					+ ((dialect == JdbcDialect.POSTGRESQL) ? "" : " with its MySQL module, flyway-mysql,")
					+ " is not on the class path)";
		}
		if (logger.isInfoEnabled()) {
			String where = (dialect == JdbcDialect.POSTGRESQL)
					? "schema '" + schemaOf(connection, dialect) + "' of database '" + connection.getCatalog() + "'"
					: dialect.displayName() + " database '" + schemaOf(connection, dialect) + "'";
			logger.info((existed ? "Migrated" : "Created") + " idempotency table '" + this.table.simpleName() + "' in "
					+ where + " with " + how);
		}
	}

	private void runScripts(Connection connection, JdbcDialect dialect, boolean existed) throws SQLException {
		String schema = this.table.schema();
		if (schema != null) {
			try (Statement statement = connection.createStatement()) {
				statement.execute("CREATE SCHEMA IF NOT EXISTS " + schema);
			}
		}
		for (Resource script : scriptResources(dialect)) {
			// the first script creates the table and its first indexes: on a table that
			// exists, it would put back an index that a later script dropped
			if (existed && version(script) == 1) {
				continue;
			}
			ScriptUtils.executeSqlScript(connection,
					new ByteArrayResource(render(script).getBytes(StandardCharsets.UTF_8), script.getDescription()));
		}
		if (!connection.getAutoCommit()) {
			connection.commit();
		}
	}

	private List<Resource> scriptResources(JdbcDialect dialect) {
		String location = location(dialect);
		try {
			Resource[] found = new PathMatchingResourcePatternResolver(this.classLoader)
				.getResources(location + "/V*__*.sql");
			return Arrays.stream(found)
				.filter((resource) -> version(resource) >= 0)
				.sorted(Comparator.comparingInt(JdbcIdempotencySchemaInitializer::version))
				.toList();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not list the idempotency migration scripts in " + location, ex);
		}
	}

	private static int version(Resource script) {
		String name = script.getFilename();
		Matcher matcher = (name != null) ? SCRIPT_NAME.matcher(name) : null;
		return (matcher != null && matcher.matches()) ? Integer.parseInt(matcher.group(1)) : -1;
	}

	private String render(Resource script) {
		try {
			return script.getContentAsString(StandardCharsets.UTF_8)
				.replace("${table_name}", this.table.qualifiedName())
				.replace("${table_simple_name}", this.table.simpleName());
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not read the idempotency migration script " + script, ex);
		}
	}

	private boolean exists(Connection connection, JdbcDialect dialect) throws SQLException {
		if (dialect == JdbcDialect.POSTGRESQL) {
			try (PreparedStatement statement = connection.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
				statement.setString(1, this.table.qualifiedName());
				try (ResultSet result = statement.executeQuery()) {
					return result.next() && result.getBoolean(1);
				}
			}
		}
		try (PreparedStatement statement = connection.prepareStatement("SELECT COUNT(*) FROM information_schema.tables"
				+ " WHERE table_schema = COALESCE(?, DATABASE()) AND table_name = ?")) {
			statement.setString(1, this.table.schema());
			statement.setString(2, this.table.simpleName());
			try (ResultSet result = statement.executeQuery()) {
				return result.next() && result.getInt(1) > 0;
			}
		}
	}

	private String schemaOf(Connection connection, JdbcDialect dialect) throws SQLException {
		String schema = this.table.schema();
		if (schema != null) {
			return schema;
		}
		try (Statement statement = connection.createStatement();
				ResultSet result = statement.executeQuery(
						(dialect == JdbcDialect.POSTGRESQL) ? "SELECT current_schema()" : "SELECT DATABASE()")) {
			return result.next() ? String.valueOf(result.getString(1)) : "?";
		}
	}

	// PostgreSQL's session-level advisory lock, or MariaDB's and MySQL's named lock, on
	// the one connection the migration runs on
	private void lock(Connection connection, JdbcDialect dialect, boolean lock) throws SQLException {
		long id = MIGRATION_LOCK_ID ^ getHistoryTable().hashCode();
		if (dialect == JdbcDialect.POSTGRESQL) {
			try (PreparedStatement statement = connection
				.prepareStatement(lock ? "SELECT pg_advisory_lock(?)" : "SELECT pg_advisory_unlock(?)")) {
				statement.setLong(1, id);
				statement.execute();
			}
		}
		else {
			// named locks are the server's: the database (the table's, else the
			// connection's) keeps two databases apart; hashed, as MySQL takes names of
			// at most 64 characters
			String name = "LEFT(SHA2(CONCAT(COALESCE(?, DATABASE(), ''), '/', ?), 256), 40)";
			try (PreparedStatement statement = connection
				.prepareStatement(lock ? "SELECT GET_LOCK(CONCAT('idempotency_migration_', " + name + "), 300)"
						: "SELECT RELEASE_LOCK(CONCAT('idempotency_migration_', " + name + "))")) {
				statement.setString(1, this.table.schema());
				statement.setString(2, Long.toHexString(id));
				try (ResultSet result = statement.executeQuery()) {
					Object answer = result.next() ? result.getObject(1) : null;
					if (lock && !(answer instanceof Number number && number.intValue() == 1)) {
						throw new SQLException("Another instance held the idempotency migration's lock for 300 s,"
								+ " or the server refused it (GET_LOCK answered " + answer + ")");
					}
				}
			}
		}
		if (!connection.getAutoCommit()) {
			connection.commit();
		}
	}

}
