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

package dev.idempotency.spring.reliability;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.spring.metrics.IdempotencyMetrics;
import dev.idempotency.spring.metrics.MeteredIdempotencyStore;
import dev.idempotency.spring.observation.DefaultIdempotencyObservationConvention;
import dev.idempotency.spring.reliability.ReliabilityTestApplication.WorkController;
import dev.idempotency.test.TcpProxy;
import dev.idempotency.test.servers.TestServers;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestInstance.Lifecycle;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Reliability scenarios over real HTTP, with two application instances sharing real
 * stores: instance A reaches its stores through {@link TcpProxy TCP proxies} that the
 * test can pause, instance B reaches them directly. Every handler run is counted.
 * <ul>
 * <li>A handler that runs three times longer than {@code lock-timeout} keeps its lease by
 * heartbeat: duplicates, on either instance, get {@code 409} until it completes, then the
 * replay, and the handler runs once.
 * <li>An owner whose lease was taken over while its store connections were paused cannot
 * overwrite the new owner's response: its completion is fenced (and counted), its client
 * gets the response its handler produced, unstored, and every retry replays the new
 * owner's bytes.
 * </ul>
 *
 * @author Idempotency contributors
 */
@TestInstance(Lifecycle.PER_CLASS)
abstract class AbstractReliabilityIT {

	static final Duration LOCK_TIMEOUT = Duration.ofSeconds(1);

	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final Pattern JDBC_HOST_PORT = Pattern.compile("^(jdbc:postgresql://)([^/:?]+)(?::(\\d+))?(.*)$");

	private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	private final List<TcpProxy> proxies = new ArrayList<>();

	private final String schema = "it_reliability_" + Long.toHexString(System.nanoTime());

	private @Nullable HikariDataSource directDataSource;

	private @Nullable HikariDataSource proxiedDataSource;

	private ConfigurableApplicationContext a;

	private ConfigurableApplicationContext b;

	/**
	 * Return the store type both instances use.
	 * @return {@code redis} or {@code tiered}
	 */
	abstract String storeType();

	@BeforeAll
	void startInstances() throws IOException {
		boolean tiered = "tiered".equals(storeType());
		String prefix = "it-reliability-" + UUID.randomUUID() + ":";
		TestServers.Redis redis = TestServers.redis();
		TcpProxy redisProxy = proxy(redis.host(), redis.port());
		if (tiered) {
			TestServers.Postgres postgres = TestServers.postgres();
			Matcher matcher = JDBC_HOST_PORT.matcher(postgres.jdbcUrl());
			assertThat(matcher.matches()).as("PostgreSQL JDBC URL %s", postgres.jdbcUrl()).isTrue();
			int port = (matcher.group(3) != null) ? Integer.parseInt(matcher.group(3)) : 5432;
			TcpProxy postgresProxy = proxy(matcher.group(2), port);
			String proxiedUrl = matcher.group(1) + postgresProxy.host() + ":" + postgresProxy.port() + matcher.group(4);
			createSchema(postgres, this.schema);
			this.directDataSource = dataSource(postgres.jdbcUrl(), postgres, "direct");
			this.proxiedDataSource = dataSource(proxiedUrl, postgres, "proxied");
		}
		this.a = start("A", new TestServers.Redis(redisProxy.host(), redisProxy.port(), "proxy").connectionFactory(),
				this.proxiedDataSource, prefix);
		this.b = start("B", redis.connectionFactory(), this.directDataSource, prefix);
	}

	@AfterAll
	void stopInstances() {
		for (ConfigurableApplicationContext context : new ConfigurableApplicationContext[] { this.a, this.b }) {
			if (context != null) {
				context.close();
			}
		}
		this.proxies.forEach(TcpProxy::close);
		if (this.proxiedDataSource != null) {
			this.proxiedDataSource.close();
		}
		if (this.directDataSource != null) {
			TestServers.Postgres.dropSchema(this.directDataSource, this.schema);
			this.directDataSource.close();
		}
	}

