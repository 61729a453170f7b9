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

package dev.idempotency.test.servers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.SocketOptions;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.jspecify.annotations.Nullable;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import redis.embedded.RedisServer;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;

/**
 * Real Redis, PostgreSQL and MariaDB servers for tests and for running the sample without
 * installed servers. Each server is resolved once per JVM, in this order:
 * <ol>
 * <li>addresses from environment variables ({@value #REDIS_URL} as
 * {@code redis://host:port}; {@value #JDBC_URL}, {@value #JDBC_USERNAME} and
 * {@value #JDBC_PASSWORD}; {@value #MARIADB_URL}, {@value #MARIADB_USERNAME} and
 * {@value #MARIADB_PASSWORD}), which CI sets to its local servers;
 * <li>Testcontainers, when a Docker engine is available (images pinned below);
 * <li>embedded servers started in-process (Redis 6.2 and PostgreSQL 15 binaries shipped
 * in Maven artifacts; nothing is downloaded at run time). There is no embedded MariaDB:
 * its last resort is the conventional local server, 127.0.0.1:3306 as {@code root}
 * without a password, when it answers.
 * </ol>
 * Tests never skip for want of a server: when none of these works they fail with a
 * message that says how to provide one.
 * <p>
 * Servers are shared with other clients: tests must use their own Redis key prefix,
 * PostgreSQL schema and MariaDB database, and drop only what they created.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class TestServers {

	/**
	 * Environment variable with the Redis address, {@code redis://host:port}.
	 */
	public static final String REDIS_URL = "IDEMPOTENCY_TEST_REDIS_URL";

	/**
	 * Environment variable with the PostgreSQL JDBC URL.
	 */
	public static final String JDBC_URL = "IDEMPOTENCY_TEST_JDBC_URL";

	/**
	 * Environment variable with the PostgreSQL user name.
	 */
	public static final String JDBC_USERNAME = "IDEMPOTENCY_TEST_JDBC_USERNAME";

	/**
	 * Environment variable with the PostgreSQL password.
	 */
	public static final String JDBC_PASSWORD = "IDEMPOTENCY_TEST_JDBC_PASSWORD";

	/**
	 * Environment variable with the MariaDB JDBC URL, {@code jdbc:mariadb://host:port/db}
	 * or {@code jdbc:mysql://host:port/db}: only its host, port and database are used.
	 */
	public static final String MARIADB_URL = "IDEMPOTENCY_TEST_MARIADB_URL";

	/**
	 * Environment variable with the MariaDB user name ({@code root} when unset).
	 */
	public static final String MARIADB_USERNAME = "IDEMPOTENCY_TEST_MARIADB_USERNAME";

	/**
	 * Environment variable with the MariaDB password (empty when unset).
	 */
	public static final String MARIADB_PASSWORD = "IDEMPOTENCY_TEST_MARIADB_PASSWORD";

	/**
	 * Redis image used with Testcontainers.
	 */
	public static final String REDIS_IMAGE = "redis:7.4.2-alpine";

	/**
	 * PostgreSQL image used with Testcontainers.
	 */
	public static final String POSTGRES_IMAGE = "postgres:15.10-alpine";

	/**
	 * MariaDB image used with Testcontainers.
	 */
	public static final String MARIADB_IMAGE = "mariadb:10.11.10";

	private static final String HOW_TO = "Provide a server by setting %s, by running a Docker engine for "
			+ "Testcontainers, or check why the embedded server failed (cause below).";

	private static @Nullable Redis redis;

	private static @Nullable Postgres postgres;

	private static @Nullable MariaDb mariadb;

	private TestServers() {
	}

	/**
	 * Return the Redis server for this JVM, starting one if needed.
	 * @return the server
	 */
	public static synchronized Redis redis() {
		if (redis == null) {
			redis = resolveRedis();
		}
		return redis;
	}

	/**
	 * Return the PostgreSQL server for this JVM, starting one if needed.
	 * @return the server
	 */
	public static synchronized Postgres postgres() {
		if (postgres == null) {
			postgres = resolvePostgres();
		}
		return postgres;
	}

	/**
	 * Return the MariaDB server for this JVM, starting one if needed.
	 * @return the server
	 * @throws IllegalStateException if there is none, with a message that says how to
	 * provide one
	 */
	public static synchronized MariaDb mariadb() {
		if (mariadb == null) {
			mariadb = resolveMariaDb();
		}
		return mariadb;
	}

	/**
	 * Return the Spring Boot properties that point an application at both servers.
	 * @return {@code spring.data.redis.*} and {@code spring.datasource.*} properties
	 */
	public static Map<String, Object> springProperties() {
		Map<String, Object> properties = new LinkedHashMap<>();
		Redis redis = redis();
		properties.put("spring.data.redis.host", redis.host());
		properties.put("spring.data.redis.port", redis.port());
		Postgres postgres = postgres();
		properties.put("spring.datasource.url", postgres.jdbcUrl());
		properties.put("spring.datasource.username", postgres.username());
		properties.put("spring.datasource.password", postgres.password());
		// as in Postgres#dataSource: a cached context holds one idle connection, not ten
		properties.put("spring.datasource.hikari.minimum-idle", 1);
		properties.put("spring.datasource.hikari.idle-timeout", 10_000);
		return properties;
	}

	private static Redis resolveRedis() {
		String url = System.getenv(REDIS_URL);
		if (url != null && !url.isBlank()) {
			URI uri = URI.create(url.strip());
			return new Redis(uri.getHost(), (uri.getPort() != -1) ? uri.getPort() : 6379, "environment");
		}
		if (isDockerAvailable()) {
			GenericContainer<?> container = new GenericContainer<>(REDIS_IMAGE).withExposedPorts(6379);
			container.start();
			return new Redis(container.getHost(), container.getMappedPort(6379), "Testcontainers");
		}
		try {
			int port = freePort();
			RedisServer server = startEmbeddedRedis(port);
			Runtime.getRuntime().addShutdownHook(new Thread(() -> stopQuietly(server)));
			return new Redis("127.0.0.1", port, "embedded");
		}
		catch (IOException | RuntimeException ex) {
			throw new IllegalStateException("No Redis server for tests. " + HOW_TO.formatted(REDIS_URL), ex);
		}
	}

	private static Postgres resolvePostgres() {
		String url = System.getenv(JDBC_URL);
		if (url != null && !url.isBlank()) {
			return new Postgres(url.strip(), envOrDefault(JDBC_USERNAME, "postgres"), envOrDefault(JDBC_PASSWORD, ""),
					"environment");
		}
		if (isDockerAvailable()) {
			GenericContainer<?> container = new GenericContainer<>(POSTGRES_IMAGE).withExposedPorts(5432)
				.withEnv("POSTGRES_HOST_AUTH_METHOD", "trust")
				.withEnv("POSTGRES_DB", "test")
				.waitingFor(Wait.forLogMessage(".*database system is ready to accept connections.*", 2));
			container.start();
			return new Postgres(
					"jdbc:postgresql://" + container.getHost() + ":" + container.getMappedPort(5432) + "/test",
					"postgres", "", "Testcontainers");
		}
		try {
			EmbeddedPostgres server = EmbeddedPostgres.builder().start();
			Runtime.getRuntime().addShutdownHook(new Thread(() -> closeQuietly(server)));
			return new Postgres(server.getJdbcUrl("postgres", "postgres"), "postgres", "", "embedded");
		}
		catch (IOException | RuntimeException ex) {
			throw new IllegalStateException("No PostgreSQL server for tests. " + HOW_TO.formatted(JDBC_URL), ex);
		}
	}

	private static MariaDb resolveMariaDb() {
		String url = System.getenv(MARIADB_URL);
		if (url != null && !url.isBlank()) {
			MariaDb server = MariaDb.of(url.strip(), envOrDefault(MARIADB_USERNAME, "root"),
					envOrDefault(MARIADB_PASSWORD, ""), "environment");
			try {
				server.ping();
				return server;
			}
			catch (SQLException ex) {
				throw new IllegalStateException("No MariaDB server for tests: none answered at " + MARIADB_URL + "="
						+ url.strip() + " as " + server.username() + " (" + ex.getMessage() + "). " + MariaDb.HOW_TO,
						ex);
			}
		}
		if (isDockerAvailable()) {
			// the image's entry point starts a server without networking to create the
			// database, then the real one, which alone listens on 3306
			GenericContainer<?> container = new GenericContainer<>(MARIADB_IMAGE).withExposedPorts(3306)
				.withEnv("MARIADB_ALLOW_EMPTY_ROOT_PASSWORD", "1")
				.withEnv("MARIADB_DATABASE", "test")
				.waitingFor(Wait.forLogMessage(".*port: 3306.*", 1));
			container.start();
			return new MariaDb(container.getHost(), container.getMappedPort(3306), "test", "root", "",
					"Testcontainers");
		}
		MariaDb local = new MariaDb("127.0.0.1", 3306, "test", "root", "", "local server");
		try {
			local.ping();
			return local;
		}
		catch (SQLException ex) {
			throw new IllegalStateException(
					"No MariaDB server for tests: " + MARIADB_URL
							+ " is not set, there is no Docker engine for Testcontainers, and no server answered at"
							+ " 127.0.0.1:3306 as root without a password (" + ex.getMessage() + "). " + MariaDb.HOW_TO,
					ex);
		}
	}

	/**
	 * Start the embedded Redis 6.2 of the test class path on 127.0.0.1, keeping nothing
	 * on disk. The caller stops it.
	 * @param port the port to listen on
	 * @return the running server
	 * @throws IOException if the server cannot start
	 */
	public static RedisServer startEmbeddedRedis(int port) throws IOException {
		RedisServer server = RedisServer.newRedisServer()
			.bind("127.0.0.1")
			.port(port)
			.setting("save \"\"")
			.setting("appendonly no")
			.build();
		server.start();
		return server;
	}

	/**
	 * Return a port that was free a moment ago.
	 * @return the port
	 * @throws IOException if no port can be found
	 */
	public static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

	private static boolean isDockerAvailable() {
		// spare newcomers Testcontainers' error log when there is plainly no engine
		boolean socket = Files.exists(Path.of("/var/run/docker.sock"))
				|| Files.exists(Path.of(System.getProperty("user.home"), ".docker", "run", "docker.sock"));
		if (!socket && System.getenv("DOCKER_HOST") == null
				&& !Files.exists(Path.of(System.getProperty("user.home"), ".testcontainers.properties"))) {
			return false;
		}
		try {
			return DockerClientFactory.instance().isDockerAvailable();
		}
		catch (RuntimeException | LinkageError ex) {
			return false;
		}
	}

	private static String envOrDefault(String name, String defaultValue) {
		String value = System.getenv(name);
		return (value != null) ? value : defaultValue;
	}

	private static void stopQuietly(RedisServer server) {
		try {
			server.stop();
		}
		catch (IOException | RuntimeException ex) {
			// the JVM is exiting
		}
	}

	private static void closeQuietly(EmbeddedPostgres server) {
		try {
			server.close();
		}
		catch (IOException | RuntimeException ex) {
			// the JVM is exiting
		}
	}

	/**
	 * A Redis server.
	 *
	 * @param host the host
	 * @param port the port
	 * @param source where it came from: environment, Testcontainers or embedded
	 */
	public record Redis(String host, int port, String source) {

		/**
		 * Return a new, started connection factory for this server that waits 10 s for an
		 * answer. The caller destroys it.
		 * @return the connection factory
		 */
		public LettuceConnectionFactory connectionFactory() {
			return connectionFactory(Duration.ofSeconds(10));
		}

		/**
		 * Return a new, started connection factory for this server. The caller destroys
		 * it.
		 * @param commandTimeout how long a command waits for its answer
		 * @return the connection factory
		 */
		public LettuceConnectionFactory connectionFactory(Duration commandTimeout) {
			LettuceClientConfiguration client = LettuceClientConfiguration.builder()
				.commandTimeout(commandTimeout)
				.clientOptions(ClientOptions.builder()
					.socketOptions(SocketOptions.builder().connectTimeout(Duration.ofSeconds(5)).build())
					.build())
				.build();
			LettuceConnectionFactory factory = new LettuceConnectionFactory(
					new RedisStandaloneConfiguration(this.host, this.port), client);
			factory.afterPropertiesSet();
			factory.start();
			return factory;
		}

		/**
		 * Return the keys that start with a prefix, read with {@code SCAN} so that a
		 * server holding many other keys (a shared server, or one a benchmark filled)
		 * answers as fast as an empty one: {@code KEYS} walks the whole key space in one
		 * command.
		 * @param connection a connection to the server
		 * @param prefix the prefix, without glob characters
		 * @return the keys, each once
		 */
		public static List<byte[]> keys(RedisConnection connection, String prefix) {
			Map<String, byte[]> keys = new LinkedHashMap<>();
			ScanOptions options = ScanOptions.scanOptions().match(prefix + "*").count(1000).build();
			try (Cursor<byte[]> cursor = connection.keyCommands().scan(options)) {
				cursor.forEachRemaining((key) -> keys.put(new String(key, StandardCharsets.ISO_8859_1), key));
			}
			return new ArrayList<>(keys.values());
		}

		/**
		 * Return the Redis key of a record of the library's Redis store, as its
		 * documentation states it: <code>{keyPrefix}{<i>digest</i>}</code>, the digest of
		 * the idempotency key in unpadded base64url. A test that knows its key deletes or
		 * reads the record by name, without scanning the keyspace.
		 * @param prefix the store's key prefix
		 * @param digest the idempotency key's digest ({@code IdempotencyKey.digest()})
		 * @return the UTF-8 bytes of the key
		 */
		public static byte[] recordKey(String prefix, byte[] digest) {
			return (prefix + "{" + Base64.getUrlEncoder().withoutPadding().encodeToString(digest) + "}")
				.getBytes(StandardCharsets.UTF_8);
		}

		/**
		 * Delete the keys that start with a prefix.
		 * @param connection a connection to the server
		 * @param prefix the prefix, without glob characters
		 * @return how many keys were deleted
		 */
		public static long deleteKeys(RedisConnection connection, String prefix) {
			List<byte[]> keys = keys(connection, prefix);
			if (keys.isEmpty()) {
				return 0;
			}
			Long deleted = connection.keyCommands().del(keys.toArray(new byte[0][]));
			return (deleted != null) ? deleted : 0;
		}

	}

	/**
	 * A PostgreSQL server.
	 *
	 * @param jdbcUrl the JDBC URL
	 * @param username the user name
	 * @param password the password
	 * @param source where it came from: environment, Testcontainers or embedded
	 */
	public record Postgres(String jdbcUrl, String username, String password, String source) {

		/**
		 * Return a new pooled data source whose connections use the given schema,
		 * creating the schema if needed. The caller closes it (it is a
		 * {@link HikariDataSource}).
		 * @param schema the schema, a plain lower-case identifier
		 * @return the data source
		 */
		public HikariDataSource dataSource(String schema) {
			if (!schema.matches("[a-z_][a-z0-9_]*")) {
				throw new IllegalArgumentException("Schema must be a plain lower-case identifier: " + schema);
			}
			HikariConfig config = new HikariConfig();
			config.setJdbcUrl(this.jdbcUrl);
			config.setUsername(this.username);
			config.setPassword(this.password);
			config.setMaximumPoolSize(16);
			// connections on demand, and back to one after 10 s idle: Spring's test
			// context cache keeps the pools of many contexts open at once, and a server
			// with the default max_connections (100) must serve the whole suite
			config.setMinimumIdle(1);
			config.setIdleTimeout(10_000);
			// the store contract's races put 64 threads on these 16 connections, and the
			// pool does not queue its waiters in order: on a machine busy with other work
			// one of them may wait far longer than the race takes on a quiet one
			config.setConnectionTimeout(120_000);
			config.setPoolName("test-" + schema);
			HikariDataSource dataSource = new HikariDataSource(config);
			try (Connection connection = dataSource.getConnection();
					Statement statement = connection.createStatement()) {
				statement.execute("CREATE SCHEMA IF NOT EXISTS " + schema);
			}
			catch (SQLException ex) {
				dataSource.close();
				throw new IllegalStateException("Could not create schema " + schema + " on " + this.jdbcUrl, ex);
			}
			dataSource.close();
			config.setSchema(schema);
			config.setPoolName("test-" + schema + "-pool");
			return new HikariDataSource(config);
		}

		/**
		 * Drop a schema created by {@link #dataSource(String)} and everything in it.
		 * @param dataSource a data source of this server
		 * @param schema the schema
		 */
		public static void dropSchema(DataSource dataSource, String schema) {
			try (Connection connection = dataSource.getConnection();
					Statement statement = connection.createStatement()) {
				statement.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
			}
			catch (SQLException ex) {
				throw new UncheckedIOException(new IOException("Could not drop schema " + schema, ex));
			}
		}

	}

	/**
	 * A MariaDB server (10.6 or later), reached through either of the drivers
	 * applications use with it.
	 *
	 * @param host the host
	 * @param port the port
	 * @param database the database the server was named with ({@code test} unless the
	 * environment says otherwise); tests work in databases of their own
	 * ({@link #createDatabase(String)})
	 * @param username the user name, a user that may create databases
	 * @param password the password
	 * @param source where it came from: environment, Testcontainers or local server
	 */
	public record MariaDb(String host, int port, String database, String username, String password, String source) {

		static final String HOW_TO = "Provide a MariaDB server (10.6 or later) whose user may create databases,"
				+ " one of three ways: set " + MARIADB_URL + " (jdbc:mariadb://host:port/database, or a jdbc:mysql:"
				+ " URL), " + MARIADB_USERNAME + " and " + MARIADB_PASSWORD + "; start the local server"
				+ " ('service mariadb start', which listens on 127.0.0.1:3306 with root and no password); or"
				+ " run a Docker engine for Testcontainers (image " + MARIADB_IMAGE + "). See docs/testing.md.";

		private static final Pattern URL = Pattern
			.compile("jdbc:(?:mariadb|mysql)://(\\[[^\\]]+\\]|[^:/?;,]+)(?::(\\d+))?(?:/([^?;]*))?(?:[?;].*)?");

		private static final Pattern NAME = Pattern.compile("[a-z_][a-z0-9_]{0,63}");

		/**
		 * Return the server a JDBC URL of either driver names.
		 * @param url {@code jdbc:mariadb://host[:port][/database][?options]} or the same
		 * with {@code jdbc:mysql:}; the options are left out
		 * @param username the user name
		 * @param password the password
		 * @param source where the URL came from
		 * @return the server
		 * @throws IllegalStateException if the URL is not one of these
		 */
		public static MariaDb of(String url, String username, String password, String source) {
			Matcher matcher = URL.matcher(url);
			if (!matcher.matches()) {
				throw new IllegalStateException("A MariaDB URL is jdbc:mariadb://host:port/database or"
						+ " jdbc:mysql://host:port/database, not '" + url + "'. " + HOW_TO);
			}
			String host = matcher.group(1);
			if (host.startsWith("[")) {
				host = host.substring(1, host.length() - 1);
			}
			int port = (matcher.group(2) != null) ? Integer.parseInt(matcher.group(2)) : 3306;
			String database = (matcher.group(3) != null) ? matcher.group(3) : "";
			return new MariaDb(host, port, database, username, password, source);
		}

		/**
		 * Return the JDBC URL of a database of this server for a driver.
		 * @param database the database, or the empty string for none
		 * @param driver the driver
		 * @return the URL, without options
		 */
		public String jdbcUrl(String database, Driver driver) {
			String host = this.host.contains(":") ? "[" + this.host + "]" : this.host;
			return driver.scheme + host + ":" + this.port + "/" + database;
		}

		/**
		 * Create a database of the caller's own. Names are the caller's choice: a prefix
		 * of its own and a random suffix, so that tests beside it (and other clients of
		 * the server) never meet it.
		 * @param name the database, a plain lower-case identifier
		 * @throws IllegalStateException if it exists or the server refuses
		 */
		public void createDatabase(String name) {
			execute("CREATE DATABASE " + checkName(name));
		}

		/**
		 * Drop a database the caller created with {@link #createDatabase(String)} and
		 * everything in it; nothing happens if it is gone. Never pass a name that is not
		 * the caller's own.
		 * @param name the database
		 */
		public void dropDatabase(String name) {
			execute("DROP DATABASE IF EXISTS " + checkName(name));
		}

		/**
		 * Return a new pool of at most 10 connections on a database of this server. The
		 * caller closes it.
		 * @param database the database
		 * @param driver the driver
		 * @param connectionProperties the driver's connection properties, for example
		 * {@code useAffectedRows} or {@code useServerPrepStmts}
		 * @return the data source
		 */
		public HikariDataSource dataSource(String database, Driver driver, Map<String, String> connectionProperties) {
			return dataSource(database, driver, connectionProperties, 10);
		}

		/**
		 * Return a new pool on a database of this server. The caller closes it.
		 * @param database the database
		 * @param driver the driver
		 * @param connectionProperties the driver's connection properties, for example
		 * {@code useAffectedRows} or {@code useServerPrepStmts}
		 * @param maximumPoolSize how many connections the pool opens at most
		 * @return the data source
		 */
		public HikariDataSource dataSource(String database, Driver driver, Map<String, String> connectionProperties,
				int maximumPoolSize) {
			HikariConfig config = new HikariConfig();
			config.setJdbcUrl(jdbcUrl(checkName(database), driver));
			config.setDriverClassName(driver.className());
			config.setUsername(this.username);
			config.setPassword(this.password);
			config.setMaximumPoolSize(maximumPoolSize);
			// connections on demand, none kept idle: the server is shared, and the
			// default max_connections (151) must serve every pool of the suite
			config.setMinimumIdle(0);
			// as for PostgreSQL: the store contract's races put 64 threads on these
			// connections, and the pool does not queue its waiters in order, so on a
			// machine busy with other work one of them may wait far longer than the
			// race takes on a quiet one
			config.setConnectionTimeout(120_000);
			config.setPoolName("test-" + database + "-" + driver.name().toLowerCase(Locale.ROOT));
			connectionProperties.forEach(config::addDataSourceProperty);
			return new HikariDataSource(config);
		}

		/**
		 * Check that the server answers, within a few seconds.
		 * @throws SQLException if it does not
		 */
		public void ping() throws SQLException {
			try (Connection connection = connect()) {
				if (!connection.isValid(5)) {
					throw new SQLException("MariaDB at " + this.host + ":" + this.port + " did not answer");
				}
			}
		}

		private void execute(String sql) {
			try (Connection connection = connect(); Statement statement = connection.createStatement()) {
				statement.execute(sql);
			}
			catch (SQLException ex) {
				throw new IllegalStateException("MariaDB at " + this.host + ":" + this.port + " (" + this.source
						+ ", user " + this.username + ") refused '" + sql + "': " + ex.getMessage() + ". " + HOW_TO,
						ex);
			}
		}

		private Connection connect() throws SQLException {
			// no database: the user may create databases without rights on any other
			return DriverManager.getConnection(jdbcUrl("", Driver.MARIADB) + "?connectTimeout=5000", this.username,
					this.password);
		}

		private static String checkName(String name) {
			if (!NAME.matcher(name).matches()) {
				throw new IllegalArgumentException(
						"A test database name is a plain lower-case identifier of at most 64 characters: " + name);
			}
			return name;
		}

		/**
		 * The drivers applications reach MariaDB with.
		 */
		public enum Driver {

			/**
			 * MariaDB Connector/J ({@code jdbc:mariadb:}).
			 */
			MARIADB("org.mariadb.jdbc.Driver", "jdbc:mariadb://"),

			/**
			 * MySQL Connector/J ({@code jdbc:mysql:}), which talks to MariaDB as to a
			 * MySQL server and needs no option for it: MariaDB authenticates with
			 * {@code mysql_native_password}, so {@code allowPublicKeyRetrieval} is never
			 * asked for, and the default {@code sslMode=PREFERRED} uses TLS only when the
			 * server offers it.
			 */
			MYSQL("com.mysql.cj.jdbc.Driver", "jdbc:mysql://");

			private final String className;

			private final String scheme;

			Driver(String className, String scheme) {
				this.className = className;
				this.scheme = scheme;
			}

			/**
			 * Return the driver's class.
			 * @return the class name
			 */
			public String className() {
				return this.className;
			}

		}

	}

}
