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

package dev.idempotency.sample.payments;

import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import javax.sql.DataSource;

import dev.idempotency.test.servers.TestServers;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * The databases the sample runs on in its integration tests, on the servers of
 * {@link TestServers}: PostgreSQL, the sample's default, and MariaDB, with the sample's
 * profile {@code mariadb}. A test works in a {@link Namespace} of its own on the shared
 * server, a schema on PostgreSQL and a database on MariaDB, which it drops when it is
 * done.
 *
 * @author Idempotency contributors
 */
public enum TestDatabase {

	/**
	 * PostgreSQL ({@link TestServers#postgres()}), in a schema of the test's own.
	 */
	POSTGRESQL,

	/**
	 * MariaDB ({@link TestServers#mariadb()}), in a database of the test's own; the
	 * instances run with the profile {@code mariadb}.
	 */
	MARIADB;

	/**
	 * Create a namespace of the test's own.
	 * @param name the schema or database, a plain lower-case identifier unique to the
	 * test (a prefix of its own and a random or time-based suffix)
	 * @return the namespace, to be closed (which drops it) by the test
	 */
	public Namespace create(String name) {
		if (!name.matches("[a-z_][a-z0-9_]{0,62}")) {
			throw new IllegalArgumentException("Not a plain lower-case identifier: " + name);
		}
		return (this == POSTGRESQL) ? new PostgresNamespace(name) : new MariaDbNamespace(name);
	}

	/**
	 * A schema or a database of a test's own, and how an instance of the sample and the
	 * test itself reach it.
	 */
	public abstract static sealed class Namespace implements AutoCloseable permits PostgresNamespace, MariaDbNamespace {

		private final TestDatabase database;

		private final String name;

		private final DriverManagerDataSource dataSource;

		Namespace(TestDatabase database, String name, String testUrl, String username, String password) {
			this.database = database;
			this.name = name;
			this.dataSource = new DriverManagerDataSource(testUrl, username, password);
		}

		/**
		 * Return the database.
		 * @return the database
		 */
		public TestDatabase database() {
			return this.database;
		}

		/**
		 * Return the name of the schema or database.
		 * @return the name
		 */
		public String name() {
			return this.name;
		}

		/**
		 * Return a data source for the test's own queries in this namespace, which opens
		 * a connection per use: the server is shared, so no pool keeps idle connections.
		 * @return the data source
		 */
		public DataSource dataSource() {
			return this.dataSource;
		}

		/**
		 * Return a client on {@link #dataSource()}.
		 * @return the client
		 */
		public JdbcClient jdbc() {
			return JdbcClient.create(this.dataSource);
		}

		/**
		 * Return the JDBC URL of this namespace for the test's own connections.
		 * @return the URL
		 */
		public String testJdbcUrl() {
			return this.dataSource.getUrl();
		}

		/**
		 * Return the user name of the test's own connections.
		 * @return the user name
		 */
		public String username() {
			return this.dataSource.getUsername();
		}

		/**
		 * Return the password of the test's own connections.
		 * @return the password
		 */
		public String password() {
			return this.dataSource.getPassword();
		}

		/**
		 * Return the host of the database server, for a proxy in front of it.
		 * @return the host
		 */
		public abstract String host();

		/**
		 * Return the port of the database server, for a proxy in front of it.
		 * @return the port
		 */
		public abstract int port();

		/**
		 * Return the Spring Boot properties that run an instance of the sample on this
		 * namespace and on the Redis server of {@link TestServers#redis()}.
		 * @return {@code spring.datasource.*}, {@code spring.data.redis.*}, and the
		 * schema or the profile
		 */
		public Map<String, Object> springProperties() {
			return springProperties(host(), port());
		}

		/**
		 * Return the Spring Boot properties that run an instance of the sample on this
		 * namespace, reaching the database server at another address (a proxy's).
		 * @param host the host the instance connects to
		 * @param port the port the instance connects to
		 * @return {@code spring.datasource.*}, {@code spring.data.redis.*}, and the
		 * schema or the profile
		 */
		public abstract Map<String, Object> springProperties(String host, int port);

		/**
		 * Return the driver's {@code socketTimeout} connection property for a time-out:
		 * pgjdbc counts seconds, MariaDB Connector/J milliseconds.
		 * @param timeout the time-out
		 * @return the property's value
		 */
		public abstract long socketTimeout(Duration timeout);

