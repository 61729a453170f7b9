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
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.IdempotencyStatus;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.spring.store.compat.RecordFixtures;
import dev.idempotency.spring.store.compat.RecordFixtures.Record;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.postgresql.ds.PGSimpleDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Rows of every fixture version (see {@link RecordFixtures} and
 * {@code docs/upgrading.md}), inserted into a real PostgreSQL table created by the
 * shipped migration with a raw {@code INSERT}, are read by the current
 * {@link JdbcIdempotencyStore}; and the current store writes exactly the rows of
 * {@link RecordFixtures#WRITTEN_VERSION}, into a table with exactly its columns.
 * <p>
 * The store takes every instant from PostgreSQL's {@code now()}. Its connections here
 * search the test's schema before {@code pg_catalog}, and the schema holds a
 * {@code now()} of its own that reads a one-row clock table, so that the tests set the
 * database's time and the time columns can be compared exactly.
 *
 * @author Idempotency contributors
 */
class JdbcRecordCompatibilityIT {

	private static final String TABLE = "idempotency_record";

	private static final String COLUMNS = "jdbc/" + TABLE + ".columns";

	private static final String NULL = "\\N";

	private static PostgresTestDatabase database;

	private static PGSimpleDataSource clocked;

	@BeforeAll
	static void createTableAndClock() throws SQLException {
		database = PostgresTestDatabase.create("idem_compat");
		new JdbcIdempotencySchemaInitializer(database.dataSource()).initialize();
		String schema = database.schema();
		execute(database.dataSource(), "CREATE TABLE " + schema + ".compat_clock (t timestamptz NOT NULL)",
				"INSERT INTO " + schema + ".compat_clock VALUES (now())",
				"CREATE FUNCTION " + schema + ".now() RETURNS timestamptz LANGUAGE sql STABLE AS $$ SELECT t FROM "
						+ schema + ".compat_clock $$");
		clocked = database.unpooledDataSource();
		clocked.setCurrentSchema(schema + ",pg_catalog");
	}

	@AfterAll
	static void dropSchema() {
		database.close();
	}

	@BeforeEach
	void emptyTable() throws SQLException {
		execute(database.dataSource(), "DELETE FROM " + TABLE);
	}

	static List<String> versions() {
		return RecordFixtures.versions();
	}

	@Test
	void currentStoreWritesTheFixtureTableAndRows() throws SQLException {
		assertThat(JdbcIdempotencyStore.DEFAULT_TABLE_NAME).isEqualTo(TABLE);
		JdbcIdempotencyStore store = newStore();
		Map<String, Map<String, String>> rows = new LinkedHashMap<>();
		for (Record record : Record.values()) {
			setClock(RecordFixtures.CLAIMED_AT);
			assertThat(store.acquire(record.key(), RecordFixtures.FINGERPRINT, RecordFixtures.OWNER,
					RecordFixtures.LEASE, RecordFixtures.TTL))
				.isInstanceOf(AcquireResult.Acquired.class);
			if (record.completed()) {
				setClock(RecordFixtures.COMPLETED_AT);
				assertThat(store.complete(record.key(), RecordFixtures.OWNER, record.response(), RecordFixtures.TTL))
					.isTrue();
			}
			rows.put(record.fileName(), readRow(record.key()));
		}
		String columns = columns();
		if (RecordFixtures.writing()) {
			writeFixtures(columns, rows);
			return;
		}
		String version = RecordFixtures.WRITTEN_VERSION;
		assertThat(columns).as(RecordFixtures.FORMAT_CHANGED + " (columns of fixture %s/%s)", version, COLUMNS)
			.isEqualTo(withoutComments(RecordFixtures.read(version, COLUMNS)));
		for (Record record : Record.values()) {
			assertThat(rows.get(record.fileName()))
				.as(RecordFixtures.FORMAT_CHANGED + " (row of fixture %s/%s)", version, rowFile(record))
				.containsExactlyEntriesOf(readFixtureRow(version, record));
		}
	}

	@ParameterizedTest
	@MethodSource("versions")
	void completedRowsAreReplayedWithTheirStatusHeadersBodyAndExpiry(String version) throws SQLException {
		insertFixtureRows(version);
		JdbcIdempotencyStore store = newStore();
		Instant now = RecordFixtures.COMPLETED_AT.plusSeconds(60);
		setClock(now);
		Duration remaining = Duration.between(now, RecordFixtures.completedExpiry());
		for (Record record : RecordFixtures.completed()) {
			Map<String, String> before = readRow(record.key());
			assertThat(store.acquire(record.key(), RecordFixtures.FINGERPRINT, OwnerToken.generate(),
					RecordFixtures.LEASE, RecordFixtures.TTL))
				.as(record.fileName())
				.isInstanceOfSatisfying(AcquireResult.Replay.class, (replay) -> {
					RecordFixtures.assertSameResponse(replay.response(), record);
					assertThat(replay.expiresAt()).isEqualTo(RecordFixtures.completedExpiry());
					assertThat(replay.timeToLive()).isEqualTo(remaining);
				});
			IdempotencyRecord found = store.find(record.key()).orElseThrow();
			assertThat(found.status()).isEqualTo(IdempotencyStatus.COMPLETED);
			assertThat(found.key()).isEqualTo(record.key());
			assertThat(found.fingerprint()).isEqualTo(RecordFixtures.FINGERPRINT);
			assertThat(found.owner()).isEqualTo(RecordFixtures.OWNER);
			assertThat(found.createdAt()).isEqualTo(RecordFixtures.CLAIMED_AT);
			assertThat(found.leaseExpiresAt()).isNull();
			assertThat(found.expiresAt()).isEqualTo(RecordFixtures.completedExpiry());
			assertThat(found.timeToLive()).isEqualTo(remaining);
			RecordFixtures.assertSameResponse(found.response(), record);
			assertThat(store.acquire(record.key(), RecordFixtures.otherFingerprint(), OwnerToken.generate(),
					RecordFixtures.LEASE, RecordFixtures.TTL))
				.isInstanceOf(AcquireResult.Mismatch.class);
			// reads change nothing
			assertThat(readRow(record.key())).isEqualTo(before);
		}
	}

	@ParameterizedTest
	@MethodSource("versions")
	void inFlightRowIsSeenInFlightAndItsOwnerCompletesIt(String version) throws SQLException {
		insertFixtureRows(version);
		JdbcIdempotencyStore store = newStore();
		IdempotencyKey key = Record.PROCESSING.key();
		setClock(RecordFixtures.CLAIMED_AT.plusSeconds(10));
		IdempotencyRecord found = store.find(key).orElseThrow();
		assertThat(found.status()).isEqualTo(IdempotencyStatus.PROCESSING);
		assertThat(found.fingerprint()).isEqualTo(RecordFixtures.FINGERPRINT);
		assertThat(found.owner()).isEqualTo(RecordFixtures.OWNER);
		assertThat(found.createdAt()).isEqualTo(RecordFixtures.CLAIMED_AT);
		assertThat(found.leaseExpiresAt()).isEqualTo(RecordFixtures.CLAIMED_AT.plus(RecordFixtures.LEASE));
		assertThat(found.expiresAt()).isEqualTo(RecordFixtures.CLAIMED_AT.plus(RecordFixtures.TTL));
		assertThat(found.response()).isNull();
		assertThat(store.acquire(key, RecordFixtures.FINGERPRINT, OwnerToken.generate(), RecordFixtures.LEASE,
				RecordFixtures.TTL))
			.isInstanceOfSatisfying(AcquireResult.InProgress.class,
					(inProgress) -> assertThat(inProgress.retryAfter()).isEqualTo(Duration.ofSeconds(20)));
		assertThat(store.extend(key, RecordFixtures.OWNER, RecordFixtures.LEASE)).isTrue();
		StoredResponse response = Record.COMPLETED_WITH_HEADERS.response();
		assertThat(store.complete(key, OwnerToken.generate(), response, RecordFixtures.TTL)).isFalse();
		assertThat(store.complete(key, RecordFixtures.OWNER, response, RecordFixtures.TTL)).isTrue();
		assertThat(store.acquire(key, RecordFixtures.FINGERPRINT, OwnerToken.generate(), RecordFixtures.LEASE,
				RecordFixtures.TTL))
			.isInstanceOfSatisfying(AcquireResult.Replay.class,
					(replay) -> RecordFixtures.assertSameResponse(replay.response(), Record.COMPLETED_WITH_HEADERS));
	}

	@ParameterizedTest
	@MethodSource("versions")
	void leaseAndExpiryColumnsAreHonoured(String version) throws SQLException {
		insertFixtureRows(version);
		JdbcIdempotencyStore store = newStore();
		IdempotencyKey claim = Record.PROCESSING.key();
		// the lease lapsed: the first request to see
		// it schedules the takeover a lease later
		Instant lapsed = RecordFixtures.CLAIMED_AT.plus(RecordFixtures.LEASE).plusSeconds(1);
		setClock(lapsed);
		assertThat(store.find(claim).orElseThrow().leaseExpiresAt()).isBefore(lapsed);
		OwnerToken next = OwnerToken.generate();
		assertThat(store.acquire(claim, RecordFixtures.FINGERPRINT, next, RecordFixtures.LEASE, RecordFixtures.TTL))
			.isInstanceOfSatisfying(AcquireResult.InProgress.class,
					(inProgress) -> assertThat(inProgress.retryAfter()).isEqualTo(RecordFixtures.LEASE));
		setClock(lapsed.plus(RecordFixtures.LEASE));
		assertThat(store.acquire(claim, RecordFixtures.FINGERPRINT, next, RecordFixtures.LEASE, RecordFixtures.TTL))
			.isInstanceOf(AcquireResult.Acquired.class);
		assertThat(
				store.complete(claim, RecordFixtures.OWNER, Record.COMPLETED_WITH_BODY.response(), RecordFixtures.TTL))
			.isFalse();
		// the completed rows expire at their expires_at, not a moment later
		setClock(RecordFixtures.completedExpiry().minusMillis(1));
		for (Record record : RecordFixtures.completed()) {
			assertThat(store.find(record.key())).as(record.fileName()).isPresent();
		}
		setClock(RecordFixtures.completedExpiry());
		for (Record record : RecordFixtures.completed()) {
			assertThat(store.find(record.key())).as(record.fileName()).isEmpty();
			assertThat(store.acquire(record.key(), RecordFixtures.FINGERPRINT, OwnerToken.generate(),
					RecordFixtures.LEASE, RecordFixtures.TTL))
				.isInstanceOf(AcquireResult.Acquired.class);
		}
	}

	@Test
	void schemaMigratedByALaterReleaseKeepsThisOneWorking() throws SQLException {
		try (PostgresTestDatabase later = PostgresTestDatabase.create("idem_compat_later")) {
			new JdbcIdempotencySchemaInitializer(later.dataSource()).initialize();
			// what a later release's additive migration could do, and its trace in the
			// library's Flyway history
			execute(later.dataSource(), "ALTER TABLE " + TABLE + " ADD COLUMN added_later text",
					"INSERT INTO " + JdbcIdempotencySchemaInitializer.DEFAULT_HISTORY_TABLE
							+ " (installed_rank, version, description, type, script, checksum, installed_by, "
							+ "execution_time, success) VALUES (100, '99', 'added later', 'SQL', "
							+ "'V99__added_later.sql', 0, current_user, 1, true)");
			// an instance of this release restarting during
			// the rollout, or after a rollback, starts...
			new JdbcIdempotencySchemaInitializer(later.dataSource()).initialize();
			// ...and works on the table
			JdbcIdempotencyStore store = new JdbcIdempotencyStore(later.dataSource());
			Record record = Record.COMPLETED_WITH_HEADERS;
			assertThat(store.acquire(record.key(), RecordFixtures.FINGERPRINT, RecordFixtures.OWNER,
					RecordFixtures.LEASE, RecordFixtures.TTL))
				.isInstanceOf(AcquireResult.Acquired.class);
			assertThat(store.complete(record.key(), RecordFixtures.OWNER, record.response(), RecordFixtures.TTL))
				.isTrue();
			assertThat(store.acquire(record.key(), RecordFixtures.FINGERPRINT, OwnerToken.generate(),
					RecordFixtures.LEASE, RecordFixtures.TTL))
				.isInstanceOfSatisfying(AcquireResult.Replay.class,
						(replay) -> RecordFixtures.assertSameResponse(replay.response(), record));
		}
	}

	private static JdbcIdempotencyStore newStore() {
		return new JdbcIdempotencyStore(clocked);
	}

	private static void setClock(Instant now) throws SQLException {
		try (Connection connection = database.dataSource().getConnection();
				PreparedStatement statement = connection.prepareStatement("UPDATE compat_clock SET t = ?")) {
			statement.setObject(1, OffsetDateTime.ofInstant(now, ZoneOffset.UTC));
			assertThat(statement.executeUpdate()).isOne();
		}
	}

	// the table's columns in order: name, type, whether nullable
	private static String columns() throws SQLException {
		StringBuilder columns = new StringBuilder();
		try (Connection connection = database.dataSource().getConnection();
				PreparedStatement statement = connection
					.prepareStatement("SELECT column_name, udt_name, is_nullable FROM information_schema.columns "
							+ "WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position")) {
			statement.setString(1, database.schema());
			statement.setString(2, TABLE);
			try (ResultSet result = statement.executeQuery()) {
				while (result.next()) {
					columns.append(result.getString(1))
						.append(' ')
						.append(result.getString(2))
						.append(' ')
						.append("YES".equals(result.getString(3)) ? "null" : "not-null")
						.append('\n');
				}
			}
		}
		return columns.toString();
	}

	// every column of a row in the text form PostgreSQL accepts as input
	private static Map<String, String> readRow(IdempotencyKey key) throws SQLException {
		try (Connection connection = database.dataSource().getConnection();
				PreparedStatement statement = connection.prepareStatement("SELECT * FROM " + TABLE + " WHERE id = ?")) {
			statement.setBytes(1, key.digest());
			try (ResultSet result = statement.executeQuery()) {
				assertThat(result.next()).as("row of %s", key).isTrue();
				ResultSetMetaData metaData = result.getMetaData();
				Map<String, String> row = new LinkedHashMap<>();
				for (int i = 1; i <= metaData.getColumnCount(); i++) {
					row.put(metaData.getColumnName(i), text(result, i, metaData.getColumnTypeName(i)));
				}
				return row;
			}
		}
	}

	private static String text(ResultSet result, int column, String type) throws SQLException {
		if (result.getObject(column) == null) {
			return NULL;
		}
		return switch (type) {
			case "timestamptz" -> result.getObject(column, OffsetDateTime.class).toInstant().toString();
			case "bytea" -> "\\x" + HexFormat.of().formatHex(result.getBytes(column));
			default -> result.getString(column);
		};
	}

	private static void insertFixtureRows(String version) throws SQLException {
		for (Record record : Record.values()) {
			Map<String, String> row = readFixtureRow(version, record);
			String sql = "INSERT INTO " + TABLE + " (" + String.join(", ", row.keySet()) + ") VALUES ("
					+ String.join(", ", row.keySet().stream().map((column) -> "?").toList()) + ")";
			try (Connection connection = database.dataSource().getConnection();
					PreparedStatement statement = connection.prepareStatement(sql)) {
				int index = 1;
				for (String value : row.values()) {
					// untyped: PostgreSQL reads the text as the column's type
					if (NULL.equals(value)) {
						statement.setNull(index++, Types.OTHER);
					}
					else {
						statement.setObject(index++, value, Types.OTHER);
					}
				}
				assertThat(statement.executeUpdate()).isOne();
			}
		}
	}

	private static String rowFile(Record record) {
		return "jdbc/" + record.fileName() + ".row";
	}

	private static Map<String, String> readFixtureRow(String version, Record record) {
		Map<String, String> row = new LinkedHashMap<>();
		for (String line : withoutComments(RecordFixtures.read(version, rowFile(record))).split("\n")) {
			if (!line.isEmpty()) {
				int separator = line.indexOf(" = ");
				row.put(line.substring(0, separator), line.substring(separator + 3));
			}
		}
		return row;
	}

	private static String withoutComments(String text) {
		StringBuilder kept = new StringBuilder();
		for (String line : text.split("\n")) {
			if (!line.isBlank() && !line.startsWith("#")) {
				kept.append(line).append('\n');
			}
		}
		return kept.toString();
	}

	private static void writeFixtures(String columns, Map<String, Map<String, String>> rows) {
		RecordFixtures.write(COLUMNS, "# Columns of table " + TABLE + " of version " + RecordFixtures.WRITTEN_VERSION
				+ " in order: name, type (udt_name), nullability\n" + columns);
		for (Record record : Record.values()) {
			List<String> lines = new ArrayList<>();
			lines.add("# Row of record '" + record.fileName() + "' in table " + TABLE + " of version "
					+ RecordFixtures.WRITTEN_VERSION + ": column = value in PostgreSQL's text input form, " + NULL
					+ " for NULL");
			rows.get(record.fileName()).forEach((column, value) -> lines.add(column + " = " + value));
			RecordFixtures.write(rowFile(record), String.join("\n", lines) + "\n");
		}
	}

	private static void execute(DataSource dataSource, String... sql) throws SQLException {
		try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
			for (String each : sql) {
				statement.execute(each);
			}
		}
	}

}