	@Test
	void heartbeatKeepsTheLeaseOfAHandlerThatRunsThreeTimesLongerThanTheLockTimeout() throws Exception {
		String key = UUID.randomUUID().toString();
		WorkController owner = controller(this.b);
		owner.hold(key);
		CompletableFuture<HttpResponse<byte[]>> first = postAsync(this.b, key, "order-6");
		assertThat(owner.awaitEntered(key, TIMEOUT)).isTrue();
		long started = System.nanoTime();
		int duplicates = 0;
		// duplicates on both instances for three lock timeouts while the handler runs
		while (System.nanoTime() - started < LOCK_TIMEOUT.multipliedBy(3).toNanos()) {
			HttpResponse<byte[]> duplicate = post(((duplicates % 2) == 0) ? this.b : this.a, key, "order-6");
			assertThat(duplicate.statusCode()).as("duplicate %d", duplicates).isEqualTo(409);
			assertThat(duplicate.headers().firstValueAsLong("Retry-After").orElse(0)).isPositive();
			duplicates++;
			TimeUnit.MILLISECONDS.sleep(100);
		}
		assertThat(owner.runs(key)).isOne();
		owner.release(key);
		HttpResponse<byte[]> original = first.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
		assertThat(original.statusCode()).isEqualTo(200);
		assertThat(text(original)).isEqualTo("B ran order-6 (run 1)");
		for (ConfigurableApplicationContext instance : List.of(this.a, this.b)) {
			HttpResponse<byte[]> replay = post(instance, key, "order-6");
			assertThat(replay.statusCode()).isEqualTo(200);
			assertThat(replay.body()).isEqualTo(original.body());
			assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		}
		assertThat(owner.runs(key) + controller(this.a).runs(key)).isOne();
		// at least two renewals kept a one-second lease alive for three seconds
		assertThat(storeOperations(this.b, "extend", "ok")).isGreaterThanOrEqualTo(2);
		assertThat(fencingRejections(this.b)).isZero();
	}

	@Test
	void ownerWhoseLeaseWasTakenOverCannotOverwriteTheNewOwnersResponse() throws Exception {
		String key = UUID.randomUUID().toString();
		WorkController oldOwner = controller(this.a);
		WorkController newOwner = controller(this.b);
		oldOwner.hold(key);
		CompletableFuture<HttpResponse<byte[]>> late = postAsync(this.a, key, "order-7");
		assertThat(oldOwner.awaitEntered(key, TIMEOUT)).isTrue();
		HttpResponse<byte[]> takeover;
		try {
			this.proxies.forEach(TcpProxy::pause);
			// A's heartbeat reaches the paused network and cannot renew the lease
			await().atMost(TIMEOUT).until(() -> this.proxies.stream().mapToInt(TcpProxy::heldChunks).sum() > 0);
			// until the lease lapses B's duplicates get 409; then B takes the key over
			takeover = await().atMost(TIMEOUT)
				.pollInterval(Duration.ofMillis(100))
				.until(() -> post(this.b, key, "order-7"), (response) -> response.statusCode() != 409);
			assertThat(takeover.statusCode()).isEqualTo(200);
			assertThat(text(takeover)).isEqualTo("B ran order-7 (run 1)");
			assertThat(takeover.headers().firstValue("Idempotent-Replayed")).isEmpty();
		}
		finally {
			this.proxies.forEach(TcpProxy::resume);
		}
		oldOwner.release(key);
		HttpResponse<byte[]> lateResponse = late.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
		// A's client gets what A's handler produced, unstored: no expiry is advertised
		assertThat(lateResponse.statusCode()).isEqualTo(200);
		assertThat(text(lateResponse)).isEqualTo("A ran order-7 (run 1)");
		assertThat(lateResponse.headers().firstValue("Idempotency-Expires")).isEmpty();
		assertThat(lateResponse.headers().firstValue("Idempotent-Replayed")).isEmpty();
		// the request's observation ends after its response is written
		await().atMost(TIMEOUT).untilAsserted(() -> assertThat(executions(this.a, "fenced")).isEqualTo(1));
		assertThat(executions(this.a, "stored")).isZero();
		assertThat(storeOperations(this.a, "complete", "fenced")).isEqualTo(1);
		// the stored response is B's, byte for byte, on both instances
		for (ConfigurableApplicationContext instance : List.of(this.a, this.b)) {
			HttpResponse<byte[]> replay = post(instance, key, "order-7");
			assertThat(replay.statusCode()).isEqualTo(200);
			assertThat(replay.body()).isEqualTo(takeover.body());
			assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		}
		assertThat(oldOwner.runs(key)).isOne();
		assertThat(newOwner.runs(key)).isOne();
	}

