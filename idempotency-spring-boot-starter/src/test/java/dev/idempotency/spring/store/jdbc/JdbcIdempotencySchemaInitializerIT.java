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

import java.io.File;
import java.io.IOException;
import java.net.MalformedURLException;
import java.net.ServerSocket;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.test.servers.TestServers;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.api.MigrationInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.core.io.ByteArrayResource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.init.ScriptUtils;
import org.springframework.util.ClassUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.fail;

/**
 * Tests for {@link JdbcIdempotencySchemaInitializer} on a real PostgreSQL server, next to
 * an application that migrates its own tables with Flyway, and without Flyway on the
 * class path.
 *
 * @author Idempotency contributors
 */
class JdbcIdempotencySchemaInitializerIT {

	private static final Path DOCUMENTED_DDL = Path.of("..", "docs", "stores", "postgresql.md");

	// the first SQL block after the heading of the DDL to run by hand
	private static final Pattern BY_HAND = Pattern.compile("### By hand.*?```sql\\n(.*?)```", Pattern.DOTALL);

	private static final String APPLICATION_MIGRATIONS = "classpath:dev/idempotency/spring/store/jdbc/application-migration";

	private PostgresTestDatabase database;

	private JdbcTemplate jdbc;

	@BeforeEach
	void createSchema() {
		this.database = PostgresTestDatabase.create("idem_jdbc_init");
		this.jdbc = new JdbcTemplate(this.database.dataSource());
	}

	@AfterEach
	void dropSchema() {
		this.database.close();
	}

	@Test
	void createsTheTableInAnEmptySchema() {
		new JdbcIdempotencySchemaInitializer(this.database.dataSource()).initialize();
		assertThat(tables()).containsExactlyInAnyOrder("idempotency_record", "idempotency_schema_history");
		assertThat(indexes()).containsExactlyInAnyOrder("idempotency_record_pkey",
				"idempotency_record_purge_after_idx");
	}

	@Test
	void livesNextToTheApplicationsOwnFlywayHistory() {
		Flyway application = applicationFlyway(APPLICATION_MIGRATIONS);
		assertThat(application.migrate().migrationsExecuted).isEqualTo(2);

		JdbcIdempotencySchemaInitializer initializer = new JdbcIdempotencySchemaInitializer(this.database.dataSource());
		initializer.initialize();
		initializer.initialize();
		new JdbcIdempotencySchemaInitializer(this.database.dataSource()).initialize();

		assertThat(tables()).containsExactlyInAnyOrder("payment", "flyway_schema_history", "idempotency_record",
				"idempotency_schema_history");
		// the library's version 1 ran although the application is at version 2 already
		assertThat(history("idempotency_schema_history")).containsExactly("0:BASELINE", "1:SQL", "2:SQL", "3:SQL");
		assertThat(history("flyway_schema_history")).containsExactly("1:SQL", "2:SQL");
		// the application's Flyway still validates and sees nothing of the library
		Flyway again = applicationFlyway(APPLICATION_MIGRATIONS);
		again.validate();
		assertThat(again.migrate().migrationsExecuted).isZero();
		assertThat(again.info().applied()).extracting(MigrationInfo::getScript)
			.containsExactly("V1__create_payment.sql", "V2__add_payment_currency.sql");
	}

	@Test
	void mustRunAfterTheApplicationsFlywayBecauseFlywayRefusesANonEmptySchema() {
		// why the auto-configuration orders the
		// library's migration after the application's
		new JdbcIdempotencySchemaInitializer(this.database.dataSource()).initialize();
		assertThatExceptionOfType(FlywayException.class)
			.isThrownBy(() -> applicationFlyway(APPLICATION_MIGRATIONS).migrate())
			.withMessageContaining("non-empty schema");
	}

	@Test
	void adoptsATableCreatedByHandFromTheDocumentedDdlOfTheFirstVersion() {
		// the DDL of docs/stores/postgresql.md before takeover_at: migration 2 adds it
		this.jdbc.execute("""
				CREATE TABLE idempotency_record (
					created_at timestamptz NOT NULL,
					lease_expires_at timestamptz,
					expires_at timestamptz NOT NULL,
					owner_token uuid NOT NULL,
					status char(1) NOT NULL,
					id bytea NOT NULL PRIMARY KEY,
					fingerprint bytea NOT NULL,
					scope text NOT NULL,
					idem_key text NOT NULL,
					response bytea)""");
		new JdbcIdempotencySchemaInitializer(this.database.dataSource()).initialize();
		assertThat(history("idempotency_schema_history")).containsExactly("0:BASELINE", "1:SQL", "2:SQL", "3:SQL");
		assertThat(indexes()).containsExactlyInAnyOrder("idempotency_record_pkey",
				"idempotency_record_purge_after_idx");
		assertThat(
				this.jdbc.queryForList(
						"SELECT column_name FROM information_schema.columns "
								+ "WHERE table_schema = current_schema() AND table_name = 'idempotency_record'",
						String.class))
			.contains("takeover_at", "purge_after");
	}

