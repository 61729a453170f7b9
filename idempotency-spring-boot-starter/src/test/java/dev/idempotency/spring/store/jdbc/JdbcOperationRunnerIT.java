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
import java.util.ArrayList;
import java.util.List;

import javax.sql.DataSource;

import dev.idempotency.core.store.IdempotencyStoreException;
import dev.idempotency.spring.transaction.TransactionalClaims;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.transaction.TransactionTimedOutException;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Tests for {@link JdbcOperationRunner} on a real PostgreSQL server: one connection per
 * operation, outside any transaction of the application.
 *
 * @author Idempotency contributors
 */
class JdbcOperationRunnerIT {

	private static final String INSERT = "INSERT INTO runner_row (id) VALUES (:id)";

	private static PostgresTestDatabase database;

	private static JdbcTemplate jdbc;

	@BeforeAll
	static void createSchema() {
		database = PostgresTestDatabase.create("idem_jdbc_runner");
		jdbc = new JdbcTemplate(database.dataSource());
		jdbc.execute("CREATE TABLE runner_row (id int PRIMARY KEY)");
	}

	@AfterAll
	static void dropSchema() {
		database.close();
	}

	@BeforeEach
	void emptyTable() {
		jdbc.update("DELETE FROM runner_row");
	}

	@Test
	void statementsOfAnOperationShareOneConnectionThatIsReturnedAfterwards() {
		CountingDataSource counting = new CountingDataSource(database.dataSource());
		JdbcOperationRunner runner = new JdbcOperationRunner(counting.dataSource());
		Integer count = runner.execute("insert", (client) -> {
			client.sql(INSERT).param("id", 1).update();
			return client.sql("SELECT count(*) FROM runner_row").query(Integer.class).single();
		});
		assertThat(count).isOne();
		assertThat(counting.takeExecutions()).isEqualTo(2);
		assertThat(counting.takeConnections()).isOne();
		assertThat(counting.openConnections()).isZero();
		assertThat(TransactionSynchronizationManager.getResourceMap()).isEmpty();
	}

	@Test
	void operationInsideAnApplicationTransactionNeitherJoinsNorHoldsIt() {
		CountingDataSource counting = new CountingDataSource(database.dataSource());
		JdbcOperationRunner runner = new JdbcOperationRunner(counting.dataSource());
		TransactionTemplate transaction = new TransactionTemplate(
				new DataSourceTransactionManager(counting.dataSource()));
		transaction.executeWithoutResult((status) -> {
			new JdbcTemplate(counting.dataSource()).update("INSERT INTO runner_row (id) VALUES (1)");
			int synchronizations = TransactionSynchronizationManager.getSynchronizations().size();
			Integer seenByOperation = runner.execute("insert", (client) -> {
				client.sql(INSERT).param("id", 2).update();
				return client.sql("SELECT count(*) FROM runner_row").query(Integer.class).single();
			});
			// the application's uncommitted row is invisible: another connection
			assertThat(seenByOperation).isOne();
			assertThat(counting.openConnections()).isOne();
			assertThat(TransactionSynchronizationManager.getSynchronizations()).hasSize(synchronizations);
			assertThat(idsSeenByAnotherConnection()).containsExactly(2);
			status.setRollbackOnly();
		});
		assertThat(idsSeenByAnotherConnection()).containsExactly(2);
		assertThat(counting.openConnections()).isZero();
	}

	@Test
	void workIsCommittedOrRolledBackWhenThePoolDisablesAutoCommit() {
		JdbcOperationRunner runner = new JdbcOperationRunner(manualCommit(database.dataSource()));
		runner.execute("insert", (client) -> client.sql(INSERT).param("id", 1).update());
		assertThat(idsSeenByAnotherConnection()).containsExactly(1);
		IllegalStateException failure = new IllegalStateException("work failed");
		assertThatIllegalStateException().isThrownBy(() -> runner.execute("insert", (client) -> {
			client.sql(INSERT).param("id", 2).update();
			throw failure;
		})).isSameAs(failure);
		assertThat(idsSeenByAnotherConnection()).containsExactly(1);
	}

