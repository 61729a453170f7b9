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

package dev.idempotency.spring.transaction;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Locale;
import java.util.Map;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.spring.store.jdbc.MariaDbTestDatabase;
import dev.idempotency.test.servers.TestServers;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The databases the transactional mode is tested on, and the SQL of the tests that
 * differs between them: the ledger's tables, reading and expiring a key's record, a
 * statement that keeps the database busy, and a rule of the database that refuses a
 * stored response.
 *
 * @author Idempotency contributors
 */
enum TransactionalTestDatabase {

	/**
	 * PostgreSQL, in a schema of the test's own.
	 */
	POSTGRESQL {

		@Override
		Opened open(String name) {
			String schema = name + "_" + Long.toHexString(System.nanoTime());
			HikariDataSource dataSource = TestServers.postgres().dataSource(schema);
			return new Opened(dataSource, () -> {
				TestServers.Postgres.dropSchema(dataSource, schema);
				dataSource.close();
			});
		}

		@Override
		String schemaDdl() {
			return TransactionalTestApplication.SCHEMA_DDL;
		}

		@Override
		String recordStatusQuery() {
			return "SELECT status::text FROM idempotency_record WHERE idem_key = ? AND expires_at > now()";
		}

		@Override
		String expireRecord() {
			return "UPDATE idempotency_record SET expires_at = now() - INTERVAL '1 second' WHERE idem_key = ?";
		}

		@Override
		String sleep(long millis) {
			return "SELECT pg_sleep(" + millis / 1000.0 + ")";
		}

		@Override
		void refuseResponsesWithTheMarker(JdbcTemplate jdbc) {
			jdbc.execute("CREATE SEQUENCE it_refused_completions");
			jdbc.execute(
					"""
							CREATE FUNCTION it_refuse_response() RETURNS trigger LANGUAGE plpgsql AS $$
							BEGIN
								IF position(convert_to('refused-by-the-database', 'UTF8') in coalesce(NEW.response, ''::bytea)) > 0 THEN
									PERFORM nextval('it_refused_completions');
									RAISE EXCEPTION 'it_refuse_response: this response may not be stored';
								END IF;
								RETURN NEW;
							END $$""");
			jdbc.execute("CREATE TRIGGER it_refuse_response BEFORE UPDATE ON idempotency_record"
					+ " FOR EACH ROW EXECUTE FUNCTION it_refuse_response()");
		}

		@Override
		long refusedCompletions(JdbcTemplate jdbc) {
			Long attempts = jdbc.queryForObject(
					"SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM it_refused_completions", Long.class);
			return (attempts != null) ? attempts : 0;
		}

		@Override
		void stopRefusing(JdbcTemplate jdbc) {
			jdbc.execute("DROP TRIGGER it_refuse_response ON idempotency_record");
			jdbc.execute("DROP FUNCTION it_refuse_response()");
			jdbc.execute("DROP SEQUENCE it_refused_completions");
		}

	},