	@Test
	void migratesOnTheOneConnectionOfAPoolOfOne() {
		// start-up on a busy machine or a small pool: the lock and Flyway share one
		// connection, so a pool that cannot hand out a second one still migrates
		HikariConfig config = new HikariConfig();
		config.setDataSource(this.database.unpooledDataSource());
		config.setMaximumPoolSize(1);
		config.setConnectionTimeout(1_000);
		config.setPoolName("idem-init-one-" + this.database.schema());
		try (HikariDataSource pool = new HikariDataSource(config)) {
			new JdbcIdempotencySchemaInitializer(pool).initialize();
			new JdbcIdempotencySchemaInitializer(pool).initialize();
			assertThat(pool.getHikariPoolMXBean().getTotalConnections()).isEqualTo(1);
		}
		assertThat(history("idempotency_schema_history")).containsExactly("1:SQL", "2:SQL", "3:SQL");
		assertThat(tables()).containsExactlyInAnyOrder("idempotency_record", "idempotency_schema_history");
	}

	@Test
	void anUnreachableDatabaseIsNamedWithItsReasonInTheFirstLine() throws IOException {
		int closedPort;
		try (ServerSocket socket = new ServerSocket(0)) {
			closedPort = socket.getLocalPort();
		}
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl("jdbc:postgresql://127.0.0.1:" + closedPort + "/test?connectTimeout=2");
		config.setUsername("postgres");
		config.setConnectionTimeout(1_000);
		config.setInitializationFailTimeout(-1);
		config.setPoolName("idem-init-unreachable");
		try (HikariDataSource pool = new HikariDataSource(config)) {
			assertThatIllegalStateException().isThrownBy(() -> new JdbcIdempotencySchemaInitializer(pool).initialize())
				.withMessageStartingWith("Could not reach or lock the database to create the idempotency table (")
				.withMessageContaining("Connection refused")
				.withMessageContaining("idempotency.jdbc.initialize-schema=never");
		}
	}

	@Test
	void concurrentInitializationsApplyTheMigrationOnce() throws Exception {
		List<Thread> threads = new ArrayList<>();
		List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
		for (int i = 0; i < 4; i++) {
			Thread thread = new Thread(() -> {
				try {
					new JdbcIdempotencySchemaInitializer(this.database.dataSource()).initialize();
				}
				catch (Throwable ex) {
					failures.add(ex);
				}
			});
			threads.add(thread);
			thread.start();
		}
		for (Thread thread : threads) {
			thread.join();
		}
		assertThat(failures).isEmpty();
		assertThat(history("idempotency_schema_history")).containsExactly("1:SQL", "2:SQL", "3:SQL");
	}

	@Test
	void withoutFlywayTheShippedScriptsCreateTheSameTableAndNoHistory() throws Exception {
		List<Thread> threads = new ArrayList<>();
		List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
		for (int i = 0; i < 4; i++) {
			Thread thread = new Thread(() -> {
				try {
					withoutFlyway(new JdbcIdempotencySchemaInitializer(this.database.dataSource())).initialize();
				}
				catch (Throwable ex) {
					failures.add(ex);
				}
			});
			threads.add(thread);
			thread.start();
		}
		for (Thread thread : threads) {
			thread.join();
		}
		assertThat(failures).isEmpty();
		assertThat(tables()).containsExactly("idempotency_record");
		assertThat(indexes()).containsExactlyInAnyOrder("idempotency_record_pkey",
				"idempotency_record_purge_after_idx");
		assertThat(columns(this.database.schema())).contains("takeover_at timestamp with time zone null");
		// adding Flyway later adopts the table and records the library's history
		new JdbcIdempotencySchemaInitializer(this.database.dataSource()).initialize();
		assertThat(history("idempotency_schema_history")).containsExactly("0:BASELINE", "1:SQL", "2:SQL", "3:SQL");
	}

