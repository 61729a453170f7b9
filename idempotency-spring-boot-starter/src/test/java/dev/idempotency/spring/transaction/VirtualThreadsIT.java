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
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.spring.VirtualThreads;
import dev.idempotency.spring.transaction.TransactionalTestApplication.LedgerController;
import dev.idempotency.test.servers.TestServers;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestInstance.Lifecycle;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Requests on virtual threads ({@code spring.threads.virtual.enabled=true}, set here for
 * this instance alone): the tiered store in the transactional mode on PostgreSQL and
 * Redis, with encryption at rest on (its ciphers are pooled, not kept per thread), on a
 * pool of {@value #POOL} connections. A handler run is a row of the ledger, counted in
 * the database.
 * <p>
 * On JDK 21 and later Tomcat runs every request on a virtual thread of its own, so the
 * number of requests in progress is bounded by nothing but the pool: the handlers that
 * hold a transaction at once are never more than its connections, and the others wait for
 * one. On JDK 17 the property does nothing: the same requests run on Tomcat's platform
 * threads, which the tests assert instead.
 *
 * @author Idempotency contributors
 */
@Tag("compatibility")
@TestInstance(Lifecycle.PER_CLASS)
class VirtualThreadsIT {

	/**
	 * The connections of the instance's pool: fewer than the requests of every test.
	 */
	static final int POOL = 4;

	/**
	 * The duplicates raced on one key: more than Tomcat's 200 platform threads.
	 */
	static final int RACERS = 256;

	/**
	 * The keys sent at once: each holds a connection for the 200 ms of its slow handler.
	 */
	static final int KEYS = 40;

	/**
	 * The shortest pinning recorded: the threshold of the JDK's default recording
	 * settings for the event.
	 */
	static final long PINNED_MILLIS = 20;

	/**
	 * Reactor's switch for its bounded-elastic scheduler, a system property that Spring
	 * Boot sets for an application with virtual threads on.
	 */
	static final String REACTOR_SWITCH = "reactor.schedulers.defaultBoundedElasticOnVirtualThreads";

	private static final String PINNED_EVENT = "jdk.VirtualThreadPinned";

	private final HttpClient client = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(30))
		.build();

	private final String prefix = "it-vt-" + Long.toHexString(System.nanoTime()) + ":";

	private TransactionalTestDatabase.Opened database;

	private JdbcTemplate jdbc;

	private LettuceConnectionFactory redis;

	private ConfigurableApplicationContext instance;

	private Recording pinned;

	@BeforeAll
	void startInstance() {
		this.database = TransactionalTestDatabase.POSTGRESQL.open("it_vt");
		HikariDataSource dataSource = this.database.dataSource();
		dataSource.getHikariConfigMXBean().setMaximumPoolSize(POOL);
		this.jdbc = new JdbcTemplate(dataSource);
		TransactionalTestDatabase.POSTGRESQL.createTables(this.jdbc);
		this.redis = TestServers.redis().connectionFactory();
		Map<String, Object> properties = TransactionalTestApplication.properties("tiered", this.prefix);
		properties.put(VirtualThreads.PROPERTY, "true");
		// a request that waits for a connection on a busy machine is still in time
		properties.put("idempotency.policies.ledger.lock-timeout", "30s");
		properties.put("idempotency.encryption.enabled", "true");
		properties.put("idempotency.encryption.keys.k1", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=");
		LettuceConnectionFactory connectionFactory = this.redis;
		// as AbstractTransactionalModeIT's instances: a pool that hands out connections
		// with auto-commit off
		DataSource applicationDataSource = new DelegatingDataSource(dataSource) {

			@Override
			public Connection getConnection() throws SQLException {
				Connection connection = super.getConnection();
				connection.setAutoCommit(false);
				return connection;
			}

		};
		// Spring Boot sets Reactor's switch for the whole JVM: put it back as it was, so
		// that the classes after this one in the JVM start their WebFlux applications as
		// they would without it (docs/testing.md: no test sets a system property)
		String reactorSwitch = System.getProperty(REACTOR_SWITCH);
		try {
			this.instance = new SpringApplicationBuilder(TransactionalTestApplication.class).properties(properties)
				.initializers((context) -> {
					GenericApplicationContext generic = (GenericApplicationContext) context;
					generic.registerBean("redisConnectionFactory", LettuceConnectionFactory.class,
							() -> connectionFactory);
					generic.registerBean("dataSource", DataSource.class, () -> applicationDataSource,
							(definition) -> definition.setDestroyMethodName(""));
				})
				.run("--instance=vt");
		}
		finally {
			if (reactorSwitch != null) {
				System.setProperty(REACTOR_SWITCH, reactorSwitch);
			}
			else {
				System.clearProperty(REACTOR_SWITCH);
			}
		}
		// the first requests initialise the classes of the request path, which may keep
		// the other virtual threads of a burst waiting (pinned): before the recordings
		List<CompletableFuture<HttpResponse<String>>> warmUp = new ArrayList<>();
		for (int i = 0; i < POOL * 2; i++) {
			warmUp.add(post(newKey(), "warm-up"));
		}
		for (CompletableFuture<HttpResponse<String>> response : warmUp) {
			assertThat(response.join().statusCode()).isEqualTo(201);
		}
	}

	@BeforeEach
	void recordPinnedThreads() {
		this.pinned = new Recording();
		this.pinned.setName("pinned virtual threads");
		this.pinned.enable(PINNED_EVENT).withThreshold(Duration.ofMillis(PINNED_MILLIS)).withStackTrace();
		this.pinned.start();
	}

	@AfterEach
	void noVirtualThreadWasPinned() throws IOException {
		this.pinned.stop();
		Path file = Files.createTempFile(Path.of("target"), "virtual-threads-", ".jfr");
		try {
			this.pinned.dump(file);
			List<String> events = RecordingFile.readAllEvents(file)
				.stream()
				.filter((event) -> event.getEventType().getName().equals(PINNED_EVENT))
				.map(RecordedEvent::toString)
				.toList();
			assertThat(events).as("virtual threads pinned to their carrier for %s ms or longer", PINNED_MILLIS)
				.isEmpty();
		}
		finally {
			this.pinned.close();
			Files.deleteIfExists(file);
		}
	}

	@AfterAll
	void stopInstance() {
		if (this.redis != null) {
			try (var connection = this.redis.getConnection()) {
				TestServers.Redis.deleteKeys(connection, this.prefix);
			}
		}
		// the instance destroys the connection factory it was given
		if (this.instance != null) {
			this.instance.close();
		}
		if (this.database != null) {
			this.database.drop().run();
		}
	}

	@Test
	void racingDuplicatesOfOneKeyRunTheHandlerOnceAndAreReplayed() throws Exception {
		String key = newKey();
		List<CompletableFuture<HttpResponse<String>>> racing = new ArrayList<>();
		for (int i = 0; i < RACERS; i++) {
			racing.add(post(key, "race"));
		}
		List<String> created = new ArrayList<>();
		for (CompletableFuture<HttpResponse<String>> response : racing) {
			HttpResponse<String> answer = response.get(120, TimeUnit.SECONDS);
			assertThat(answer.statusCode()).as(answer.body()).isIn(201, 409);
			if (answer.statusCode() == 201) {
				created.add(answer.body());
			}
		}
		assertThat(created).isNotEmpty();
		assertThat(created).containsOnly(created.get(0));
		assertThat(entries(key)).isOne();
		assertRanOnTheThreadsOfThisJvm(key);
		// the retry after the first completed: the stored response, decrypted
		HttpResponse<String> retry = post(key, "race").get(60, TimeUnit.SECONDS);
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(created.get(0));
		assertThat(entries(key)).isOne();
		assertThat(controller().runs(key)).isOne();
	}

	@Test
	void requestsOfManyKeysAtOnceTakeTurnsAtThePoolsConnections() throws Exception {
		List<String> keys = new ArrayList<>();
		List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
		for (int i = 0; i < KEYS; i++) {
			String key = newKey();
			keys.add(key);
			sent.add(post(key, "key " + i));
		}
		for (int i = 0; i < KEYS; i++) {
			HttpResponse<String> answer = sent.get(i).get(120, TimeUnit.SECONDS);
			assertThat(answer.statusCode()).as(answer.body()).isEqualTo(201);
			assertThat(answer.headers().firstValue("Idempotent-Replayed")).isEmpty();
		}
		for (String key : keys) {
			assertThat(entries(key)).isOne();
			assertRanOnTheThreadsOfThisJvm(key);
		}
		// each request's transaction holds a connection from before its claim to its
		// commit, and takes no second one: a request never waits for a connection while
		// it holds one
		assertThat(controller().mostSlowAtOnce()).isBetween(1, POOL);
		for (String key : keys) {
			HttpResponse<String> retry = post(key, "key " + keys.indexOf(key)).get(60, TimeUnit.SECONDS);
			assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		}
	}

	// JDK 21 and later: Tomcat's thread of the request was virtual; JDK 17: the property
	// did nothing, and it was a platform thread
	private void assertRanOnTheThreadsOfThisJvm(String key) {
		boolean virtual = VirtualThreads.supported();
		assertThat(controller().ranOnVirtualThread(key))
			.as("the handler of %s ran on a %s thread (JDK %s)", key, VirtualThreads.kind(virtual),
					Runtime.version().feature())
			.isEqualTo(virtual);
	}

	private CompletableFuture<HttpResponse<String>> post(String key, String body) {
		int port = ((WebServerApplicationContext) this.instance).getWebServer().getPort();
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/ledger"))
			.header("Content-Type", "text/plain")
			.header("Idempotency-Key", key)
			.header("X-Mode", "slow")
			.POST(BodyPublishers.ofString(body, StandardCharsets.UTF_8))
			.build();
		return this.client.sendAsync(request, BodyHandlers.ofString(StandardCharsets.UTF_8));
	}

	private LedgerController controller() {
		return this.instance.getBean(LedgerController.class);
	}

	private long entries(String key) {
		return new LedgerRows(this.jdbc).count("ledger_entry", key);
	}

	private static String newKey() {
		return UUID.randomUUID().toString();
	}

}
