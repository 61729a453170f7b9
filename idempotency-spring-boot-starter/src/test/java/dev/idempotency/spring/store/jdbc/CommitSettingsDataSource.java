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

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import javax.sql.DataSource;

/**
 * Wraps a PostgreSQL data source so that every transaction commits explicitly, and
 * records the value of {@code synchronous_commit} in effect at each commit: what the
 * server applies to that commit, read on its own connection just before it. Connections
 * are handed out with {@code synchronous_commit} set to {@code on} for the session
 * (servers made for tests often turn it off) and auto-commit off (so that a statement's
 * transaction is still open after it), and returned to the pool as they came.
 *
 * @author Idempotency contributors
 */
public final class CommitSettingsDataSource {

	private final Queue<String> settings = new ConcurrentLinkedQueue<>();

	private final DataSource dataSource;

	/**
	 * Wrap a data source.
	 * @param target a data source of PostgreSQL connections
	 */
	public CommitSettingsDataSource(DataSource target) {
		this.dataSource = (DataSource) Proxy.newProxyInstance(getClass().getClassLoader(),
				new Class<?>[] { DataSource.class }, (proxy, method, args) -> {
					Object result = invoke(target, method, args);
					return (result instanceof Connection connection) ? recording(connection) : result;
				});
	}

	/**
	 * Return the wrapping data source.
	 * @return the data source
	 */
	public DataSource dataSource() {
		return this.dataSource;
	}

	/**
	 * Return the settings of the commits made since the last call, oldest first, and
	 * forget them.
	 * @return one value of {@code synchronous_commit} per commit
	 */
	public List<String> drain() {
		List<String> drained = new ArrayList<>();
		String setting;
		while ((setting = this.settings.poll()) != null) {
			drained.add(setting);
		}
		return drained;
	}

	private Connection recording(Connection connection) throws SQLException {
		execute(connection, "SET synchronous_commit = on");
		connection.setAutoCommit(false);
		return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { Connection.class },
				(proxy, method, args) -> {
					switch (method.getName()) {
						case "commit" -> this.settings.add(synchronousCommit(connection));
						case "close" -> {
							if (!connection.isClosed()) {
								connection.rollback();
								connection.setAutoCommit(true);
								execute(connection, "RESET synchronous_commit");
							}
						}
						default -> {
						}
					}
					return invoke(connection, method, args);
				});
	}

	private static void execute(Connection connection, String sql) throws SQLException {
		try (Statement statement = connection.createStatement()) {
			statement.execute(sql);
		}
	}

	private static String synchronousCommit(Connection connection) throws SQLException {
		try (Statement statement = connection.createStatement();
				ResultSet rows = statement.executeQuery("SHOW synchronous_commit")) {
			rows.next();
			return rows.getString(1);
		}
	}

	private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args) throws Throwable {
		try {
			return method.invoke(target, args);
		}
		catch (InvocationTargetException ex) {
			throw ex.getCause();
		}
	}

}
