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

package dev.idempotency.test.servers;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransactionRollbackException;
import java.sql.Statement;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TimeZone;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.test.servers.TestServers.MariaDb;
import dev.idempotency.test.servers.TestServers.MariaDb.Driver;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link TestServers#mariadb()}: the server answers through both drivers in a
 * database of the test's own, and each driver behaves as the JDBC store on MariaDB
 * expects: the row counts of {@code INSERT IGNORE} and of an update that changes nothing,
 * a no-wait claim ({@code SET STATEMENT innodb_lock_wait_timeout=0 FOR ...}) that fails
 * at once without ending the transaction around it, with and without server-side prepared
 * statements, the product name each driver reports, and {@code DATETIME(6)} values read
 * as written whatever the JVM's and the session's time zones.
 *
 * @author Idempotency contributors
 */
class TestServersMariaDbIT {

	private static final String NO_WAIT_CLAIM = "SET STATEMENT innodb_lock_wait_timeout=0 FOR "
			+ "INSERT IGNORE INTO claims (id, v) VALUES (?, 1)";

	private static final DateTimeFormatter SERVER_FORMAT = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSSSSS");

	private static final AtomicInteger keys = new AtomicInteger();

	private static final Map<String, HikariDataSource> pools = new LinkedHashMap<>();

	private static MariaDb server;

	private static String database;

	@BeforeAll
	static void createDatabase() throws SQLException {
		server = TestServers.mariadb();
		database = "servers_it_" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
		server.createDatabase(database);
		try (Connection connection = pool(Driver.MARIADB, Map.of()).getConnection();
				Statement statement = connection.createStatement()) {
			statement.execute("CREATE TABLE claims (id VARCHAR(64) PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB");
			statement.execute("CREATE TABLE times (id VARCHAR(64) PRIMARY KEY, at DATETIME(6) NOT NULL) ENGINE=InnoDB");
		}
	}

	@AfterAll
	static void dropDatabase() {
		pools.values().forEach(HikariDataSource::close);
		pools.clear();
		if (database != null) {
			server.dropDatabase(database);
		}
	}

	@Test
	void urlOfEitherDriverNamesTheServer() {
		MariaDb mariadb = MariaDb.of("jdbc:mariadb://db.example:3307/app?useAffectedRows=true", "u", "p", "test");
		assertThat(mariadb).isEqualTo(new MariaDb("db.example", 3307, "app", "u", "p", "test"));
		assertThat(MariaDb.of("jdbc:mysql://127.0.0.1/test", "root", "", "test"))
			.isEqualTo(new MariaDb("127.0.0.1", 3306, "test", "root", "", "test"));
		assertThat(MariaDb.of("jdbc:mariadb://[::1]:3306", "root", "", "test"))
			.isEqualTo(new MariaDb("::1", 3306, "", "root", "", "test"));
		assertThat(mariadb.jdbcUrl("mine", Driver.MARIADB)).isEqualTo("jdbc:mariadb://db.example:3307/mine");
		assertThat(mariadb.jdbcUrl("mine", Driver.MYSQL)).isEqualTo("jdbc:mysql://db.example:3307/mine");
		assertThat(MariaDb.of("jdbc:mariadb://[::1]:3306", "root", "", "test").jdbcUrl("mine", Driver.MARIADB))
			.isEqualTo("jdbc:mariadb://[::1]:3306/mine");
		assertThatExceptionOfType(IllegalStateException.class)
			.isThrownBy(() -> MariaDb.of("jdbc:postgresql://127.0.0.1/test", "root", "", "test"))
			.withMessageContaining(TestServers.MARIADB_URL)
			.withMessageContaining("service mariadb start")
			.withMessageContaining("Docker");
	}