	@Test
	void initializesWithoutFlywayAnywhereOnTheClassPath() throws Exception {
		// the library's classes and every dependency but Flyway's, loaded afresh: an
		// application that never added Flyway, where FilteredClassLoader hides Flyway
		// from the scripts' class loader only
		URL[] classPath = Arrays
			.stream(System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"))
				.split(File.pathSeparator))
			.filter((entry) -> !Path.of(entry).getFileName().toString().startsWith("flyway-"))
			.map(JdbcIdempotencySchemaInitializerIT::url)
			.toArray(URL[]::new);
		TestServers.Postgres server = TestServers.postgres();
		try (URLClassLoader application = new URLClassLoader(classPath, ClassLoader.getPlatformClassLoader())) {
			assertThat(ClassUtils.isPresent("org.flywaydb.core.Flyway", application)).isFalse();
			@SuppressWarnings("unchecked")
			Function<String[], String> initializer = (Function<String[], String>) application
				.loadClass(InitializeWithoutFlyway.class.getName())
				.getConstructor()
				.newInstance();
			assertThat(initializer
				.apply(new String[] { server.jdbcUrl(), server.username(), server.password(), this.database.schema() }))
				.isEqualTo(JdbcIdempotencySchemaInitializer.class.getName() + " from the application's class loader");
		}
		assertThat(tables()).containsExactly("idempotency_record");
		assertThat(indexes()).containsExactlyInAnyOrder("idempotency_record_pkey",
				"idempotency_record_purge_after_idx");
	}

	private static URL url(String entry) {
		try {
			return Path.of(entry).toUri().toURL();
		}
		catch (MalformedURLException ex) {
			throw new IllegalStateException(ex);
		}
	}

	@Test
	void upgradesATableOfTheSecondVersionWithItsRowsWithoutFlywayAndKeepsItThatWay() throws SQLException {
		List<String> scripts = new JdbcIdempotencySchemaInitializer(this.database.dataSource()).getScripts();
		try (Connection connection = this.database.dataSource().getConnection()) {
			for (String script : scripts.subList(0, 2)) {
				ScriptUtils.executeSqlScript(connection,
						new ByteArrayResource(script.getBytes(StandardCharsets.UTF_8)));
			}
		}
		insertRowsOfTheSecondVersion();

		for (int i = 0; i < 3; i++) {
			// the first script, run again, would put the index on expires_at back
			withoutFlyway(new JdbcIdempotencySchemaInitializer(this.database.dataSource())).initialize();
			assertThat(indexes()).containsExactlyInAnyOrder("idempotency_record_pkey",
					"idempotency_record_purge_after_idx");
		}
		assertRowsOfTheSecondVersionCleanedUp();
	}

	// a completed record that expired a minute ago and one that lives for another hour
	private void insertRowsOfTheSecondVersion() {
		this.jdbc.update("""
				INSERT INTO idempotency_record (id, scope, idem_key, fingerprint, status, owner_token, created_at,
					lease_expires_at, expires_at, response)
				SELECT sha256(convert_to(k, 'UTF8')), 'tenant', k, sha256('fp'), 'C', gen_random_uuid(),
					now() - INTERVAL '1 day', NULL, now() + e, '\\x01'::bytea
				FROM (VALUES ('expired', INTERVAL '-1 minute'), ('live', INTERVAL '1 hour')) AS r (k, e)""");
	}

	private void assertRowsOfTheSecondVersionCleanedUp() {
		assertThat(this.jdbc.queryForObject("SELECT count(*) FROM idempotency_record WHERE purge_after IS NULL",
				Integer.class))
			.isEqualTo(2);
		assertThat(new JdbcIdempotencyCleaner(this.database.dataSource()).purgeExpired()).isOne();
		assertThat(this.jdbc.queryForList("SELECT idem_key FROM idempotency_record WHERE purge_after = expires_at",
				String.class))
			.containsExactly("live");
	}

	@Test
	void theDocumentedDdlIsTheShippedDdl() throws IOException {
		withoutFlyway(new JdbcIdempotencySchemaInitializer(this.database.dataSource())).initialize();
		try (PostgresTestDatabase byHand = PostgresTestDatabase.create("idem_jdbc_doc")) {
			JdbcTemplate documented = new JdbcTemplate(byHand.dataSource());
			for (String statement : documentedDdl().split(";")) {
				if (!statement.isBlank()) {
					documented.execute(statement);
				}
			}
			assertThat(columns(byHand.schema())).isEqualTo(columns(this.database.schema())).isNotEmpty();
			assertThat(constraints(byHand.schema())).isEqualTo(constraints(this.database.schema()))
				.hasSizeGreaterThanOrEqualTo(4);
			assertThat(indexDefinitions(byHand.schema())).isEqualTo(indexDefinitions(this.database.schema()))
				.hasSize(2);
		}
	}

