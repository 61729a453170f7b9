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

package dev.idempotency.sample.reliability;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.sample.payments.PaymentsApplication;
import dev.idempotency.sample.payments.Race;
import dev.idempotency.sample.payments.TestDatabase;
import dev.idempotency.spring.store.tiered.TieredIdempotencyStore;
import dev.idempotency.test.TcpProxy;
import dev.idempotency.test.servers.TestServers;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.RowCallbackHandler;
import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Several instances of the payments sample, each a Spring context of its own on a random
 * port, sharing one real Redis and one real database, PostgreSQL or MariaDB: the servers
 * of {@link TestServers}, in a schema or database ({@link TestDatabase.Namespace}) and
 * under a Redis key prefix of their own that are removed on {@link #close()}. On MariaDB
 * the instances run with the sample's profile {@code mariadb}. With {@code proxied}, each
 * instance reaches Redis and the database through its own {@link TcpProxy}, so that a
 * test can cut either server off from every instance and restore it.
 * <p>
 * Time-outs are short so that faults cost seconds: Redis command and connect time-outs 1
 * s with proxies (2 s, the sample's, without), Hikari connection time-out 2 s with
 * proxies, lock timeout 2 s, the tiered store's breaker open for 500 ms.
 * {@link HandlerRuns} counts how often each instance ran the payment and account
 * handlers, per user and key.
 *
 * @author Idempotency contributors
 */
final class PaymentsCluster implements AutoCloseable {

	private static final Pattern ID = Pattern.compile("\"id\":\"([0-9a-f-]{36})\"");

	private final String schema;

	private final TestDatabase.Namespace namespace;

	private final Map<String, ?> overrides;

	private final List<Instance> instances = new ArrayList<>();

	private final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(30))
		.build();

	private final HikariDataSource dataSource = new HikariDataSource();

	private final JdbcClient jdbc;

	private final RedisClient redisClient;

	private final StatefulRedisConnection<String, String> redisConnection;

	private PaymentsCluster(TestDatabase database, String name, Map<String, ?> overrides) {
		this.schema = name + "_" + Long.toHexString(System.nanoTime());
		this.namespace = database.create(this.schema);
		this.overrides = overrides;
		// the test's own connections, never through the proxies
		this.dataSource.setJdbcUrl(this.namespace.testJdbcUrl());
		this.dataSource.setUsername(this.namespace.username());
		this.dataSource.setPassword(this.namespace.password());
		this.dataSource.setMaximumPoolSize(2);
		this.dataSource.setPoolName("payments-cluster-test");
		this.jdbc = JdbcClient.create(this.dataSource);
		TestServers.Redis redis = TestServers.redis();
		this.redisClient = RedisClient.create(RedisURI.create(redis.host(), redis.port()));
		this.redisConnection = this.redisClient.connect();
	}

	/**
	 * Start instances of the sample on PostgreSQL with the tiered store, one after the
	 * other.
	 * @param name prefix of the schema and Redis key prefix, unique per test class
	 * @param size how many instances
	 * @param proxied whether each instance reaches the servers through proxies of its own
	 * @return the running cluster
	 */
	static PaymentsCluster start(String name, int size, boolean proxied) {
		return start(TestDatabase.POSTGRESQL, name, size, proxied, Map.of());
	}

	/**
	 * Start instances of the sample, one after the other.
	 * @param database the database they share
	 * @param name prefix of the schema or database and of the Redis key prefix, unique
	 * per test class
	 * @param size how many instances
	 * @param proxied whether each instance reaches the servers through proxies of its own
	 * @param overrides properties that replace the cluster's, such as
	 * {@code idempotency.store.type=jdbc} (the database alone) for {@code tiered}
	 * @return the running cluster
	 */
	static PaymentsCluster start(TestDatabase database, String name, int size, boolean proxied,
			Map<String, ?> overrides) {
		PaymentsCluster cluster = new PaymentsCluster(database, name, overrides);
		try {
			for (int i = 0; i < size; i++) {
				cluster.instances.add(cluster.startInstance(i, proxied));
			}
			return cluster;
		}
		catch (RuntimeException | IOException ex) {
			cluster.close();
			throw (ex instanceof IOException io) ? new UncheckedIOException(io) : (RuntimeException) ex;
		}
	}

	private Instance startInstance(int index, boolean proxied) throws IOException {
		TestServers.Redis redis = TestServers.redis();
		TcpProxy redisProxy = null;
		TcpProxy databaseProxy = null;
		String redisHost = redis.host();
		int redisPort = redis.port();
		// short enough for a cut to cost little, long enough for a busy machine
		String redisTimeout = (proxied) ? "1s" : "2s";
		String databaseTimeout = (proxied) ? "2000" : "10000";
		Map<String, Object> properties;
		if (proxied) {
			redisProxy = TcpProxy.start(redis.host(), redis.port());
			databaseProxy = TcpProxy.start(this.namespace.host(), this.namespace.port());
			redisHost = redisProxy.host();
			redisPort = redisProxy.port();
			properties = new LinkedHashMap<>(
					this.namespace.springProperties(databaseProxy.host(), databaseProxy.port()));
		}
		else {
			properties = new LinkedHashMap<>(this.namespace.springProperties());
		}
		try {
			// command-line arguments win over the sample's application.yml; the
			// socket time-out is longer than its 3 s: at start-up the migration
			// waits for a lock that every migration on the server takes (PostgreSQL's
			// advisory lock, MariaDB's named lock), and a busy server can make it wait
			// longer (the tests cut the database, never hang it, so no test waits for
			// this time-out)
			properties.put("server.port", 0);
			properties.put("spring.main.banner-mode", "off");
			properties.put("spring.application.name", "payments-" + this.schema + "-" + index);
			properties.put("spring.datasource.hikari.connection-timeout", databaseTimeout);
			properties.put("spring.datasource.hikari.maximum-pool-size", 5);
			properties.put("spring.datasource.hikari.minimum-idle", 1);
			properties.put("spring.datasource.hikari.validation-timeout", 500);
			properties.put("spring.datasource.hikari.data-source-properties.socketTimeout",
					this.namespace.socketTimeout(Duration.ofSeconds(30)));
			properties.put("spring.data.redis.host", redisHost);
			properties.put("spring.data.redis.port", redisPort);
			properties.put("spring.data.redis.timeout", redisTimeout);
			properties.put("spring.data.redis.connect-timeout", redisTimeout);
			properties.put("idempotency.store.type", "tiered");
			properties.put("idempotency.redis.key-prefix", this.schema + ":");
			properties.put("idempotency.lock-timeout", "2s");
			properties.put("idempotency.tiered.open-duration", "500ms");
			properties.put("idempotency.jdbc.cleanup.enabled", false);
			properties.put("logging.level.io.lettuce.core", "ERROR");
			properties.put("logging.level.com.zaxxer.hikari", "ERROR");
			properties.putAll(this.overrides);
			String[] args = properties.entrySet()
				.stream()
				.map((property) -> "--" + property.getKey() + "=" + property.getValue())
				.toArray(String[]::new);
			ConfigurableApplicationContext context = new SpringApplicationBuilder(PaymentsApplication.class,
					HandlerRuns.CountingConfiguration.class)
				.main(PaymentsApplication.class)
				.run(args);
			return new Instance(index, context, redisProxy, databaseProxy);
		}
		catch (RuntimeException ex) {
			closeQuietly(redisProxy);
			closeQuietly(databaseProxy);
			throw ex;
		}
	}

	Instance instance(int index) {
		return this.instances.get(index);
	}

	int size() {
		return this.instances.size();
	}

	String schema() {
		return this.schema;
	}

	TestDatabase database() {
		return this.namespace.database();
	}

	JdbcClient jdbc() {
		return this.jdbc;
	}

	RedisCommands<String, String> redis() {
		return this.redisConnection.sync();
	}

	/**
	 * Send a JSON {@code POST} as a demo user to one instance.
	 * @param instance the instance's index
	 * @param user {@code alice} or {@code bob}
	 * @param path the path
	 * @param json the body
	 * @param headers further header names and values
	 * @return the response
	 */
	HttpResponse<byte[]> post(int instance, String user, String path, String json, String... headers) {
		String credentials = user + ":" + user + "-secret";
		HttpRequest.Builder request = HttpRequest
			.newBuilder(URI.create("http://localhost:" + instance(instance).port() + path))
			.timeout(Duration.ofSeconds(60))
			.header("Authorization",
					"Basic " + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8)))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(json));
		if (headers.length > 0) {
			request.headers(headers);
		}
		try {
			return this.http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Pay with an idempotency key.
	 * @param instance the instance's index
	 * @param user the paying user
	 * @param json the payment
	 * @param key the idempotency key
	 * @param headers further header names and values
	 * @return the response
	 */
	HttpResponse<byte[]> pay(int instance, String user, String json, String key, String... headers) {
		String[] all = new String[headers.length + 2];
		all[0] = "Idempotency-Key";
		all[1] = key;
		System.arraycopy(headers, 0, all, 2, headers.length);
		return post(instance, user, "/payments", json, all);
	}

	/**
	 * Open an account through an instance.
	 * @param instance the instance's index
	 * @param user the owner
	 * @param balance the opening balance
	 * @return the account's id
	 */
	String openAccount(int instance, String user, long balance) {
		HttpResponse<byte[]> response = post(instance, user, "/accounts",
				"{\"currency\":\"EUR\",\"initialBalance\":" + balance + "}", "Idempotency-Key",
				"account-" + UUID.randomUUID());
		assertThat(response.statusCode()).as("open account: %s", text(response)).isEqualTo(201);
		return id(response);
	}

	/**
	 * Return how often the instances ran the payment handler for a user's key.
	 * @param user the user
	 * @param key the idempotency key
	 * @return the sum over all instances
	 */
	int handlerRuns(String user, String key) {
		return this.instances.stream().mapToInt((instance) -> instance.handlerRuns().runs(user, key)).sum();
	}

	/**
	 * Return how often the instances ran the payment handler at all.
	 * @return the sum over all instances
	 */
	int handlerRuns() {
		return this.instances.stream().mapToInt((instance) -> instance.handlerRuns().total()).sum();
	}

	long payments(String user, String key) {
		return this.jdbc.sql("SELECT count(*) FROM payments WHERE owner = ? AND idempotency_key = ?")
			.params(user, key)
			.query(Long.class)
			.single();
	}

	/**
	 * Return the payments of a user, counted per idempotency key.
	 * @param user the user
	 * @return the count of payments per key
	 */
	Map<String, Long> paymentsPerKey(String user) {
		Map<String, Long> counts = new HashMap<>();
		RowCallbackHandler count = (rs) -> counts.put(rs.getString("idempotency_key"), rs.getLong("n"));
		this.jdbc.sql("SELECT idempotency_key, count(*) AS n FROM payments WHERE owner = ? GROUP BY idempotency_key")
			.param(user)
			.query(count);
		return counts;
	}

	long paymentsOn(String account) {
		return this.jdbc.sql("SELECT count(*) FROM payments WHERE account_id = ?")
			.param(UUID.fromString(account))
			.query(Long.class)
			.single();
	}

	long charges() {
		return this.jdbc.sql("SELECT count(*) FROM gateway_charges").query(Long.class).single();
	}

	long chargesFor(String account) {
		return this.jdbc
			.sql("SELECT count(*) FROM gateway_charges WHERE id IN (SELECT gateway_charge FROM payments"
					+ " WHERE account_id = ?)")
			.param(UUID.fromString(account))
			.query(Long.class)
			.single();
	}

	long accountsWithBalance(String owner, long balance) {
		return this.jdbc.sql("SELECT count(*) FROM accounts WHERE owner = ? AND balance = ?")
			.params(owner, balance)
			.query(Long.class)
			.single();
	}

	long balance(String account) {
		return this.jdbc.sql("SELECT balance FROM accounts WHERE id = ?")
			.param(UUID.fromString(account))
			.query(Long.class)
			.single();
	}

	/**
	 * Return the idempotency records the database holds for a key, in every scope.
	 * @param key the idempotency key
	 * @return the number of rows
	 */
	long durableRecords(String key) {
		return this.jdbc.sql("SELECT count(*) FROM idempotency_record WHERE idem_key = ?")
			.param(key)
			.query(Long.class)
			.single();
	}

	/**
	 * Return the keys Redis holds under this cluster's prefix.
	 * @return the keys
	 */
	List<String> redisKeys() {
		List<String> keys = new ArrayList<>();
		ScanArgs match = ScanArgs.Builder.matches(this.schema + ":*").limit(500);
		KeyScanCursor<String> cursor = redis().scan(match);
		keys.addAll(cursor.getKeys());
		while (!cursor.isFinished()) {
			cursor = redis().scan(ScanCursor.of(cursor.getCursor()), match);
			keys.addAll(cursor.getKeys());
		}
		return keys;
	}

	/**
	 * Delete every key of this cluster from Redis, as an eviction, a failover to an empty
	 * replica or a restart without persistence would. Other clients' keys are left alone.
	 * @return how many keys were deleted
	 */
	long deleteRedisKeys() {
		List<String> keys = redisKeys();
		return keys.isEmpty() ? 0 : redis().del(keys.toArray(new String[0]));
	}

	void cutRedis() {
		this.instances.forEach((instance) -> instance.redisProxy().cut());
	}

	void restoreRedis() {
		this.instances.forEach((instance) -> instance.redisProxy().restore());
	}

	void cutDatabase() {
		this.instances.forEach((instance) -> instance.databaseProxy().cut());
	}

	void restoreDatabase() {
		this.instances.forEach((instance) -> instance.databaseProxy().restore());
	}

	@Override
	public void close() {
		for (Instance instance : this.instances) {
			instance.close();
		}
		this.instances.clear();
		try {
			deleteRedisKeys();
		}
		finally {
			this.redisConnection.close();
			this.redisClient.shutdown();
			// the schema or database is this cluster's own
			try {
				this.dataSource.close();
			}
			finally {
				this.namespace.close();
			}
		}
	}

	static String text(HttpResponse<byte[]> response) {
		return new String(response.body(), StandardCharsets.UTF_8);
	}

	static String id(HttpResponse<byte[]> response) {
		Matcher matcher = ID.matcher(text(response));
		assertThat(matcher.find()).as("id in %s", text(response)).isTrue();
		return matcher.group(1);
	}

	static boolean isReplay(HttpResponse<byte[]> response) {
		return response.headers().firstValue("Idempotent-Replayed").filter("true"::equals).isPresent();
	}

	static String paymentJson(String account, long amount, String description) {
		return "{\"accountId\":\"" + account + "\",\"amount\":" + amount + ",\"currency\":\"EUR\",\"description\":\""
				+ description + "\"}";
	}

	/**
	 * Send requests all at once: one thread each, released together by a latch.
	 * @param count how many requests
	 * @param request sends the request of the given index
	 * @return the responses, in index order
	 * @throws Exception if a request failed
	 */
	static List<HttpResponse<byte[]>> race(int count, Request request) throws Exception {
		return Race.of(count, request::send);
	}

	/**
	 * Send one request per item from a few threads, as a client with a connection pool
	 * would.
	 * @param <T> the type of the items
	 * @param threads how many threads
	 * @param items the items
	 * @param request sends the request for an item
	 * @return the responses, in the items' order
	 * @throws Exception if a request failed
	 */
	static <T> List<HttpResponse<byte[]>> parallel(int threads, List<T> items,
			Function<T, HttpResponse<byte[]>> request) throws Exception {
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		try {
			List<Future<HttpResponse<byte[]>>> futures = new ArrayList<>();
			for (T item : items) {
				futures.add(executor.submit(() -> request.apply(item)));
			}
			List<HttpResponse<byte[]>> responses = new ArrayList<>();
			for (Future<HttpResponse<byte[]>> future : futures) {
				responses.add(future.get(2, TimeUnit.MINUTES));
			}
			return responses;
		}
		finally {
			executor.shutdownNow();
		}
	}

	/**
	 * Wait for a condition, polling it every 50 ms.
	 * @param timeout how long to wait at most
	 * @param what what is awaited, for the failure message
	 * @param condition the condition
	 */
	static void await(Duration timeout, String what, BooleanSupplier condition) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (!condition.getAsBoolean()) {
			assertThat(System.nanoTime() - deadline).as("timed out after %s waiting for %s", timeout, what)
				.isNegative();
			try {
				TimeUnit.MILLISECONDS.sleep(50);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
	}

	private static void closeQuietly(AutoCloseable closeable) {
		if (closeable != null) {
			try {
				closeable.close();
			}
			catch (Exception ex) {
				// nothing left to do
			}
		}
	}

	/**
	 * One running instance of the sample.
	 *
	 * @param index its index in the cluster
	 * @param context its application context
	 * @param redisProxy the proxy it reaches Redis through, {@code null} if none
	 * @param databaseProxy the proxy it reaches the database through, {@code null} if
	 * none
	 */
	record Instance(int index, ConfigurableApplicationContext context, TcpProxy redisProxy, TcpProxy databaseProxy) {

		int port() {
			return ((WebServerApplicationContext) this.context).getWebServer().getPort();
		}

		HandlerRuns handlerRuns() {
			return this.context.getBean(HandlerRuns.class);
		}

		TieredIdempotencyStore store() {
			return this.context.getBean(TieredIdempotencyStore.class);
		}

		/**
		 * Return the tiered store's fallbacks to the database alone so far.
		 * @return the count of {@code idempotency.tier.fallbacks}, all tags
		 */
		double fallbacks() {
			return this.context.getBean(MeterRegistry.class)
				.find("idempotency.tier.fallbacks")
				.counters()
				.stream()
				.mapToDouble(Counter::count)
				.sum();
		}

		void close() {
			try {
				this.context.close();
			}
			finally {
				closeQuietly(this.redisProxy);
				closeQuietly(this.databaseProxy);
			}
		}

	}

	/**
	 * One request of a race.
	 */
	@FunctionalInterface
	interface Request {

		HttpResponse<byte[]> send(int index);

	}

}
