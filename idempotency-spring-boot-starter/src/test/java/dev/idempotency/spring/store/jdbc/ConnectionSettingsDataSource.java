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

import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * Hands out the connections of a pool with auto-commit and the isolation level set as an
 * application's pool might configure them, for tests that the store does not depend on
 * either. The pool puts both back when a connection returns to it.
 *
 * @author Idempotency contributors
 */
final class ConnectionSettingsDataSource extends DelegatingDataSource {

	private final boolean autoCommit;

	private final int isolation;

	/**
	 * Wrap a pool.
	 * @param target the pool
	 * @param autoCommit the auto-commit mode of every connection
	 * @param isolation the isolation level of every connection, one of
	 * {@link Connection}'s constants
	 */
	ConnectionSettingsDataSource(DataSource target, boolean autoCommit, int isolation) {
		super(target);
		this.autoCommit = autoCommit;
		this.isolation = isolation;
	}

	@Override
	public Connection getConnection() throws SQLException {
		Connection connection = super.getConnection();
		try {
			connection.setAutoCommit(this.autoCommit);
			connection.setTransactionIsolation(this.isolation);
			return connection;
		}
		catch (SQLException ex) {
			connection.close();
			throw ex;
		}
	}

}
