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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.spring.transaction.TransactionalTestApplication.LedgerController;
import dev.idempotency.test.servers.TestServers;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestInstance.Lifecycle;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The transactional mode on real servers, with two application instances sharing
 * PostgreSQL (and Redis, for the tiered store): the claim, the handler's own writes and
 * the stored response commit together or not at all, a duplicate of a request whose
 * transaction is still open is answered at once from any instance, and nothing of a
 * request whose response was not stored persists, whichever way the handler writes. A
 * handler run is a row of the ledger: the tests count them.
 *
 * @author Idempotency contributors
 */
@TestInstance(Lifecycle.PER_CLASS)
abstract class AbstractTransactionalModeIT {

	private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	private final String schema = "it_tx_" + storeType() + "_" + Long.toHexString(System.nanoTime());

	private final String prefix = "it-tx-" + storeType() + "-" + Long.toHexString(System.nanoTime()) + ":";

	private HikariDataSource dataSource;

	private LettuceConnectionFactory redis;

	private JdbcTemplate jdbc;

	private ConfigurableApplicationContext a;

	private ConfigurableApplicationContext b;

	/**
	 * Return the store type the instances use.
	 * @return {@code jdbc} or {@code tiered}
	 */
	abstract String storeType();

	@BeforeAll
	void startInstances() {
		this.dataSource = TestServers.postgres().dataSource(this.schema);
		this.jdbc = new JdbcTemplate(this.dataSource);
		for (String statement : TransactionalTestApplication.SCHEMA_DDL.split(";")) {
			if (!statement.isBlank()) {
				this.jdbc.execute(statement);
			}
		}
		this.redis = TestServers.redis().connectionFactory();
		this.a = start("a");
		this.b = start("b");
	}

	@AfterAll
	void stopInstances() {
		if (this.redis != null) {
			deleteRedisKeys();
		}
		// the instances destroy the connection factory they were given
		for (ConfigurableApplicationContext instance : new ConfigurableApplicationContext[] { this.a, this.b }) {
			if (instance != null) {
				instance.close();
			}
		}
		if (this.dataSource != null) {
			TestServers.Postgres.dropSchema(this.dataSource, this.schema);
			this.dataSource.close();
		}
	}

	@Test
	void storedResponseCommitsWithTheHandlersWritesAndIsReplayedFromTheOtherInstance() throws Exception {
		String key = newKey();
		HttpResponse<String> first = post(this.a, key, "pay-1", "");
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(entries(key)).isOne();
		assertThat(recordStatus(key)).isEqualTo("C");
		HttpResponse<String> retry = post(this.b, key, "pay-1", "");
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(entries(key)).isOne();
	}

