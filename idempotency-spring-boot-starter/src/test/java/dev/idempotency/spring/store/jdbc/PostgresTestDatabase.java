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

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A schema of its own on the test PostgreSQL server, with a small connection pool whose
 * connections use that schema. The server is given by the environment variables
 * {@code IDEMPOTENCY_TEST_JDBC_URL}, {@code IDEMPOTENCY_TEST_JDBC_USERNAME} and
 * {@code IDEMPOTENCY_TEST_JDBC_PASSWORD} (defaults: {@value #DEFAULT_URL}, user
 * {@code postgres}, no password).
 *
 * @author Idempotency contributors
 */
final class PostgresTestDatabase implements AutoCloseable {

	static final String DEFAULT_URL = "jdbc:postgresql://127.0.0.1:5432/test";

	private static final int POOL_SIZE = 16;

	private final String schema;

	private final Pool pool;

	private PostgresTestDatabase(String schema) {
		this.schema = schema;
		this.pool = new Pool(simpleDataSource(schema), POOL_SIZE);
	}

	/**
	 * Create a new, empty schema named after the given prefix.
	 * @param prefix a prefix of lower-case letters and underscores
	 * @return the database, to be closed (which drops the schema) by the test
	 */
	static PostgresTestDatabase create(String prefix) {
		String schema = (prefix + "_" + UUID.randomUUID().toString().substring(0, 8)).toLowerCase(Locale.ROOT);
		executeAsAdmin("CREATE SCHEMA " + schema);
		return new PostgresTestDatabase(schema);
	}

	static void executeAsAdmin(String sql) {
		try (Connection connection = simpleDataSource(null).getConnection();
				Statement statement = connection.createStatement()) {
			statement.execute(sql);
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Cannot use the test PostgreSQL server at " + url() + " (" + ex.getMessage()
					+ "). Start one (see STACK.md or docs/) or point "
					+ "IDEMPOTENCY_TEST_JDBC_URL, IDEMPOTENCY_TEST_JDBC_USERNAME and "
					+ "IDEMPOTENCY_TEST_JDBC_PASSWORD at one.", ex);
		}
	}

	String schema() {
		return this.schema;
	}

	/**
	 * Return the pooled data source of this schema.
	 * @return the data source
	 */
	DataSource dataSource() {
		return this.pool;
	}

	/**
	 * Return a new unpooled data source of this schema.
	 * @return the data source
	 */
	PGSimpleDataSource unpooledDataSource() {
		return simpleDataSource(this.schema);
	}

	@Override
	public void close() {
		this.pool.close();
		executeAsAdmin("DROP SCHEMA IF EXISTS " + this.schema + " CASCADE");
	}

	static PGSimpleDataSource simpleDataSource(@Nullable String schema) {
		PGSimpleDataSource dataSource = new PGSimpleDataSource();
		dataSource.setURL(url());
		dataSource.setUser(env("IDEMPOTENCY_TEST_JDBC_USERNAME", "postgres"));
		dataSource.setPassword(env("IDEMPOTENCY_TEST_JDBC_PASSWORD", ""));
		dataSource.setConnectTimeout(5);
		if (schema != null) {
			dataSource.setCurrentSchema(schema);
		}
		return dataSource;
	}

	private static String url() {
		return env("IDEMPOTENCY_TEST_JDBC_URL", DEFAULT_URL);
	}

	private static String env(String name, String defaultValue) {
		String value = System.getenv(name);
		return (value != null) ? value : defaultValue;
	}

	/**
	 * A fixed-size pool: enough for the concurrency tests without one server process per
	 * operation.
	 */
	private static final class Pool implements DataSource {

		private final DataSource target;

		private final BlockingQueue<Connection> idle;

		private final List<Connection> all = new ArrayList<>();

		private final int size;

		Pool(DataSource target, int size) {
			this.target = target;
			this.size = size;
			this.idle = new ArrayBlockingQueue<>(size);
		}

		@Override
		public Connection getConnection() throws SQLException {
			Connection connection = this.idle.poll();
			if (connection == null) {
				connection = openIfBelowSize();
			}
			if (connection == null) {
				try {
					connection = this.idle.poll(1, TimeUnit.MINUTES);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new SQLException("Interrupted while waiting for a connection", ex);
				}
				if (connection == null) {
					throw new SQLException("No connection available within a minute");
				}
			}
			return lend(connection);
		}

		private @Nullable Connection openIfBelowSize() throws SQLException {
			synchronized (this.all) {
				if (this.all.size() >= this.size) {
					return null;
				}
				Connection connection = this.target.getConnection();
				this.all.add(connection);
				return connection;
			}
		}

		private Connection lend(Connection physical) {
			boolean[] returned = new boolean[1];
			return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { Connection.class },
					(proxy, method, args) -> {
						if (method.getName().equals("close")) {
							if (!returned[0]) {
								returned[0] = true;
								if (!physical.getAutoCommit()) {
									physical.rollback();
									physical.setAutoCommit(true);
								}
								this.idle.add(physical);
							}
							return null;
						}
						if (method.getName().equals("isClosed")) {
							return returned[0] || physical.isClosed();
						}
						if (returned[0]) {
							throw new SQLException("Connection already returned to the pool");
						}
						try {
							return method.invoke(physical, args);
						}
						catch (InvocationTargetException ex) {
							throw ex.getCause();
						}
					});
		}

		void close() {
			synchronized (this.all) {
				for (Connection connection : this.all) {
					try {
						connection.close();
					}
					catch (SQLException ex) {
						// the schema is dropped next; nothing to do
					}
				}
				this.all.clear();
			}
		}

		@Override
		public Connection getConnection(String username, String password) throws SQLException {
			throw new SQLFeatureNotSupportedException();
		}

		@Override
		public @Nullable PrintWriter getLogWriter() {
			return null;
		}

		@Override
		public void setLogWriter(PrintWriter out) {
		}

		@Override
		public void setLoginTimeout(int seconds) {
		}

		@Override
		public int getLoginTimeout() {
			return 0;
		}

		@Override
		public Logger getParentLogger() throws SQLFeatureNotSupportedException {
			throw new SQLFeatureNotSupportedException();
		}

		@Override
		public <T> T unwrap(Class<T> type) throws SQLException {
			throw new SQLException("Not a wrapper");
		}

		@Override
		public boolean isWrapperFor(Class<?> type) {
			return false;
		}

	}

}
