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

import java.util.Locale;
import java.util.UUID;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.test.servers.TestServers;
import org.jspecify.annotations.Nullable;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A schema of its own on the test PostgreSQL server (see {@link TestServers}), with a
 * connection pool whose connections use that schema.
 *
 * @author Idempotency contributors
 */
final class PostgresTestDatabase implements AutoCloseable {

	private final String schema;

	private final HikariDataSource dataSource;

	private PostgresTestDatabase(String schema) {
		this.schema = schema;
		this.dataSource = TestServers.postgres().dataSource(schema);
	}

	/**
	 * Create a new, empty schema named after the given prefix.
	 * @param prefix a prefix of lower-case letters and underscores
	 * @return the database, to be closed (which drops the schema) by the test
	 */
	static PostgresTestDatabase create(String prefix) {
		return new PostgresTestDatabase(
				(prefix + "_" + UUID.randomUUID().toString().substring(0, 8)).toLowerCase(Locale.ROOT));
	}

	String schema() {
		return this.schema;
	}

	/**
	 * Return the pooled data source of this schema.
	 * @return the data source
	 */
	DataSource dataSource() {
		return this.dataSource;
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
		this.dataSource.close();
		TestServers.Postgres.dropSchema(simpleDataSource(null), this.schema);
	}

	private static PGSimpleDataSource simpleDataSource(@Nullable String schema) {
		TestServers.Postgres server = TestServers.postgres();
		PGSimpleDataSource dataSource = new PGSimpleDataSource();
		dataSource.setURL(server.jdbcUrl());
		dataSource.setUser(server.username());
		dataSource.setPassword(server.password());
		if (schema != null) {
			dataSource.setCurrentSchema(schema);
		}
		return dataSource;
	}

}