	@Test
	void racingDuplicatesOnTwoInstancesRunTheHandlerOnce() throws Exception {
		String key = newKey();
		int racers = 16;
		ExecutorService executor = Executors.newFixedThreadPool(racers);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<HttpResponse<String>>> responses = new ArrayList<>();
			for (int i = 0; i < racers; i++) {
				ConfigurableApplicationContext instance = (i % 2 == 0) ? this.a : this.b;
				responses.add(executor.submit(() -> {
					start.await();
					return post(instance, key, "race", "slow");
				}));
			}
			start.countDown();
			int created = 0;
			for (Future<HttpResponse<String>> response : responses) {
				int status = response.get(60, TimeUnit.SECONDS).statusCode();
				assertThat(status).isIn(201, 409);
				created += (status == 201) ? 1 : 0;
			}
			assertThat(created).isPositive();
		}
		finally {
			executor.shutdownNow();
		}
		assertThat(entries(key)).isOne();
		HttpResponse<String> retry = post(this.b, key, "race", "");
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(entries(key)).isOne();
	}

	@Test
	void duplicateOfAnUncommittedRequestIsAnsweredAtOnceEvenWithoutRedisData() throws Exception {
		String key = newKey();
		controller(this.a).hold(key);
		CompletableFuture<HttpResponse<String>> first = CompletableFuture.supplyAsync(() -> {
			try {
				return post(this.a, key, "held", "");
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		});
		try {
			assertThat(controller(this.a).awaitEntered(key)).isTrue();
			// the first request's claim and ledger entry are written, not committed
			assertThat(entries(key)).isZero();
			assertThat(recordStatus(key)).isNull();
			// Redis loses what it knew: the duplicate can only learn from PostgreSQL
			deleteRedisKeys();
			long started = System.nanoTime();
			HttpResponse<String> duplicate = post(this.b, key, "held", "");
			Duration waited = Duration.ofNanos(System.nanoTime() - started);
			assertThat(duplicate.statusCode()).isEqualTo(409);
			assertThat(duplicate.headers().firstValue("Retry-After")).isPresent();
			// answered, not queued behind the open transaction
			assertThat(waited).isLessThan(Duration.ofSeconds(5));
		}
		finally {
			controller(this.a).release(key);
		}
		assertThat(first.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
		assertThat(entries(key)).isOne();
		HttpResponse<String> retry = post(this.b, key, "held", "");
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(entries(key)).isOne();
	}

	@Test
	void handlerThatThrowsAfterItsWriteLeavesNothingAndTheRetryRunsCleanly() throws Exception {
		String key = newKey();
		assertThat(post(this.a, key, "boom", "fail").statusCode()).isEqualTo(500);
		assertThat(entries(key)).isZero();
		assertThat(recordStatus(key)).isNull();
		assertThat(post(this.b, key, "boom", "").statusCode()).isEqualTo(201);
		assertThat(entries(key)).isOne();
	}

	@Test
	void nonStorableStatusRollsTheHandlersWritesBack() throws Exception {
		String key = newKey();
		HttpResponse<String> busy = post(this.a, key, "busy", "unavailable");
		assertThat(busy.statusCode()).isEqualTo(503);
		assertThat(busy.body()).isEqualTo("{\"error\":\"busy\"}");
		assertThat(entries(key)).isZero();
		assertThat(recordStatus(key)).isNull();
		assertThat(post(this.b, key, "busy", "").statusCode()).isEqualTo(201);
		assertThat(entries(key)).isOne();
	}

	@Test
	void responseWhoseCommitFailsNeverReachesTheClientAndNothingPersists() throws Exception {
		String key = newKey();
		HttpResponse<String> failed = post(this.a, key, "commit", "break-commit");
		assertThat(failed.statusCode()).isEqualTo(503);
		assertThat(failed.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(failed.body()).contains("store-unavailable")
			.contains("was not processed")
			.doesNotContain("\"entries\"");
		assertThat(failed.headers().firstValue("Retry-After")).isPresent();
		assertThat(entries(key)).isZero();
		assertThat(recordStatus(key)).isNull();
		// measured as a completion that failed, not as a stored response; the
		// observation stops after the response is written: wait for it
		MeterRegistry meters = this.a.getBean(MeterRegistry.class);
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		while (meters.find("idempotency.request").tag("completion", "failed").timers().isEmpty()
				&& System.nanoTime() < deadline) {
			Thread.sleep(10);
		}
		assertThat(meters.find("idempotency.request").tag("completion", "failed").timers())
			.anySatisfy((timer) -> assertThat(timer.getId().getTag("error")).isNotEqualTo("none"));
		assertThat(meters.find("idempotency.request").tag("completion", "stored").timers())
			.allSatisfy((timer) -> assertThat(timer.getId().getTag("error")).as("a stored completion with an error")
				.isEqualTo("none"));
		// neither tier replays it: the retry runs the handler
		HttpResponse<String> retry = post(this.b, key, "commit", "");
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(entries(key)).isOne();
	}

	@ParameterizedTest
	@ValueSource(strings = { "service", "template", "client" })
	void eachWayOfWritingCommitsWithTheStoredResponse(String write) throws Exception {
		String key = newKey();
		HttpResponse<String> first = post(this.a, key, "style", Map.of("X-Write", write));
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(entries(key)).isOne();
		assertThat(recordStatus(key)).isEqualTo("C");
		HttpResponse<String> retry = post(this.b, key, "style", Map.of("X-Write", write));
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(entries(key)).isOne();
	}

	@ParameterizedTest
	@ValueSource(strings = { "service", "template", "client" })
	void eachWayOfWritingRollsBackWithAFailedHandler(String write) throws Exception {
		String thrown = newKey();
		assertThat(post(this.a, thrown, "style", Map.of("X-Write", write, "X-Mode", "fail")).statusCode())
			.isEqualTo(500);
		String busy = newKey();
		assertThat(post(this.a, busy, "style", Map.of("X-Write", write, "X-Mode", "unavailable")).statusCode())
			.isEqualTo(503);
		for (String key : List.of(thrown, busy)) {
			assertThat(entries(key)).isZero();
			assertThat(recordStatus(key)).isNull();
			HttpResponse<String> retry = post(this.b, key, "style", Map.of("X-Write", write));
			assertThat(retry.statusCode()).isEqualTo(201);
			assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
			assertThat(entries(key)).isOne();
		}
	}

	@Test
	void requiresNewWriteLeavesTheRequestsTransactionAndSurvivesItsRollback() throws Exception {
		String key = newKey();
		HttpResponse<String> failed = post(this.a, key, "audited", Map.of("X-Audit", "true", "X-Mode", "fail"));
		assertThat(failed.statusCode()).isEqualTo(500);
		assertThat(entries(key)).isZero();
		assertThat(recordStatus(key)).isNull();
		// committed on its own: not part of the atomic unit
		assertThat(audits(key)).isOne();
		assertThat(post(this.b, key, "audited", Map.of("X-Audit", "true")).statusCode()).isEqualTo(201);
		assertThat(entries(key)).isOne();
		assertThat(audits(key)).isEqualTo(2);
		HttpResponse<String> replay = post(this.a, key, "audited", Map.of("X-Audit", "true"));
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(audits(key)).isEqualTo(2);
	}

	private ConfigurableApplicationContext start(String instance) {
		Map<String, Object> properties = TransactionalTestApplication.properties(storeType(), this.prefix);
		LettuceConnectionFactory redis = this.redis;
		DataSource dataSource = this.dataSource;
		return new SpringApplicationBuilder(TransactionalTestApplication.class).properties(properties)
			.initializers((context) -> {
				GenericApplicationContext generic = (GenericApplicationContext) context;
				generic.registerBean("redisConnectionFactory", LettuceConnectionFactory.class, () -> redis);
				generic.registerBean("dataSource", DataSource.class, () -> dataSource,
						(definition) -> definition.setDestroyMethodName(""));
			})
			.run("--instance=" + instance);
	}

	private HttpResponse<String> post(ConfigurableApplicationContext instance, String key, String body, String mode)
			throws IOException, InterruptedException {
		return post(instance, key, body, mode.isEmpty() ? Map.of() : Map.of("X-Mode", mode));
	}

	private HttpResponse<String> post(ConfigurableApplicationContext instance, String key, String body,
			Map<String, String> headers) throws IOException, InterruptedException {
		int port = ((WebServerApplicationContext) instance).getWebServer().getPort();
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/ledger"))
			.header("Content-Type", "text/plain")
			.header("Idempotency-Key", key)
			.POST(BodyPublishers.ofString(body, StandardCharsets.UTF_8));
		headers.forEach(request::header);
		return this.client.send(request.build(), BodyHandlers.ofString(StandardCharsets.UTF_8));
	}

	private static LedgerController controller(ConfigurableApplicationContext instance) {
		return instance.getBean(LedgerController.class);
	}

	private long entries(String key) {
		return new LedgerRows(this.jdbc).count("ledger_entry", key);
	}

	private long audits(String key) {
		return new LedgerRows(this.jdbc).count("audit_entry", key);
	}

	private @Nullable String recordStatus(String key) {
		return new LedgerRows(this.jdbc).recordStatus(key);
	}

	private void deleteRedisKeys() {
		try (var connection = this.redis.getConnection()) {
			Set<byte[]> keys = connection.keyCommands().keys((this.prefix + "*").getBytes(StandardCharsets.UTF_8));
			if (keys != null && !keys.isEmpty()) {
				connection.keyCommands().del(keys.toArray(new byte[0][]));
			}
		}
	}

	private static String newKey() {
		return UUID.randomUUID().toString();
	}

}
