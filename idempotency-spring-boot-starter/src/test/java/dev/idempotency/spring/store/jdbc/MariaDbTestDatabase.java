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

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.test.servers.TestServers;

/**
 * A database of its own on the test MariaDB server (see {@link TestServers#mariadb()}:
 * {@code IDEMPOTENCY_TEST_MARIADB_URL} and its user name and password, else
 * Testcontainers, else the local server on 127.0.0.1:3306), with connection pools of
 * either driver on it. A test never skips for want of a server: it fails, saying how to
 * provide one.
 *
 * @author Idempotency contributors
 */
public final class MariaDbTestDatabase implements AutoCloseable {

	private final TestServers.MariaDb server;

	private final String database;

	private final List<HikariDataSource> pools = new ArrayList<>();

	private final HikariDataSource dataSource;

	private MariaDbTestDatabase(String database) {
		this.server = TestServers.mariadb();
		this.database = database;
		this.server.createDatabase(database);
		this.dataSource = dataSource(Driver.MARIADB, Map.of());
	}

	/**
	 * Create a new, empty database named after the given prefix and 8 random hexadecimal
	 * digits.
	 * @param prefix a prefix of lower-case letters and underscores
	 * @return the database, to be closed (which drops it) by the test
	 */
	public static MariaDbTestDatabase create(String prefix) {
		return new MariaDbTestDatabase(
				(prefix + "_" + UUID.randomUUID().toString().substring(0, 8)).toLowerCase(Locale.ROOT));
	}

	/**
	 * Return the name of this database.
	 * @return the name
	 */
	public String database() {
		return this.database;
	}

	/**
	 * Return the pooled data source of this database, on MariaDB Connector/J with its
	 * defaults.
	 * @return the data source
	 */
	public DataSource dataSource() {
		return this.dataSource;
	}

	/**
	 * Return a new pool of at most 10 connections on this database, closed with it.
	 * @param driver the driver
	 * @param properties the driver's connection properties
	 * @return the data source
	 */
	public HikariDataSource dataSource(Driver driver, Map<String, String> properties) {
		return dataSource(driver, properties, 10);
	}

	/**
	 * Return a new pool on this database, closed with it.
	 * @param driver the driver
	 * @param properties the driver's connection properties
	 * @param size the pool's size
	 * @return the data source
	 */
	public synchronized HikariDataSource dataSource(Driver driver, Map<String, String> properties, int size) {
		HikariDataSource pool = this.server.dataSource(this.database, driver.driver, properties, size);
		this.pools.add(pool);
		return pool;
	}

	/**
	 * Return the JDBC URL of this database for a driver, without options.
	 * @param driver the driver
	 * @return the URL
	 */
	public String url(Driver driver) {
		return this.server.jdbcUrl(this.database, driver.driver);
	}

	static String username() {
		return TestServers.mariadb().username();
	}

	static String password() {
		return TestServers.mariadb().password();
	}

	/**
	 * Close every pool of this database and drop it.
	 */
	@Override
	public synchronized void close() {
		this.pools.forEach(HikariDataSource::close);
		this.pools.clear();
		this.server.dropDatabase(this.database);
	}

	/**
	 * The drivers applications reach MariaDB with (those of
	 * {@link TestServers.MariaDb.Driver}).
	 */
	public enum Driver {

		/**
		 * MariaDB Connector/J.
		 */
		MARIADB(TestServers.MariaDb.Driver.MARIADB),

		/**
		 * MySQL Connector/J, which talks to MariaDB as to MySQL.
		 */
		MYSQL(TestServers.MariaDb.Driver.MYSQL);

		private final TestServers.MariaDb.Driver driver;

		Driver(TestServers.MariaDb.Driver driver) {
			this.driver = driver;
		}

	}

}
