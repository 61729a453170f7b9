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
import java.util.Objects;
import java.util.function.Function;

import javax.sql.DataSource;

import dev.idempotency.core.store.IdempotencyStoreException;
import dev.idempotency.spring.transaction.TransactionalClaims;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.AbstractDataSource;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.jdbc.support.SQLExceptionSubclassTranslator;
import org.springframework.transaction.TransactionTimedOutException;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Runs each operation of a store on one connection: one taken for that operation only and
 * outside any transaction of the application, or, in the transactional mode
 * ({@link TransactionalClaims}), the connection of the transaction active on the thread,
 * which must be one of the store's data source.
 * <p>
 * A claim must be visible to every instance as soon as its statement returns, and must
 * not be rolled back with the caller's business transaction. A {@code JdbcClient} on the
 * application's {@link DataSource} would not do: {@code DataSourceUtils} hands it the
 * connection of a Spring-managed transaction bound to the thread, or binds the connection
 * it takes to the transaction's synchronization until that transaction ends. So the
 * runner's client is built on a data source of its own that hands out no connection at
 * all: when an operation first asks for the client, the operation's connection is bound
 * to the thread under that private data source (as a transaction manager binds its
 * connection; in the transactional mode, the transaction's own holder, with its
 * time-out), and unbound afterwards. Every statement of the operation (two for a
 * takeover) runs on that one connection, which is back in the pool when the operation
 * returns. When the pool hands out connections with auto-commit disabled, the operation
 * is committed explicitly. The same connection serves the statements run on plain JDBC
 * ({@link Operation#prepare}), the claim and the completion of every first request (see
 * {@link JdbcIdempotencyStore}).
 * <p>
 * A new transaction per operation ({@code PROPAGATION_REQUIRES_NEW}) would give the same
 * isolation, but a {@code COMMIT} round trip per operation on top of the statement's own,
 * and a suspension of the application's transaction synchronizations.
 * <p>
 * Failures of the database, the pool or the statement are thrown as
 * {@link IdempotencyStoreException}; other runtime exceptions of the work pass through.
 *
 * @author Idempotency contributors
 */
final class JdbcOperationRunner {

	private final DataSource dataSource;

	private final DataSource operationConnections = new OperationConnections();

	private final JdbcClient client;

	// the database's dialect: given, or read from the first connection's metadata
	private volatile @Nullable JdbcDialect dialect;

	/**
	 * Create a runner on the given data source.
	 * @param dataSource the application's data source, never {@code null}
	 */
	JdbcOperationRunner(DataSource dataSource) {
		this.dataSource = Objects.requireNonNull(dataSource, "'dataSource' must not be null");
		JdbcTemplate jdbcTemplate = new JdbcTemplate();
		jdbcTemplate.setDataSource(this.operationConnections);
		// translates by exception class only: no metadata lookup on the data source
		jdbcTemplate.setExceptionTranslator(new SQLExceptionSubclassTranslator());
		jdbcTemplate.afterPropertiesSet();
		this.client = JdbcClient.create(jdbcTemplate);
	}

	/**
	 * Set the dialect of the database, instead of reading it from the first connection's
	 * metadata.
	 * @param dialect the dialect, never {@code null}
	 */
	void setDialect(JdbcDialect dialect) {
		this.dialect = Objects.requireNonNull(dialect, "'dialect' must not be null");
	}

	/**
	 * Return the dialect of the database, if known yet.
	 * @return the dialect, {@code null} before the first operation reached the database
	 * unless one was set
	 */
	@Nullable JdbcDialect getDialect() {
		return this.dialect;
	}

	/**
	 * Return whether the operations of the current thread run in the application's
	 * transaction (see {@link TransactionalClaims}).
	 * @return {@code true} in the transactional mode
	 */
	boolean isJoining() {
		return TransactionalClaims.isActive();
	}

	/**
	 * Run one operation whose statements all run through the client.
	 * @param <T> the result type
	 * @param operation the name of the operation, for the exception message
	 * @param work the statements of the operation
	 * @return the result of the work
	 * @throws IdempotencyStoreException if the database or the pool fails
	 */
	<T> T execute(String operation, Function<JdbcClient, T> work) {
		return run(operation, (statements) -> work.apply(statements.client()));
	}

	/**
	 * Run one operation, with its statements run through the operation's client or on
	 * plain JDBC.
	 * @param <T> the result type
	 * @param operation the name of the operation, for the exception message
	 * @param work the statements of the operation
	 * @return the result of the work
	 * @throws IdempotencyStoreException if the database or the pool fails
	 */
	<T> T run(String operation, Work<T> work) {
		try {
			if (TransactionalClaims.isActive()) {
				return runInTransaction(operation, work);
			}
			try (Connection connection = this.dataSource.getConnection()) {
				boolean autoCommit = connection.getAutoCommit();
				try {
					T result = runOn(connection, null, work);
					if (!autoCommit) {
						connection.commit();
					}
					return result;
				}
				catch (SQLException | RuntimeException ex) {
					if (!autoCommit) {
						rollbackQuietly(connection, ex);
					}
					throw ex;
				}
			}
		}
		catch (SQLException | TransactionTimedOutException ex) {
			// a time-out: the transaction's, the policy's lock timeout, has passed
			throw failure(operation, ex, ex);
		}
		catch (DataAccessException ex) {
			throw failure(operation, ex.getMostSpecificCause(), ex);
		}

	}

	// the transactional mode: the statements run on the connection of the transaction,
	// which commits or rolls them back with the application's own work
	private <T> T runInTransaction(String operation, Work<T> work) throws SQLException {
		if (!(TransactionSynchronizationManager.getResource(this.dataSource) instanceof ConnectionHolder holder)) {
			throw new IdempotencyStoreException(databaseName() + " " + operation
					+ " failed: the transaction active on the thread holds no connection of the store's DataSource,"
					+ " so the claim could not commit with it");
		}
		return runOn(holder.getConnection(), holder, work);
	}

	private <T> T runOn(Connection connection, @Nullable ConnectionHolder transaction, Work<T> work)
			throws SQLException {
		JdbcDialect dialect = this.dialect;
		if (dialect == null) {
			try {
				dialect = JdbcDialect.of(connection.getMetaData());
			}
			catch (IllegalStateException ex) {
				throw new IdempotencyStoreException(ex.getMessage(), ex);
			}
			this.dialect = dialect;
		}
		Operation statements = new Operation(connection, transaction, dialect);
		try {
			return work.run(statements);
		}
		finally {
			statements.unbind();
		}
	}

	/**
	 * Return whether an operation that joined a transaction failed in a way that leaves
	 * the transaction nothing but a rollback: PostgreSQL refused the statement because an
	 * earlier one of the transaction failed (SQLState {@code 25P02}), or the connection
	 * failed (class {@code 08}, or an error of the driver without a SQLState), after
	 * which the server rolls the transaction back, or the transaction timed out.
	 * @param failure the failure of the operation
	 * @return {@code true} if the transaction can only roll back
	 */
	static boolean leavesOnlyRollback(IdempotencyStoreException failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof TransactionTimedOutException) {
				// no statement may run in it any more
				return true;
			}
			if (cause instanceof SQLException sql) {
				String state = sql.getSQLState();
				// 25P03 and 57P: the server ended the session (an idle transaction past
				// its time-out, a shutdown), which rolls the transaction back
				// 40XXX: the database rolled the transaction back (a deadlock, a
				// serialization failure), but for InnoDB's lock wait time-out (1205), for
				// which MySQL Connector/J reports 40001 too: it rolls back the statement
				// only
				return state == null || state.equals("25P02") || state.equals("25P03") || state.startsWith("08")
						|| state.startsWith("57P") || (state.startsWith("40") && sql.getErrorCode() != 1205);
			}
		}
		return false;
	}

	private IdempotencyStoreException failure(String operation, Throwable reason, Exception cause) {
		return new IdempotencyStoreException(databaseName() + " " + operation + " failed: " + reason.getMessage(),
				cause);
	}

	private String databaseName() {
		JdbcDialect dialect = this.dialect;
		return (dialect != null) ? dialect.displayName() : "Database";
	}

	private static void rollbackQuietly(Connection connection, Exception failure) {
		try {
			connection.rollback();
		}
		catch (SQLException ex) {
			failure.addSuppressed(ex);
		}
	}

	/**
	 * The statements of one operation.
	 *
	 * @param <T> the result type
	 */
	@FunctionalInterface
	interface Work<T> {

		/**
		 * Run the operation's statements.
		 * @param operation the operation's connection and client
		 * @return the result
		 * @throws SQLException if a statement run on plain JDBC fails
		 */
		T run(Operation operation) throws SQLException;

	}

	/**
	 * The connection of one operation: its own, or the transaction's in the transactional
	 * mode. Statements run through {@link #client()} or, prepared by {@link #prepare}, on
	 * plain JDBC; either way on the same connection.
	 */
	final class Operation {

		private final Connection connection;

		// the transaction's holder, whose time-out applies to each statement; null for a
		// connection of the operation's own
		private final @Nullable ConnectionHolder transaction;

		private final JdbcDialect dialect;

		private boolean bound;

		private Operation(Connection connection, @Nullable ConnectionHolder transaction, JdbcDialect dialect) {
			this.connection = connection;
			this.transaction = transaction;
			this.dialect = dialect;
		}

		/**
		 * Return the dialect of the operation's database.
		 * @return the dialect
		 */
		JdbcDialect dialect() {
			return this.dialect;
		}

		/**
		 * Return whether the operation runs on the connection of the application's
		 * transaction (the transactional mode).
		 * @return {@code true} in a transaction of the application
		 */
		boolean isTransaction() {
			return this.transaction != null;
		}

		/**
		 * Return the operation's connection, for what only plain JDBC can do on it.
		 * @return the connection
		 */
		Connection connection() {
			return this.connection;
		}

		/**
		 * Return a client whose statements run on the operation's connection. The
		 * connection is bound to the thread for the client on the first call only, so
		 * that an operation run on plain JDBC alone (every first request's) leaves the
		 * thread's resources alone.
		 * @return the client
		 */
		JdbcClient client() {
			if (!this.bound) {
				TransactionSynchronizationManager.bindResource(JdbcOperationRunner.this.operationConnections,
						(this.transaction != null) ? this.transaction : new ConnectionHolder(this.connection));
				this.bound = true;
			}
			return JdbcOperationRunner.this.client;
		}

		private void unbind() {
			if (this.bound) {
				TransactionSynchronizationManager.unbindResource(JdbcOperationRunner.this.operationConnections);
				this.bound = false;
			}
		}

		/**
		 * Prepare a statement on the operation's connection, with its values bound. In a
		 * transaction whose time-out has passed, the statement is closed unrun and
		 * Spring's {@code TransactionTimedOutException} is thrown instead, as the client
		 * does.
		 * <p>
		 * Unlike the client, this sets no JDBC query time-out, as in the default mode.
		 * The statements prepared here are the claim and the completion, which never wait
		 * for another request's transaction (the claim of the transactional mode is
		 * guarded by the key's advisory lock and the completion updates the row that its
		 * own transaction claimed), and a query time-out cannot end a statement whose
		 * network stopped answering (the driver cancels it through another connection):
		 * it would buy them little (a lock that DDL holds on the table, which the
		 * driver's socket time-out and the database's {@code statement_timeout} bound as
		 * for any statement), and pgjdbc pays for it with a task scheduled and cancelled
		 * on its shared timer thread around every statement. The statements that the
		 * handler runs through Spring keep the transaction's remaining time as theirs.
		 * @param statement the statement
		 * @param values the values of its parameters, in their declared order
		 * @return the prepared statement, for the caller to run and close
		 * @throws SQLException if the driver fails
		 * @throws TransactionTimedOutException if the transaction's time-out has passed
		 */
		PreparedStatement prepare(PositionalStatement statement, Object... values) throws SQLException {
			// prepared first: on a connection that is already lost, that failure is the
			// cause to report (a lost connection, not a time-out that passed meanwhile)
			PreparedStatement prepared = statement.prepare(this.connection, values);
			if (this.transaction != null && this.transaction.hasTimeout()) {
				try {
					// throws once the deadline has passed
					this.transaction.getTimeToLiveInMillis();
				}
				catch (RuntimeException ex) {
					prepared.close();
					throw ex;
				}
			}
			return prepared;
		}

	}

	/**
	 * The key under which an operation's connection is bound to the thread. It never
	 * hands out a connection itself, so a statement run outside an operation fails rather
	 * than reaching the pool through the thread's transaction synchronization.
	 */
	private static final class OperationConnections extends AbstractDataSource {

		@Override
		public Connection getConnection() {
			throw new IllegalStateException("A store statement ran outside of a store operation");
		}

		@Override
		public Connection getConnection(String username, String password) {
			return getConnection();
		}

	}

}
