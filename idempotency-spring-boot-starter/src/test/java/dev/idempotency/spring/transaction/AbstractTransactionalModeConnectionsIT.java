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

package dev.idempotency.spring.transaction;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.spring.transaction.TransactionalTestApplication.LedgerController;
import dev.idempotency.test.TcpProxy;
import dev.idempotency.test.servers.TestServers;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestInstance.Lifecycle;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The connections of the transactional mode, on a real PostgreSQL behind a
 * {@link TcpProxy}: a transactional request holds one connection of the pool from before
 * its claim until its commit. With a pool of {@value #POOL_SIZE} connections and a
 * connection timeout of {@value #CONNECTION_TIMEOUT_MILLIS} ms, a request that finds the
 * pool exhausted, or a handler that needs a second connection then, ends with an error
 * within about that time instead of waiting for ever; a database that stops answering
 * while a request's transaction is open is bounded by the driver's socket timeout
 * ({@value #SOCKET_TIMEOUT_SECONDS} s). Each time nothing of the failed request persists
 * and the retry runs the handler once. The application's pool goes through the proxy
 * (Redis, for the tiered store, does not); the test counts rows through a pool of its
 * own.
 *
 * @author Idempotency contributors
 */
@TestInstance(Lifecycle.PER_CLASS)
abstract class AbstractTransactionalModeConnectionsIT {

	private static final int POOL_SIZE = 2;

	private static final long CONNECTION_TIMEOUT_MILLIS = 1500;

	private static final int SOCKET_TIMEOUT_SECONDS = 5;

	// far above every bound under test: only a hang reaches it
	private static final Duration BOUND = Duration.ofSeconds(30);

	private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	private final String schema = "it_tx_pool_" + storeType() + "_" + Long.toHexString(System.nanoTime());

	private final String prefix = "it-tx-pool-" + storeType() + "-" + Long.toHexString(System.nanoTime()) + ":";

	private @Nullable LettuceConnectionFactory redis;

	private HikariDataSource testDataSource;

	private JdbcTemplate jdbc;

	private TcpProxy proxy;

	private HikariDataSource appDataSource;

	private ConfigurableApplicationContext app;

	/**
	 * Return the store type the application uses.
	 * @return {@code jdbc} or {@code tiered}
	 */
	abstract String storeType();

	@BeforeAll
	void start() throws IOException {
		TestServers.Postgres postgres = TestServers.postgres();
		this.testDataSource = postgres.dataSource(this.schema);
		this.jdbc = new JdbcTemplate(this.testDataSource);
		for (String statement : TransactionalTestApplication.SCHEMA_DDL.split(";")) {
			if (!statement.isBlank()) {
				this.jdbc.execute(statement);
			}
		}
		URI target = URI.create(postgres.jdbcUrl().substring("jdbc:".length()));
		this.proxy = TcpProxy.start(target.getHost(), (target.getPort() != -1) ? target.getPort() : 5432);
		HikariConfig config = new HikariConfig();
		config
			.setJdbcUrl(postgres.jdbcUrl().replace(target.getAuthority(), this.proxy.host() + ":" + this.proxy.port()));
		config.setUsername(postgres.username());
		config.setPassword(postgres.password());
		config.setSchema(this.schema);
		config.setPoolName("test-" + this.schema + "-app");
		config.setMaximumPoolSize(POOL_SIZE);
		// the pool refills itself, so that a test can wait for it to be full before it
		// holds every connection (see holdRequests)
		config.setMinimumIdle(POOL_SIZE);
		config.setConnectionTimeout(CONNECTION_TIMEOUT_MILLIS);
		config.setValidationTimeout(1000);
		// what bounds a statement, a commit or a
		// login to a database that stopped answering
		config.addDataSourceProperty("socketTimeout", String.valueOf(SOCKET_TIMEOUT_SECONDS));
		this.appDataSource = new HikariDataSource(config);
		if (storeType().equals("tiered")) {
			this.redis = TestServers.redis().connectionFactory();
		}
		this.app = startApplication(this.appDataSource);
	}

	@AfterAll
	void stop() {
		if (this.redis != null) {
			deleteRedisKeys(this.redis);
		}
		// the application destroys the connection factory it was given
		if (this.app != null) {
			this.app.close();
		}
		if (this.appDataSource != null) {
			this.appDataSource.close();
		}
		if (this.proxy != null) {
			this.proxy.close();
		}
		if (this.testDataSource != null) {
			TestServers.Postgres.dropSchema(this.testDataSource, this.schema);
			this.testDataSource.close();
		}
	}

	@AfterEach
	void resumeNetwork() {
		this.proxy.resume();
	}

	@Test
	void requestThatFindsThePoolExhaustedIsAnsweredWithAProblemNotAHang() throws Exception {
		List<String> held = List.of(newKey(), newKey());
		List<CompletableFuture<HttpResponse<String>>> holders = holdRequests(held, Map.of());
		try {
			// every connection of the pool is in a request's transaction
			assertThat(this.appDataSource.getHikariPoolMXBean().getActiveConnections()).isEqualTo(POOL_SIZE);
			String refused = newKey();
			long started = System.nanoTime();
			HttpResponse<String> response = post(refused, Map.of());
			Duration waited = Duration.ofNanos(System.nanoTime() - started);
			assertStoreUnavailable(response);
			// it waited for a connection, and no longer than the pool lets it
			assertThat(waited).isGreaterThanOrEqualTo(Duration.ofMillis(CONNECTION_TIMEOUT_MILLIS - 100))
				.isLessThan(BOUND);
			assertThat(entries(refused)).isZero();
			assertThat(recordStatus(refused)).isNull();
			releaseAll(held);
			for (CompletableFuture<HttpResponse<String>> holder : holders) {
				assertThat(holder.get(BOUND.toSeconds(), TimeUnit.SECONDS).statusCode()).isEqualTo(201);
			}
			for (String key : held) {
				assertThat(entries(key)).isOne();
				assertThat(recordStatus(key)).isEqualTo("C");
			}
			assertThat(post(refused, Map.of()).statusCode()).isEqualTo(201);
			assertThat(entries(refused)).isOne();
		}
		finally {
			releaseAll(held);
		}
	}

	@Test
	void handlerThatNeedsASecondConnectionOfAnExhaustedPoolFailsInsteadOfDeadlocking() throws Exception {
		String needy = newKey();
		String other = newKey();
		List<CompletableFuture<HttpResponse<String>>> holders = holdRequests(List.of(needy, other),
				Map.of("X-Audit", "true"));
		try {
			assertThat(this.appDataSource.getHikariPoolMXBean().getActiveConnections()).isEqualTo(POOL_SIZE);
			// its REQUIRES_NEW audit needs a connection that the other request holds
			long started = System.nanoTime();
			controller().release(needy);
			HttpResponse<String> failed = holders.get(0).get(BOUND.toSeconds(), TimeUnit.SECONDS);
			Duration waited = Duration.ofNanos(System.nanoTime() - started);
			assertThat(failed.statusCode()).isEqualTo(500);
			assertThat(waited).isGreaterThanOrEqualTo(Duration.ofMillis(CONNECTION_TIMEOUT_MILLIS - 100))
				.isLessThan(BOUND);
			// neither its ledger entry nor its claim: the transaction rolled back
			assertThat(entries(needy)).isZero();
			assertThat(audits(needy)).isZero();
			assertThat(recordStatus(needy)).isNull();
			// now the pool has a connection to spare for the other's audit
			controller().release(other);
			assertThat(holders.get(1).get(BOUND.toSeconds(), TimeUnit.SECONDS).statusCode()).isEqualTo(201);
			assertThat(entries(other)).isOne();
			assertThat(audits(other)).isOne();
			HttpResponse<String> retry = post(needy, Map.of("X-Audit", "true"));
			assertThat(retry.statusCode()).isEqualTo(201);
			assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
			assertThat(entries(needy)).isOne();
			assertThat(audits(needy)).isOne();
			assertThat(recordStatus(needy)).isEqualTo("C");
		}
		finally {
			releaseAll(List.of(needy, other));
		}
	}

	@Test
	void idempotentMethodOfARequestCompletesOnTheRequestsConnectionAndNeverRunsTwice() throws Exception {
		// one connection per request in flight, as the sizing rule has it: another
		// request holds the first, this one takes the second
		String other = newKey();
		List<CompletableFuture<HttpResponse<String>>> holders = holdRequests(List.of(other), Map.of());
		String key = newKey();
		String nestedKey = newKey();
		try {
			HttpResponse<String> response = post(key, Map.of("X-Nested", nestedKey));
			assertThat(response.statusCode()).isEqualTo(201);
			assertThat(response.body()).contains("\"nested\":[\"applied " + nestedKey + "\"]");
			// completed before the request's commit, on its connection: nothing was left
			// to do after it on a connection the pool did not have
			assertThat(recordStatus(nestedKey)).isEqualTo("C");
			assertThat(recordStatus(key)).isEqualTo("C");
			assertThat(nestedEntries(nestedKey)).isOne();
			assertThat(nested().runs(nestedKey)).isOne();
		}
		finally {
			releaseAll(List.of(other));
		}
		assertThat(holders.get(0).get(BOUND.toSeconds(), TimeUnit.SECONDS).statusCode()).isEqualTo(201);
		// long after the method's lease (900 ms) would have lapsed: a later call, outside
		// any request, is a replay
		HttpResponse<String> later = post(newKey(), Map.of("X-Nested", nestedKey));
		assertThat(later.statusCode()).isEqualTo(201);
		assertThat(later.body()).contains("\"nested\":[\"applied " + nestedKey + "\"]");
		assertThat(nested().apply(nestedKey, 0)).isEqualTo("applied " + nestedKey);
		assertThat(nested().runs(nestedKey)).isOne();
		assertThat(nestedEntries(nestedKey)).isOne();
	}

	@Test
	void requestsThatEachNeedASecondConnectionOfAnExhaustedPoolEndInsteadOfDeadlocking() throws Exception {
		List<String> keys = List.of(newKey(), newKey());
		List<CompletableFuture<HttpResponse<String>>> holders = holdRequests(keys, Map.of("X-Audit", "true"));
		int failed = 0;
		try {
			assertThat(this.appDataSource.getHikariPoolMXBean().getActiveConnections()).isEqualTo(POOL_SIZE);
			// each waits for the connection the other holds
			releaseAll(keys);
			for (int i = 0; i < keys.size(); i++) {
				String key = keys.get(i);
				int status = holders.get(i).get(BOUND.toSeconds(), TimeUnit.SECONDS).statusCode();
				// one may get the connection the other gave up on time-out
				assertThat(status).isIn(201, 500);
				boolean created = status == 201;
				failed += created ? 0 : 1;
				assertThat(entries(key)).isEqualTo(created ? 1 : 0);
				assertThat(audits(key)).isEqualTo(created ? 1 : 0);
				assertThat(recordStatus(key)).isEqualTo(created ? "C" : null);
			}
		}
		finally {
			releaseAll(keys);
		}
		assertThat(failed).isPositive();
		for (String key : keys) {
			assertThat(post(key, Map.of("X-Audit", "true")).statusCode()).isEqualTo(201);
			assertThat(entries(key)).isOne();
			assertThat(audits(key)).isOne();
		}
	}

	@Test
	void databaseThatStopsAnsweringDuringTheHandlerEndsTheRequestWithAProblemAndTheRetryRunsOnce() throws Exception {
		String key = newKey();
		List<CompletableFuture<HttpResponse<String>>> holders = holdRequests(List.of(key), Map.of());
		long started;
		try {
			// claimed and written, uncommitted: now PostgreSQL stops answering
			this.proxy.pause();
			started = System.nanoTime();
			controller().release(key);
			// a new request meanwhile is bounded too (pool or socket time-out)
			String other = newKey();
			HttpResponse<String> meanwhile = post(other, Map.of());
			assertStoreUnavailable(meanwhile);
			HttpResponse<String> hung = holders.get(0).get(BOUND.toSeconds(), TimeUnit.SECONDS);
			Duration waited = Duration.ofNanos(System.nanoTime() - started);
			// the completion's statement never got an answer: the socket timeout ended it
			assertStoreUnavailable(hung);
			assertThat(hung.body()).doesNotContain("\"entries\"");
			assertThat(waited).isGreaterThanOrEqualTo(Duration.ofSeconds(SOCKET_TIMEOUT_SECONDS - 1)).isLessThan(BOUND);
		}
		finally {
			this.proxy.resume();
			releaseAll(List.of(key));
		}
		// the server ends the abandoned session, rolling its transaction back
		HttpResponse<String> retry = awaitNotInFlight(key);
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(entries(key)).isOne();
		assertThat(recordStatus(key)).isEqualTo("C");
		HttpResponse<String> replay = post(key, Map.of());
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(entries(key)).isOne();
	}

	@Test
	void databaseThatStopsAnsweringAtTheCommitEndsTheRequestWithAProblemAndTheHandlerRunsOnce() throws Exception {
		String key = newKey();
		// the completion is written, the COMMIT is about to be sent
		controller().beforeCommit(key, this.proxy::pause);
		HttpResponse<String> hung;
		long started = System.nanoTime();
		try {
			hung = post(key, Map.of());
		}
		finally {
			this.proxy.resume();
		}
		Duration waited = Duration.ofNanos(System.nanoTime() - started);
		assertThat(hung.statusCode()).isEqualTo(503);
		assertThat(hung.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(hung.headers().firstValue("Retry-After")).isPresent();
		// not "not processed": the COMMIT was sent, its answer never came
		assertThat(hung.body()).contains("idempotency-store-unavailable")
			.contains("whether it was processed is unknown")
			.doesNotContain("\"entries\"");
		assertThat(waited).isGreaterThanOrEqualTo(Duration.ofSeconds(SOCKET_TIMEOUT_SECONDS - 1)).isLessThan(BOUND);
		// the COMMIT reaches the server once the network is back, or never: the outcome
		// is unknown, and either way the handler's work persists at most once
		HttpResponse<String> retry = awaitNotInFlight(key);
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(entries(key)).isOne();
		assertThat(recordStatus(key)).isEqualTo("C");
		HttpResponse<String> replay = post(key, Map.of());
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(replay.body()).isEqualTo(retry.body());
		assertThat(entries(key)).isOne();
	}

	private List<CompletableFuture<HttpResponse<String>>> holdRequests(List<String> keys, Map<String, String> headers)
			throws InterruptedException {
		// every connection open and idle first: opening one (a PostgreSQL backend,
		// through
		// the proxy) took longer than the pool's 1.5 s connection time-out on a machine
		// whose
		// cores were all taken, and the request that waited for it was refused before its
		// handler; what these tests exhaust is the pool, not the server's patience
		long deadline = System.nanoTime() + BOUND.toNanos();
		while (this.appDataSource.getHikariPoolMXBean().getIdleConnections() < POOL_SIZE
				&& System.nanoTime() < deadline) {
			Thread.sleep(50);
		}
		assertThat(this.appDataSource.getHikariPoolMXBean().getIdleConnections()).as("idle connections of the pool")
			.isEqualTo(POOL_SIZE);
		LedgerController controller = controller();
		List<CompletableFuture<HttpResponse<String>>> requests = keys.stream().map((key) -> {
			controller.hold(key);
			return CompletableFuture.supplyAsync(() -> {
				try {
					return post(key, headers);
				}
				catch (IOException | InterruptedException ex) {
					throw new IllegalStateException(ex);
				}
			});
		}).toList();
		for (String key : keys) {
			if (!controller.awaitEntered(key)) {
				// let the others end, or they would hold the pool for the tests after
				// this one
				releaseAll(keys);
				throw new AssertionError("request " + key + " did not reach its handler");
			}
		}
		return requests;
	}

	private void releaseAll(List<String> keys) {
		for (String key : keys) {
			controller().release(key);
		}
	}

	// a retry finds the key held until the server rolled the session's transaction back
	private HttpResponse<String> awaitNotInFlight(String key) throws Exception {
		long deadline = System.nanoTime() + BOUND.toNanos();
		while (true) {
			HttpResponse<String> response = post(key, Map.of());
			if ((response.statusCode() != 409 && response.statusCode() != 503) || System.nanoTime() > deadline) {
				return response;
			}
			Thread.sleep(200);
		}
	}

	private static void assertStoreUnavailable(HttpResponse<String> response) {
		assertThat(response.statusCode()).isEqualTo(503);
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(response.body()).contains("idempotency-store-unavailable").contains("not processed");
		assertThat(response.headers().firstValue("Retry-After")).isPresent();
	}

	private ConfigurableApplicationContext startApplication(DataSource dataSource) {
		Map<String, Object> properties = TransactionalTestApplication.properties(storeType(), this.prefix);
		LettuceConnectionFactory redis = this.redis;
		return new SpringApplicationBuilder(TransactionalTestApplication.class).properties(properties)
			.initializers((context) -> {
				GenericApplicationContext generic = (GenericApplicationContext) context;
				if (redis != null) {
					generic.registerBean("redisConnectionFactory", LettuceConnectionFactory.class, () -> redis);
				}
				generic.registerBean("dataSource", DataSource.class, () -> dataSource,
						(definition) -> definition.setDestroyMethodName(""));
			})
			.run();
	}

	private HttpResponse<String> post(String key, Map<String, String> headers)
			throws IOException, InterruptedException {
		int port = ((WebServerApplicationContext) this.app).getWebServer().getPort();
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/ledger"))
			.header("Content-Type", "text/plain")
			.header("Idempotency-Key", key)
			.timeout(BOUND.multipliedBy(2))
			.POST(BodyPublishers.ofString("pooled", StandardCharsets.UTF_8));
		headers.forEach(request::header);
		return this.client.send(request.build(), BodyHandlers.ofString(StandardCharsets.UTF_8));
	}

	private LedgerController controller() {
		return this.app.getBean(LedgerController.class);
	}

	private long entries(String key) {
		return new LedgerRows(this.jdbc).count("ledger_entry", key);
	}

	private long nestedEntries(String key) {
		return new LedgerRows(this.jdbc).count("nested_entry", key);
	}

	private TransactionalTestApplication.NestedWork nested() {
		return this.app.getBean(TransactionalTestApplication.NestedWork.class);
	}

	private long audits(String key) {
		return new LedgerRows(this.jdbc).count("audit_entry", key);
	}

	private @Nullable String recordStatus(String key) {
		return new LedgerRows(this.jdbc).recordStatus(key);
	}

	private void deleteRedisKeys(LettuceConnectionFactory redis) {
		try (var connection = redis.getConnection()) {
			TestServers.Redis.deleteKeys(connection, this.prefix);
		}
	}

	private static String newKey() {
		return UUID.randomUUID().toString();
	}

}
