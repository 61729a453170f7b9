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

package dev.idempotency.spring.web;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;

import javax.sql.DataSource;

import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * Data source that delegates to the application's pool, and hands out no connection while
 * an outage is simulated: PostgreSQL as the application sees it when the database is down
 * or the pool exhausted.
 * <p>
 * It is the store's data source and the transaction manager's alike, so the transactional
 * mode's start-up finds the store and the manager it needs, and a request to a
 * transactional endpoint meets the outage where it would: its transaction cannot begin.
 *
 * @author Idempotency contributors
 */
class OutageSimulatingDataSource extends DelegatingDataSource {

	private volatile boolean down;

	OutageSimulatingDataSource(DataSource delegate) {
		super(delegate);
	}

	void setDown(boolean down) {
		this.down = down;
	}

	@Override
	public Connection getConnection() throws SQLException {
		check();
		return super.getConnection();
	}

	@Override
	public Connection getConnection(String username, String password) throws SQLException {
		check();
		return super.getConnection(username, password);
	}

	private void check() throws SQLException {
		if (this.down) {
			throw new SQLTransientConnectionException("simulated outage");
		}
	}

}