	@Test
	void failedStatementIsAStoreExceptionAndLeavesNothingBound() {
		CountingDataSource counting = new CountingDataSource(database.dataSource());
		JdbcOperationRunner runner = new JdbcOperationRunner(counting.dataSource());
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> runner.execute("select",
					(client) -> client.sql("SELECT id FROM no_such_table").query(Integer.class).list()))
			.withMessageStartingWith("PostgreSQL select failed: ERROR: relation \"no_such_table\" does not exist")
			.withCauseInstanceOf(DataAccessException.class);
		assertThat(TransactionSynchronizationManager.getResourceMap()).isEmpty();
		assertThat(counting.openConnections()).isZero();
		runner.execute("insert", (client) -> client.sql(INSERT).param("id", 1).update());
		assertThat(idsSeenByAnotherConnection()).containsExactly(1);
	}

	@Test
	void plainStatementRunsOnTheOperationsConnectionWithEachValueInEveryPlaceOfItsName() {
		CountingDataSource counting = new CountingDataSource(database.dataSource());
		JdbcOperationRunner runner = new JdbcOperationRunner(counting.dataSource());
		PositionalStatement insert = new PositionalStatement(
				"INSERT INTO runner_row (id) VALUES (:first), (:second * 10 + :first)", "second", "first");
		Integer count = runner.run("insert", (operation) -> {
			try (PreparedStatement statement = operation.prepare(insert, 2, 1)) {
				statement.executeUpdate();
			}
			// the client sees the row: the same connection
			return operation.client().sql("SELECT count(*) FROM runner_row").query(Integer.class).single();
		});
		assertThat(count).isEqualTo(2);
		assertThat(counting.takeConnections()).isOne();
		assertThat(counting.openConnections()).isZero();
		assertThat(TransactionSynchronizationManager.getResourceMap()).isEmpty();
		assertThat(idsSeenByAnotherConnection()).containsExactly(1, 21);
	}

	@Test
	void operationBindsItsConnectionToTheThreadOnlyOnceItsClientIsAskedFor() {
		JdbcOperationRunner runner = new JdbcOperationRunner(database.dataSource());
		PositionalStatement insert = new PositionalStatement("INSERT INTO runner_row (id) VALUES (:id)", "id");
		Integer count = runner.run("insert", (operation) -> {
			try (PreparedStatement statement = operation.prepare(insert, 1)) {
				statement.executeUpdate();
			}
			// plain JDBC alone leaves the thread's resources alone
			assertThat(TransactionSynchronizationManager.getResourceMap()).isEmpty();
			JdbcClient client = operation.client();
			assertThat(TransactionSynchronizationManager.getResourceMap()).hasSize(1);
			assertThat(operation.client()).isSameAs(client);
			assertThat(TransactionSynchronizationManager.getResourceMap()).hasSize(1);
			return client.sql("SELECT count(*) FROM runner_row").query(Integer.class).single();
		});
		assertThat(count).isOne();
		assertThat(TransactionSynchronizationManager.getResourceMap()).isEmpty();
		runner.run("insert", (operation) -> {
			try (PreparedStatement statement = operation.prepare(insert, 2)) {
				return statement.executeUpdate();
			}
		});
		assertThat(TransactionSynchronizationManager.getResourceMap()).isEmpty();
		assertThat(idsSeenByAnotherConnection()).containsExactly(1, 2);
	}

	@Test
	void failedPlainStatementIsAStoreExceptionCausedByTheDriversAndIsRolledBack() {
		CountingDataSource counting = new CountingDataSource(manualCommit(database.dataSource()));
		JdbcOperationRunner runner = new JdbcOperationRunner(counting.dataSource());
		PositionalStatement insert = new PositionalStatement("INSERT INTO runner_row (id) VALUES (:id)", "id");
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> runner.run("insert", (operation) -> {
				try (PreparedStatement statement = operation.prepare(insert, 1)) {
					statement.executeUpdate();
				}
				try (PreparedStatement statement = operation.prepare(insert, 1)) {
					return statement.executeUpdate();
				}
			}))
			.withMessageStartingWith("PostgreSQL insert failed: ERROR: duplicate key value")
			.withCauseInstanceOf(SQLException.class);
		assertThat(idsSeenByAnotherConnection()).isEmpty();
		assertThat(counting.openConnections()).isZero();
		assertThat(TransactionSynchronizationManager.getResourceMap()).isEmpty();
	}

	@Test
	void plainStatementInTheTransactionalModeJoinsTheTransactionAndChecksItsDeadline() {
		JdbcOperationRunner runner = new JdbcOperationRunner(database.dataSource());
		PositionalStatement insert = new PositionalStatement("INSERT INTO runner_row (id) VALUES (:id)", "id");
		PositionalStatement sleep = new PositionalStatement("SELECT pg_sleep(:seconds)", "seconds");
		TransactionTemplate transaction = new TransactionTemplate(
				new DataSourceTransactionManager(database.dataSource()));
		transaction.executeWithoutResult((status) -> {
			int resources = TransactionSynchronizationManager.getResourceMap().size();
			try (TransactionalClaims.Scope claims = TransactionalClaims.open(database.dataSource())) {
				Integer seen = runner.run("insert", (operation) -> {
					try (PreparedStatement statement = operation.prepare(insert, 1)) {
						statement.executeUpdate();
					}
					// the client runs on the transaction's connection too
					return operation.client().sql("SELECT count(*) FROM runner_row").query(Integer.class).single();
				});
				assertThat(seen).isOne();
			}
			assertThat(TransactionSynchronizationManager.getResourceMap()).hasSize(resources);
			assertThat(idsSeenByAnotherConnection()).isEmpty();
			status.setRollbackOnly();
		});
		assertThat(idsSeenByAnotherConnection()).isEmpty();
		// a plain statement arms no query time-out: one begun before the transaction's
		// deadline runs to its end; one prepared after it is not run
		transaction.setTimeout(2);
		List<String> ran = new ArrayList<>();
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> transaction.executeWithoutResult((status) -> {
				try (TransactionalClaims.Scope claims = TransactionalClaims.open(database.dataSource())) {
					runner.run("sleep", (operation) -> {
						try (PreparedStatement statement = operation.prepare(sleep, 2.5)) {
							statement.execute();
							ran.add("past the deadline");
						}
						try (PreparedStatement statement = operation.prepare(sleep, 0.0)) {
							ran.add("after the deadline");
							return statement.execute();
						}
					});
				}
			}))
			.withMessageContaining("timed out")
			.withCauseInstanceOf(TransactionTimedOutException.class);
		assertThat(ran).containsExactly("past the deadline");
		// one run through the client has the remaining time as its query time-out
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> transaction.executeWithoutResult((status) -> {
				try (TransactionalClaims.Scope claims = TransactionalClaims.open(database.dataSource())) {
					runner.execute("sleep", (client) -> client.sql("SELECT pg_sleep(30)").query(String.class).single());
				}
			}))
			.withMessageContaining("cancel");
	}

	@Test
	void positionalStatementChecksItsDeclaredParameters() {
		assertThat(new PositionalStatement("SELECT :a::text || :b || :a", "a", "b").sql())
			.isEqualTo("SELECT ?::text || ? || ?");
		assertThatIllegalArgumentException().isThrownBy(() -> new PositionalStatement("SELECT :a, :b", "a"))
			.withMessageContaining("not declared");
		assertThatIllegalArgumentException().isThrownBy(() -> new PositionalStatement("SELECT :a", "a", "b"))
			.withMessage("Parameter 'b' is not used by the statement");
		assertThatIllegalArgumentException().isThrownBy(() -> new PositionalStatement("SELECT :a", "a", "a"))
			.withMessage("Parameter 'a' is declared twice");
		JdbcOperationRunner runner = new JdbcOperationRunner(database.dataSource());
		PositionalStatement select = new PositionalStatement("SELECT :a", "a");
		assertThatIllegalArgumentException().isThrownBy(() -> runner.run("select", (operation) -> {
			try (PreparedStatement statement = operation.prepare(select, 1, 2)) {
				return statement.execute();
			}
		})).withMessage("Statement takes 1 values, but 2 were given");
	}

	@Test
	void poolFailureIsAStoreException() {
		SQLException exhausted = new SQLException("Connection is not available, request timed out");
		JdbcOperationRunner runner = new JdbcOperationRunner(new DelegatingDataSource(database.dataSource()) {

			@Override
			public Connection getConnection() throws SQLException {
				throw exhausted;
			}

		});
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> runner.execute("insert", (client) -> client.sql(INSERT).param("id", 1).update()))
			// no connection yet: which database the pool reaches is not known
			.withMessage("Database insert failed: Connection is not available, request timed out")
			.withCause(exhausted);
	}

	private static DataSource manualCommit(DataSource dataSource) {
		return new DelegatingDataSource(dataSource) {

			@Override
			public Connection getConnection() throws SQLException {
				Connection connection = super.getConnection();
				connection.setAutoCommit(false);
				return connection;
			}

		};
	}

	private static List<Integer> idsSeenByAnotherConnection() {
		return new JdbcTemplate(database.unpooledDataSource()).queryForList("SELECT id FROM runner_row ORDER BY id",
				Integer.class);
	}

}
