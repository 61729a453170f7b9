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
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

/**
 * Wraps a data source to count the SQL statements executed through it (each call of an
 * {@code execute...} method of a statement is one round trip to the server) and the
 * connections taken from it.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class CountingDataSource {

	private final AtomicInteger executions = new AtomicInteger();

	private final AtomicInteger connections = new AtomicInteger();

	private final AtomicInteger openConnections = new AtomicInteger();

	private final Queue<String> executed = new ConcurrentLinkedQueue<>();

	private final DataSource dataSource;

	/**
	 * Wrap a data source.
	 * @param target the data source to count
	 */
	public CountingDataSource(DataSource target) {
		this.dataSource = proxy(DataSource.class, target, null, (result, ignored) -> {
			if (result instanceof Connection connection) {
				this.connections.incrementAndGet();
				this.openConnections.incrementAndGet();
				return proxy(Connection.class, connection, null, (created, args) -> {
					if (created instanceof Statement statement) {
						// prepareStatement(sql, ...) and
						// prepareCall(sql, ...) name the SQL
						String sql = (args != null && args.length > 0 && args[0] instanceof String text) ? text : null;
						return proxy(statementType(statement), statement, sql, null);
					}
					return created;
				});
			}
			return result;
		});
	}

	/**
	 * Return the counting data source.
	 * @return the data source
	 */
	public DataSource dataSource() {
		return this.dataSource;
	}

	/**
	 * Return the number of statements executed since the last call, and start again.
	 * @return the number of statement executions
	 */
	public int takeExecutions() {
		this.executed.clear();
		return this.executions.getAndSet(0);
	}

	/**
	 * Return the SQL of the prepared statements executed since the last call, in order,
	 * and start again. Statements created without SQL are listed as {@code "?"}.
	 * @return the SQL texts
	 */
	public List<String> takeStatements() {
		List<String> statements = new ArrayList<>();
		String sql;
		while ((sql = this.executed.poll()) != null) {
			statements.add(sql);
		}
		return statements;
	}

	/**
	 * Return whether an SQL text writes: whether it contains an {@code INSERT},
	 * {@code UPDATE} or {@code DELETE}.
	 * @param sql the SQL text
	 * @return {@code true} for a write
	 */
	public static boolean isWrite(String sql) {
		String upper = sql.toUpperCase(Locale.ROOT);
		return upper.contains("INSERT ") || upper.contains("UPDATE ") || upper.contains("DELETE ");
	}

	/**
	 * Return the number of connections taken since the last call, and start again.
	 * @return the number of connections
	 */
	public int takeConnections() {
		return this.connections.getAndSet(0);
	}

	/**
	 * Return the number of connections taken and not closed yet.
	 * @return the number of open connections
	 */
	public int openConnections() {
		return this.openConnections.get();
	}

	@SuppressWarnings("unchecked")
	private Class<Statement> statementType(Statement statement) {
		for (Class<?> type : new Class<?>[] { CallableStatement.class, PreparedStatement.class }) {
			if (type.isInstance(statement)) {
				return (Class<Statement>) type;
			}
		}
		return Statement.class;
	}

	private <T> T proxy(Class<T> type, T target, @Nullable String sql, @Nullable ResultWrapper wrapResult) {
		Object proxy = Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { type },
				(instance, method, args) -> {
					if (isExecution(method)) {
						this.executions.incrementAndGet();
						this.executed.add((sql != null) ? sql : "?");
					}
					if (isConnectionClose(instance, method)) {
						this.openConnections.decrementAndGet();
					}
					Object result = invoke(method, target, args);
					return (wrapResult != null) ? wrapResult.wrap(result, args) : result;
				});
		return type.cast(proxy);
	}

	private static boolean isExecution(Method method) {
		return Statement.class.isAssignableFrom(method.getDeclaringClass()) && method.getName().startsWith("execute");
	}

	private static boolean isConnectionClose(Object instance, Method method) {
		return instance instanceof Connection && method.getName().equals("close") && method.getParameterCount() == 0;
	}

	private static @Nullable Object invoke(Method method, Object target, @Nullable Object[] args) throws Throwable {
		try {
			return method.invoke(target, args);
		}
		catch (InvocationTargetException ex) {
			throw ex.getCause();
		}
	}

	@FunctionalInterface
	private interface ResultWrapper {

		@Nullable Object wrap(@Nullable Object result, @Nullable Object[] args);

	}

}