	/**
	 * MariaDB, in a database of the test's own. Every connection of its pool begins with
	 * an {@code idle_transaction_timeout} of {@value #IDLE_TRANSACTION_TIMEOUT} s, the
	 * application's own setting, which no request may leave changed.
	 */
	MARIADB {

		@Override
		Opened open(String name) {
			MariaDbTestDatabase database = MariaDbTestDatabase.create(name);
			HikariDataSource dataSource = database.dataSource(MariaDbTestDatabase.Driver.MARIADB,
					Map.of("sessionVariables", "idle_transaction_timeout=" + IDLE_TRANSACTION_TIMEOUT));
			return new Opened(dataSource, database::close);
		}

		// the tables of PostgreSQL's DDL, in InnoDB; no commit_guard: InnoDB checks every
		// constraint at once, none at the commit
		@Override
		String schemaDdl() {
			return """
					CREATE TABLE IF NOT EXISTS ledger_entry (
						id BIGINT AUTO_INCREMENT PRIMARY KEY,
						idem_key VARCHAR(255) NOT NULL,
						body TEXT NOT NULL
					) ENGINE=InnoDB;
					CREATE TABLE IF NOT EXISTS audit_entry (
						id BIGINT AUTO_INCREMENT PRIMARY KEY,
						idem_key VARCHAR(255) NOT NULL
					) ENGINE=InnoDB;
					CREATE TABLE IF NOT EXISTS nested_entry (
						id BIGINT AUTO_INCREMENT PRIMARY KEY,
						idem_key VARCHAR(255) NOT NULL
					) ENGINE=InnoDB;
					CREATE TABLE IF NOT EXISTS unique_guard (
						value INT PRIMARY KEY
					) ENGINE=InnoDB;
					""";
		}

		// instants are UTC DATETIME(6), written with UTC_TIMESTAMP(6)
		@Override
		String recordStatusQuery() {
			return "SELECT status FROM idempotency_record WHERE idem_key = ? AND expires_at > UTC_TIMESTAMP(6)";
		}

		@Override
		String expireRecord() {
			return "UPDATE idempotency_record SET expires_at = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE idem_key = ?";
		}

		@Override
		String sleep(long millis) {
			return "SELECT SLEEP(" + millis / 1000.0 + ")";
		}

		// the attempts are counted in a MyISAM table, which the refused statement's
		// rollback does not undo (as PostgreSQL's sequence)
		@Override
		void refuseResponsesWithTheMarker(JdbcTemplate jdbc) {
			jdbc.execute("CREATE TABLE it_refused_completions (attempts INT NOT NULL) ENGINE=MyISAM");
			jdbc.execute("INSERT INTO it_refused_completions (attempts) VALUES (0)");
			jdbc.execute(
					"""
							CREATE TRIGGER it_refuse_response BEFORE UPDATE ON idempotency_record FOR EACH ROW
							BEGIN
								IF LOCATE('refused-by-the-database', COALESCE(NEW.response, '')) > 0 THEN
									UPDATE it_refused_completions SET attempts = attempts + 1;
									SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'it_refuse_response: this response may not be stored';
								END IF;
							END""");
		}

		@Override
		long refusedCompletions(JdbcTemplate jdbc) {
			Long attempts = jdbc.queryForObject("SELECT attempts FROM it_refused_completions", Long.class);
			return (attempts != null) ? attempts : 0;
		}

		@Override
		void stopRefusing(JdbcTemplate jdbc) {
			jdbc.execute("DROP TRIGGER IF EXISTS it_refuse_response");
			jdbc.execute("DROP TABLE IF EXISTS it_refused_completions");
		}

	};

	/**
	 * The {@code idle_transaction_timeout} that each MariaDB connection of the tests
	 * begins with, in seconds: neither MariaDB's default (0, no limit) nor any request's
	 * time-out.
	 */
	static final int IDLE_TRANSACTION_TIMEOUT = 3600;

	/**
	 * Open a database of the test's own, empty.
	 * @param name the prefix of its name, lower-case letters and underscores
	 * @return the pool on it, and how to drop it
	 */
	abstract Opened open(String name);

	/**
	 * Return the DDL of the ledger's tables, statements separated by semicolons.
	 * @return the DDL
	 */
	abstract String schemaDdl();

	/**
	 * Return the query of the status ({@code P} or {@code C}) of a key's live record,
	 * with the key as its parameter.
	 * @return the query
	 */
	abstract String recordStatusQuery();

	/**
	 * Return the update that makes a key's record expired a second ago, with the key as
	 * its parameter.
	 * @return the update
	 */
	abstract String expireRecord();

	/**
	 * Return a statement that keeps the database busy for a while.
	 * @param millis how long
	 * @return the statement
	 */
	abstract String sleep(long millis);

	/**
	 * Make the database refuse every update of a record whose new response contains
	 * {@code refused-by-the-database}, counting the refusals.
	 * @param jdbc the test's template
	 */
	abstract void refuseResponsesWithTheMarker(JdbcTemplate jdbc);

	/**
	 * Return how many updates were refused since
	 * {@link #refuseResponsesWithTheMarker(JdbcTemplate)}.
	 * @param jdbc the test's template
	 * @return the number of refusals
	 */
	abstract long refusedCompletions(JdbcTemplate jdbc);

	/**
	 * Undo {@link #refuseResponsesWithTheMarker(JdbcTemplate)}.
	 * @param jdbc the test's template
	 */
	abstract void stopRefusing(JdbcTemplate jdbc);

	/**
	 * Run the DDL of the ledger's tables.
	 * @param jdbc the test's template
	 */
	void createTables(JdbcTemplate jdbc) {
		for (String statement : schemaDdl().split(";")) {
			if (!statement.isBlank()) {
				jdbc.execute(statement);
			}
		}
	}

	/**
	 * Return the database a connection is to.
	 * @param connection the connection
	 * @return the database
	 * @throws SQLException if the connection cannot tell
	 */
	static TransactionalTestDatabase of(Connection connection) throws SQLException {
		String product = connection.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT);
		return (product.contains("mariadb") || product.contains("mysql")) ? MARIADB : POSTGRESQL;
	}

	/**
	 * A database of the test's own.
	 *
	 * @param dataSource the pool on it
	 * @param drop drops the database and closes the pool
	 */
	record Opened(HikariDataSource dataSource, Runnable drop) {
	}

}