	private static JdbcIdempotencySchemaInitializer withoutFlyway(JdbcIdempotencySchemaInitializer initializer) {
		initializer.setClassLoader(new FilteredClassLoader("org.flywaydb"));
		return initializer;
	}

	private static String documentedDdl() throws IOException {
		if (!Files.isReadable(DOCUMENTED_DDL)) {
			fail("Cannot read " + DOCUMENTED_DDL.toAbsolutePath() + ": run the tests from the module's directory");
		}
		Matcher matcher = BY_HAND.matcher(Files.readString(DOCUMENTED_DDL, StandardCharsets.UTF_8));
		if (!matcher.find()) {
			fail("No SQL block under '### By hand' in " + DOCUMENTED_DDL);
		}
		return matcher.group(1);
	}

	private List<String> columns(String schema) {
		return this.jdbc.queryForList("SELECT column_name || ' ' || data_type || ' '"
				+ " || CASE WHEN is_nullable = 'YES' THEN 'null' ELSE 'not null' END"
				+ " FROM information_schema.columns WHERE table_schema = ? AND table_name = 'idempotency_record'"
				+ " ORDER BY ordinal_position", String.class, schema);
	}

	private List<String> constraints(String schema) {
		return this.jdbc.queryForList(
				"SELECT conname || ' ' || pg_get_constraintdef(c.oid) FROM pg_constraint c"
						+ " JOIN pg_namespace n ON n.oid = c.connamespace WHERE n.nspname = ? ORDER BY conname",
				String.class, schema);
	}

	private List<String> indexDefinitions(String schema) {
		return this.jdbc
			.queryForList("SELECT replace(indexdef, schemaname || '.', '') FROM pg_indexes WHERE schemaname = ?"
					+ " ORDER BY indexname", String.class, schema);
	}

	private Flyway applicationFlyway(String location) {
		return Flyway.configure(getClass().getClassLoader())
			.dataSource(this.database.dataSource())
			.locations(location)
			.load();
	}

	private List<String> tables() {
		return this.jdbc.queryForList(
				"SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()", String.class);
	}

	private List<String> indexes() {
		return this.jdbc.queryForList("SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
				+ " AND tablename = 'idempotency_record'", String.class);
	}

	private List<String> history(String table) {
		return this.jdbc.queryForList(
				"SELECT coalesce(version, '-') || ':' || type FROM " + table + " WHERE success ORDER BY installed_rank",
				String.class);
	}

	@Test
	void upgradesATableOfTheSecondVersionWithItsRowsByFlyway() {
		// the library's history at version 2, as the release before purge_after left it
		Flyway.configure(getClass().getClassLoader())
			.dataSource(this.database.dataSource())
			.locations(JdbcIdempotencySchemaInitializer.LOCATION)
			.table(JdbcIdempotencySchemaInitializer.DEFAULT_HISTORY_TABLE)
			.placeholders(Map.of("table_name", "idempotency_record", "table_simple_name", "idempotency_record"))
			.target("2")
			.load()
			.migrate();
		assertThat(indexes()).containsExactlyInAnyOrder("idempotency_record_pkey", "idempotency_record_expires_at_idx");
		insertRowsOfTheSecondVersion();

		new JdbcIdempotencySchemaInitializer(this.database.dataSource()).initialize();

		assertThat(history("idempotency_schema_history")).containsExactly("1:SQL", "2:SQL", "3:SQL");
		assertThat(indexes()).containsExactlyInAnyOrder("idempotency_record_pkey",
				"idempotency_record_purge_after_idx");
		assertRowsOfTheSecondVersionCleanedUp();
	}

	/**
	 * Runs the initializer in the class loader that loaded it.
	 */
	public static final class InitializeWithoutFlyway implements Function<String[], String> {

		@Override
		public String apply(String[] server) {
			PGSimpleDataSource dataSource = new PGSimpleDataSource();
			dataSource.setURL(server[0]);
			dataSource.setUser(server[1]);
			dataSource.setPassword(server[2]);
			dataSource.setCurrentSchema(server[3]);
			new JdbcIdempotencySchemaInitializer(dataSource).initialize();
			ClassLoader loader = JdbcIdempotencySchemaInitializer.class.getClassLoader();
			return JdbcIdempotencySchemaInitializer.class.getName()
					+ ((loader == getClass().getClassLoader()) ? " from the application's class loader" : " elsewhere");
		}

	}

}