	@Test
	void databaseNamesArePlainIdentifiers() {
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> server.dropDatabase("test; DROP DATABASE mysql"));
		assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> server.createDatabase("Mixed"));
	}

	@ParameterizedTest
	@EnumSource(Driver.class)
	void insertsIntoInnoDbTableOfItsOwnDatabase(Driver driver) throws SQLException {
		String key = key();
		try (Connection connection = pool(driver, Map.of()).getConnection()) {
			assertThat(queryString(connection, "SELECT DATABASE()")).isEqualTo(database);
			assertThat(
					queryString(connection,
							"SELECT engine FROM information_schema.tables"
									+ " WHERE table_schema = DATABASE() AND table_name = 'claims'"))
				.isEqualTo("InnoDB");
			try (PreparedStatement insert = connection.prepareStatement("INSERT INTO claims (id, v) VALUES (?, 7)")) {
				insert.setString(1, key);
				assertThat(insert.executeUpdate()).isOne();
			}
			assertThat(queryString(connection, "SELECT v FROM claims WHERE id = '" + key + "'")).isEqualTo("7");
		}
	}

	static Stream<Arguments> rowCounts() {
		// the count of an update that matches a row and changes nothing: found rows
		// unless
		// the driver asks for affected rows
		return Stream.of(Arguments.of(Driver.MARIADB, Map.of("useAffectedRows", "false"), 1),
				Arguments.of(Driver.MARIADB, Map.of("useAffectedRows", "true"), 0),
				Arguments.of(Driver.MARIADB, Map.of(), 1), Arguments.of(Driver.MYSQL, Map.of(), 1),
				Arguments.of(Driver.MYSQL, Map.of("useAffectedRows", "true"), 0));
	}

	@ParameterizedTest
	@MethodSource
	void rowCounts(Driver driver, Map<String, String> properties, int unchangedRowCount) throws SQLException {
		String key = key();
		try (Connection connection = pool(driver, properties).getConnection();
				PreparedStatement claim = connection
					.prepareStatement("INSERT IGNORE INTO claims (id, v) VALUES (?, 1)");
				PreparedStatement touch = connection.prepareStatement("UPDATE claims SET v = v WHERE id = ?")) {
			claim.setString(1, key);
			assertThat(claim.executeUpdate()).as("fresh INSERT IGNORE").isOne();
			assertThat(claim.executeUpdate()).as("duplicate INSERT IGNORE").isZero();
			assertThat((Object) claim.getWarnings()).as("the duplicate's warning").isNotNull();
			touch.setString(1, key);
			assertThat(touch.executeUpdate()).as("UPDATE that changes nothing").isEqualTo(unchangedRowCount);
			touch.setString(1, key + "-absent");
			assertThat(touch.executeUpdate()).as("UPDATE that matches nothing").isZero();
		}
	}

	static Stream<Arguments> noWaitClaims() {
		// MySQL Connector/J prepares no statement that starts with SET on the server,
		// even with useServerPrepStmts: it sends the text, as it does without it. It
		// reports the lock wait time-out as a transaction rollback (SQLState 40001, a
		// SQLTransactionRollbackException) although only the statement was undone;
		// MariaDB Connector/J passes on the server's SQLState, HY000, in an SQLException
		return Stream.of(Arguments.of(Driver.MARIADB, false, 0, "HY000"),
				Arguments.of(Driver.MARIADB, true, 1, "HY000"), Arguments.of(Driver.MYSQL, false, 0, "40001"),
				Arguments.of(Driver.MYSQL, true, 0, "40001"));
	}

	@ParameterizedTest
	@MethodSource
	void noWaitClaims(Driver driver, boolean serverPrepared, int serverPreparations, String sqlState)
			throws SQLException {
		HikariDataSource pool = pool(driver, Map.of("useServerPrepStmts", Boolean.toString(serverPrepared)));
		String held = key();
		String mine = key();
		try (Connection holder = pool.getConnection(); Connection claimer = pool.getConnection()) {
			holder.setAutoCommit(false);
			claimer.setAutoCommit(false);
			insert(holder, held);
			insert(claimer, mine);
			long prepared = serverPreparedStatements(claimer);
			try (PreparedStatement claim = claimer.prepareStatement(NO_WAIT_CLAIM)) {
				claim.setString(1, key());
				assertThat(claim.executeUpdate()).as("a free key").isOne();
				claim.setString(1, mine);
				assertThat(claim.executeUpdate()).as("the claimer's own key").isZero();
				claim.setString(1, held);
				long start = System.nanoTime();
				SQLException failure = null;
				try {
					claim.executeUpdate();
				}
				catch (SQLException ex) {
					failure = ex;
				}
				Duration waited = Duration.ofNanos(System.nanoTime() - start);
				assertThat((Throwable) failure).as("the claim of a key held by an uncommitted insert").isNotNull();
				assertThat(failure.getErrorCode()).isEqualTo(1205);
				assertThat(failure.getSQLState()).isEqualTo(sqlState);
				assertThat(failure instanceof SQLTransactionRollbackException).isEqualTo(sqlState.startsWith("40"));
				assertThat(waited).isLessThan(Duration.ofSeconds(1));
			}
			assertThat(serverPreparedStatements(claimer) - prepared).as("statements prepared on the server")
				.isEqualTo(serverPreparations);
			// the failed statement alone was undone: the claimer's transaction goes on
			assertThat(count(claimer, mine)).isOne();
			insert(claimer, mine + "-after");
			claimer.commit();
			holder.rollback();
		}
		try (Connection reader = pool.getConnection()) {
			assertThat(count(reader, mine)).isOne();
			assertThat(count(reader, mine + "-after")).isOne();
			assertThat(count(reader, held)).isZero();
		}
	}

	@ParameterizedTest
	@EnumSource(Driver.class)
	void serverPreparedStatementsAreUsedWhenAskedFor(Driver driver) throws SQLException {
		try (Connection connection = pool(driver, Map.of("useServerPrepStmts", "true")).getConnection()) {
			long prepared = serverPreparedStatements(connection);
			try (PreparedStatement claim = connection
				.prepareStatement("INSERT IGNORE INTO claims (id, v) VALUES (?, 1)")) {
				claim.setString(1, key());
				assertThat(claim.executeUpdate()).isOne();
			}
			assertThat(serverPreparedStatements(connection) - prepared).isOne();
		}
	}

	@ParameterizedTest
	@EnumSource(Driver.class)
	void productNameAndVersion(Driver driver) throws SQLException {
		try (Connection connection = pool(driver, Map.of()).getConnection()) {
			DatabaseMetaData metaData = connection.getMetaData();
			String version = queryString(connection, "SELECT VERSION()");
			assertThat(version).contains("MariaDB");
			if (driver == Driver.MARIADB) {
				assertThat(metaData.getDatabaseProductName()).isEqualTo("MariaDB");
				assertThat(metaData.getDatabaseProductVersion()).isEqualTo(version);
			}
			else {
				// the handshake's version, which MariaDB starts with 5.5.5- for MySQL
				// clients
				assertThat(metaData.getDatabaseProductName()).isEqualTo("MySQL");
				assertThat(metaData.getDatabaseProductVersion()).isEqualTo("5.5.5-" + version);
			}
		}
	}

	@ParameterizedTest
	@EnumSource(Driver.class)
	void datetimeIsReadAsWrittenWhateverTheTimeZones(Driver driver) throws SQLException {
		TimeZone jvmZone = TimeZone.getDefault();
		// an hour from UTC in winter, two in summer, and no 02:30 on 29 March 2026
		TimeZone.setDefault(TimeZone.getTimeZone("Europe/Berlin"));
		try (HikariDataSource pool = server.dataSource(database, driver, Map.of());
				Connection connection = pool.getConnection()) {
			try (Statement statement = connection.createStatement()) {
				statement.execute("SET time_zone = '+05:00'");
			}
			String written = key();
			LocalDateTime before = LocalDateTime.now(ZoneOffset.UTC);
			try (PreparedStatement insert = connection
				.prepareStatement("INSERT INTO times (id, at) VALUES (?, UTC_TIMESTAMP(6))")) {
				insert.setString(1, written);
				insert.executeUpdate();
			}
			LocalDateTime read = readTime(connection, written);
			assertThat(read).isEqualTo(LocalDateTime.parse(
					queryString(connection,
							"SELECT DATE_FORMAT(at, '%Y-%m-%d %H:%i:%s.%f') FROM times WHERE id = '" + written + "'"),
					SERVER_FORMAT));
			// the server's clock may differ a little from this one, not by a time zone
			assertThat(Duration.between(before, read).abs()).isLessThan(Duration.ofMinutes(5));
			LocalDateTime inTheGap = LocalDateTime.parse("2026-03-29T02:30:00.123456");
			String bound = key();
			try (PreparedStatement insert = connection.prepareStatement("INSERT INTO times (id, at) VALUES (?, ?)")) {
				insert.setString(1, bound);
				insert.setObject(2, inTheGap);
				insert.executeUpdate();
			}
			// MySQL Connector/J takes MariaDB, whose handshake says 5.5.5-10.x, for a
			// server
			// older than MySQL 5.6.4 and sends bound values without their fraction;
			// values
			// the server computes (UTC_TIMESTAMP(6) above) keep it
			assertThat(readTime(connection, bound))
				.isEqualTo((driver == Driver.MYSQL) ? inTheGap.truncatedTo(ChronoUnit.SECONDS) : inTheGap);
		}
		finally {
			TimeZone.setDefault(jvmZone);
		}
	}

	private static LocalDateTime readTime(Connection connection, String id) throws SQLException {
		try (PreparedStatement select = connection.prepareStatement("SELECT at FROM times WHERE id = ?")) {
			select.setString(1, id);
			try (ResultSet result = select.executeQuery()) {
				assertThat(result.next()).isTrue();
				return result.getObject(1, LocalDateTime.class);
			}
		}
	}

	private static synchronized HikariDataSource pool(Driver driver, Map<String, String> properties) {
		return pools.computeIfAbsent(driver + " " + properties,
				(name) -> server.dataSource(database, driver, properties, 4));
	}

	private static String key() {
		return "key-" + keys.incrementAndGet() + "-" + System.nanoTime();
	}

	private static void insert(Connection connection, String key) throws SQLException {
		try (PreparedStatement insert = connection.prepareStatement("INSERT INTO claims (id, v) VALUES (?, 1)")) {
			insert.setString(1, key);
			assertThat(insert.executeUpdate()).isOne();
		}
	}

	private static int count(Connection connection, String key) throws SQLException {
		try (PreparedStatement select = connection.prepareStatement("SELECT COUNT(*) FROM claims WHERE id = ?")) {
			select.setString(1, key);
			try (ResultSet result = select.executeQuery()) {
				result.next();
				return result.getInt(1);
			}
		}
	}

	private static long serverPreparedStatements(Connection connection) throws SQLException {
		return Long.parseLong(queryString(connection, "SELECT variable_value FROM information_schema.session_status"
				+ " WHERE variable_name = 'COM_STMT_PREPARE'"));
	}

	private static String queryString(Connection connection, String sql) throws SQLException {
		try (Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
			assertThat(result.next()).as(sql).isTrue();
			return result.getString(1);
		}
	}

}
