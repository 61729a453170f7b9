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
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

/**
 * Wraps a data source to count the SQL statements executed through it: each call of an
 * {@code execute...} method of a statement is one round trip to the server.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class CountingDataSource {

	private final AtomicInteger executions = new AtomicInteger();

	private final AtomicInteger connections = new AtomicInteger();

	private final DataSource dataSource;

	/**
	 * Wrap a data source.
	 * @param target the data source to count
	 */
	public CountingDataSource(DataSource target) {
		this.dataSource = proxy(DataSource.class, target, (result) -> {
			if (result instanceof Connection connection) {
				this.connections.incrementAndGet();
				return proxy(Connection.class, connection, (created) -> (created instanceof Statement statement)
						? proxy(statementType(statement), statement, null) : created);
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
		return this.executions.getAndSet(0);
	}

	/**
	 * Return the number of connections taken since the last call, and start again.
	 * @return the number of connections
	 */
	public int takeConnections() {
		return this.connections.getAndSet(0);
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

	private <T> T proxy(Class<T> type, T target, @Nullable UnaryOperator<@Nullable Object> wrapResult) {
		Object proxy = Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { type },
				(instance, method, args) -> {
					if (isExecution(method)) {
						this.executions.incrementAndGet();
					}
					Object result = invoke(method, target, args);
					return (wrapResult != null) ? wrapResult.apply(result) : result;
				});
		return type.cast(proxy);
	}

	private static boolean isExecution(Method method) {
		return Statement.class.isAssignableFrom(method.getDeclaringClass()) && method.getName().startsWith("execute");
	}

	private static @Nullable Object invoke(Method method, Object target, @Nullable Object[] args) throws Throwable {
		try {
			return method.invoke(target, args);
		}
		catch (InvocationTargetException ex) {
			throw ex.getCause();
		}
	}

}
