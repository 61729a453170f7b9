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
import java.sql.SQLException;

import javax.sql.DataSource;

import dev.idempotency.core.store.IdempotencyStoreException;

/**
 * Runs work on a connection of its own, outside any transaction of the application.
 * <p>
 * The connection is taken from the {@link DataSource} directly rather than through
 * Spring's transaction synchronization: a claim must be visible to every instance as soon
 * as the statement returns, and must not be rolled back with the caller's business
 * transaction. When the pool hands out connections with auto-commit disabled, the work is
 * committed explicitly.
 *
 * @author Idempotency contributors
 */
final class JdbcSupport {

	private JdbcSupport() {
	}

	static <T> T execute(DataSource dataSource, String operation, ConnectionWork<T> work) {
		try (Connection connection = dataSource.getConnection()) {
			boolean autoCommit = connection.getAutoCommit();
			try {
				T result = work.run(connection);
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
		catch (SQLException ex) {
			throw new IdempotencyStoreException("PostgreSQL " + operation + " failed: " + ex.getMessage(), ex);
		}
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
	 * Work done with a connection.
	 *
	 * @param <T> the result type
	 */
	@FunctionalInterface
	interface ConnectionWork<T> {

		T run(Connection connection) throws SQLException;

	}

}