	private static void createSchema(TestServers.Postgres postgres, String schema) {
		try (Connection connection = DriverManager.getConnection(postgres.jdbcUrl(), postgres.username(),
				postgres.password()); Statement statement = connection.createStatement()) {
			statement.execute("CREATE SCHEMA IF NOT EXISTS " + schema);
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Could not create schema " + schema, ex);
		}
	}

	// small pools: the PostgreSQL server is shared with other test JVMs
	private HikariDataSource dataSource(String jdbcUrl, TestServers.Postgres postgres, String name) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(jdbcUrl);
		config.setUsername(postgres.username());
		config.setPassword(postgres.password());
		config.setSchema(this.schema);
		config.setMaximumPoolSize(4);
		config.setMinimumIdle(1);
		config.setPoolName(this.schema + "-" + name);
		return new HikariDataSource(config);
	}

	private TcpProxy proxy(String host, int port) throws IOException {
		TcpProxy proxy = TcpProxy.start(host, port);
		this.proxies.add(proxy);
		return proxy;
	}

	private ConfigurableApplicationContext start(String instance, LettuceConnectionFactory redis,
			@Nullable DataSource dataSource, String prefix) {
		Map<String, Object> properties = new LinkedHashMap<>();
		properties.put("reliability.instance", instance);
		properties.put("server.port", "0");
		properties.put("spring.main.banner-mode", "off");
		properties.put("spring.autoconfigure.exclude",
				"org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration,"
						+ "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration,"
						+ "org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration");
		properties.put("spring.data.redis.repositories.enabled", "false");
		properties.put("idempotency.store.type", storeType());
		properties.put("idempotency.redis.key-prefix", prefix);
		properties.put("idempotency.policies.reliable.lock-timeout", LOCK_TIMEOUT.toMillis() + "ms");
		return new SpringApplicationBuilder(ReliabilityTestApplication.class).properties(properties)
			.initializers((context) -> {
				GenericApplicationContext generic = (GenericApplicationContext) context;
				generic.registerBean("redisConnectionFactory", LettuceConnectionFactory.class, () -> redis);
				if (dataSource != null) {
					generic.registerBean("dataSource", DataSource.class, () -> dataSource,
							(definition) -> definition.setDestroyMethodName(""));
				}
			})
			.run();
	}

	private static WorkController controller(ConfigurableApplicationContext instance) {
		return instance.getBean(WorkController.class);
	}

	private HttpRequest request(ConfigurableApplicationContext instance, String key, String body) {
		int port = ((WebServerApplicationContext) instance).getWebServer().getPort();
		return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/work"))
			.header("Content-Type", "text/plain")
			.header("Idempotency-Key", key)
			.POST(BodyPublishers.ofString(body, StandardCharsets.UTF_8))
			.build();
	}

	private HttpResponse<byte[]> post(ConfigurableApplicationContext instance, String key, String body)
			throws IOException, InterruptedException {
		return this.client.send(request(instance, key, body), BodyHandlers.ofByteArray());
	}

	private CompletableFuture<HttpResponse<byte[]>> postAsync(ConfigurableApplicationContext instance, String key,
			String body) {
		return this.client.sendAsync(request(instance, key, body), BodyHandlers.ofByteArray());
	}

	private static String text(HttpResponse<byte[]> response) {
		return new String(response.body(), StandardCharsets.UTF_8);
	}

	private static double fencingRejections(ConfigurableApplicationContext instance) {
		return instance.getBean(MeterRegistry.class)
			.find(IdempotencyMetrics.FENCING_REJECTIONS)
			.counters()
			.stream()
			.mapToDouble(Counter::count)
			.sum();
	}

	// executed requests by how they ended, from the timer of the request observation
	private static long executions(ConfigurableApplicationContext instance, String completion) {
		return instance.getBean(MeterRegistry.class)
			.find(DefaultIdempotencyObservationConvention.DEFAULT_NAME)
			.tags("outcome", "executed", "policy", "reliable", "completion", completion)
			.timers()
			.stream()
			.mapToLong(Timer::count)
			.sum();
	}

	private long storeOperations(ConfigurableApplicationContext instance, String operation, String result) {
		Timer timer = instance.getBean(MeterRegistry.class)
			.find(MeteredIdempotencyStore.OPERATIONS)
			.tags("store", storeType(), "operation", operation, "result", result)
			.timer();
		return (timer != null) ? timer.count() : 0;
	}

}