		/**
		 * Return the properties that name an instance's connections, so that the test can
		 * find them on the server: {@code ApplicationName} on PostgreSQL, none on MariaDB
		 * (whose sessions name no client without the performance schema).
		 * @param connectionName the name
		 * @return the properties
		 */
		public abstract Map<String, Object> connectionNameProperties(String connectionName);

		/**
		 * Drop the schema or database and everything in it.
		 */
		@Override
		public abstract void close();

	}

	static final class PostgresNamespace extends Namespace {

		private final TestServers.Postgres server;

		PostgresNamespace(String name) {
			this(TestServers.postgres(), name);
		}

		private PostgresNamespace(TestServers.Postgres server, String name) {
			super(POSTGRESQL, name, withSchema(server.jdbcUrl(), name), server.username(), server.password());
			this.server = server;
			JdbcClient.create(new DriverManagerDataSource(server.jdbcUrl(), server.username(), server.password()))
				.sql("CREATE SCHEMA IF NOT EXISTS " + name)
				.update();
		}

		@Override
		public String host() {
			return serverUri().getHost();
		}

		@Override
		public int port() {
			return (serverUri().getPort() != -1) ? serverUri().getPort() : 5432;
		}

		private URI serverUri() {
			return URI.create(this.server.jdbcUrl().substring("jdbc:".length()));
		}

		@Override
		public Map<String, Object> springProperties() {
			return springProperties(this.server.jdbcUrl());
		}

		@Override
		public Map<String, Object> springProperties(String host, int port) {
			URI server = serverUri();
			return springProperties("jdbc:postgresql://" + host + ":" + port + server.getRawPath()
					+ ((server.getRawQuery() != null) ? "?" + server.getRawQuery() : ""));
		}

		private Map<String, Object> springProperties(String url) {
			Map<String, Object> properties = new LinkedHashMap<>(TestServers.springProperties());
			properties.put("spring.datasource.url", url);
			properties.put("spring.datasource.hikari.schema", name());
			properties.put("spring.flyway.schemas", name());
			properties.put("spring.flyway.default-schema", name());
			return properties;
		}

		@Override
		public long socketTimeout(Duration timeout) {
			return timeout.toSeconds();
		}

		@Override
		public Map<String, Object> connectionNameProperties(String connectionName) {
			return Map.of("spring.datasource.hikari.data-source-properties.ApplicationName", connectionName);
		}

		@Override
		public void close() {
			TestServers.Postgres.dropSchema(dataSource(), name());
		}

		private static String withSchema(String jdbcUrl, String schema) {
			return jdbcUrl + ((jdbcUrl.indexOf('?') < 0) ? "?" : "&") + "currentSchema=" + schema;
		}

	}

	static final class MariaDbNamespace extends Namespace {

		private final TestServers.MariaDb server;

		MariaDbNamespace(String name) {
			this(TestServers.mariadb(), name);
		}

		private MariaDbNamespace(TestServers.MariaDb server, String name) {
			super(MARIADB, name, server.jdbcUrl(name, TestServers.MariaDb.Driver.MARIADB), server.username(),
					server.password());
			this.server = server;
			server.createDatabase(name);
		}

		@Override
		public String host() {
			return this.server.host();
		}

		@Override
		public int port() {
			return this.server.port();
		}

		@Override
		public Map<String, Object> springProperties(String host, int port) {
			Map<String, Object> properties = new LinkedHashMap<>();
			TestServers.Redis redis = TestServers.redis();
			properties.put("spring.data.redis.host", redis.host());
			properties.put("spring.data.redis.port", redis.port());
			// the documented switch: the MariaDB URL and driver settings of
			// application-mariadb.yml, here with the test's database
			properties.put("spring.profiles.active", "mariadb");
			String address = host.contains(":") ? "[" + host + "]" : host;
			properties.put("spring.datasource.url", "jdbc:mariadb://" + address + ":" + port + "/" + name());
			properties.put("spring.datasource.username", username());
			properties.put("spring.datasource.password", password());
			// as on PostgreSQL (TestServers#springProperties): one idle connection
			properties.put("spring.datasource.hikari.minimum-idle", 1);
			properties.put("spring.datasource.hikari.idle-timeout", 10_000);
			return properties;
		}

		@Override
		public long socketTimeout(Duration timeout) {
			return timeout.toMillis();
		}

		@Override
		public Map<String, Object> connectionNameProperties(String connectionName) {
			return Map.of();
		}

		@Override
		public void close() {
			this.server.dropDatabase(name());
		}

	}

}
