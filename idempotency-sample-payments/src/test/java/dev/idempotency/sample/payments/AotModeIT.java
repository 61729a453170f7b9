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

import java.io.IOException;
import java.io.InputStream;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The sample in Spring's AOT mode on the JVM: the packaged jar, whose main code the build
 * processed ahead of time ({@code process-aot} in the sample's POM), started in child
 * JVMs with {@code -Dspring.aot.enabled=true}, so that the application context is the
 * generated one (bean definitions as code, the conditions settled by the build) and not
 * one built at start-up by reflection. The README's story runs against it over HTTP, once
 * on PostgreSQL and once on MariaDB with the profile {@code mariadb}, the same jar: the
 * build processed it with {@code application.yml} and no profile, and the profile only
 * sets values that are read at run time (the URL, the driver's settings, log levels), so
 * the store {@code idempotency.store.type=auto} chose at build time, Redis in front of
 * the {@code DataSource}, finds which database it runs on when it starts. A third
 * instance, started with a store type other than the build's, must refuse to start.
 * <p>
 * The properties are the build's but for the servers, the schema or database, the Redis
 * key prefix and the port: none of them decides which beans exist.
 *
 * @author Idempotency contributors
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AotModeIT {

	private static final Duration START_TIMEOUT = Duration.ofMinutes(3);

	private static final Pattern ID = Pattern.compile("\"id\":\"([0-9a-f-]{36})\"");

	private static final List<String> AOT_MODE = List.of("-Dspring.aot.enabled=true", "-Xmx256m",
			"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC");

	private final String name = "aot_it_" + Long.toHexString(System.nanoTime());

	private final List<SampleInstance> instances = new ArrayList<>();

	private final List<TestDatabase.Namespace> namespaces = new ArrayList<>();

	private TestDatabase.Namespace postgres;

	private TestDatabase.Namespace mariadb;

	private SampleInstance onPostgres;

	private SampleInstance onMariaDb;

	private SampleInstance otherStoreType;

	@BeforeAll
	void startInstances() {
		this.postgres = namespace(TestDatabase.POSTGRESQL);
		this.mariadb = namespace(TestDatabase.MARIADB);
		Path logs = SampleInstance.jar().getParent().resolve("aot-it");
		// all at once: their start-ups overlap
		this.onPostgres = launch("postgresql", this.postgres, Map.of(), logs);
		this.onMariaDb = launch("mariadb", this.mariadb, Map.of(), logs);
		this.otherStoreType = launch("other-store-type", this.postgres, Map.of("idempotency.store.type", "jdbc"), logs);
		this.onPostgres.awaitStarted(START_TIMEOUT);
		this.onMariaDb.awaitStarted(START_TIMEOUT);
	}

	private TestDatabase.Namespace namespace(TestDatabase database) {
		TestDatabase.Namespace namespace = database.create(this.name);
		this.namespaces.add(namespace);
		return namespace;
	}

	private SampleInstance launch(String instance, TestDatabase.Namespace namespace, Map<String, Object> overrides,
			Path logs) {
		Map<String, Object> properties = new LinkedHashMap<>(namespace.springProperties());
		properties.put("server.port", 0);
		// the servers are shared: a small pool each, and keys of the test's own
		properties.put("spring.datasource.hikari.maximum-pool-size", 5);
		properties.put("idempotency.redis.key-prefix", this.name + ":" + instance + ":");
		properties.putAll(overrides);
		SampleInstance started = SampleInstance.start(instance, properties, AOT_MODE, logs);
		this.instances.add(started);
		return started;
	}

	@AfterAll
	void stopInstances() {
		this.instances.forEach(SampleInstance::close);
		this.namespaces.forEach(TestDatabase.Namespace::close);
	}

	@Test
	void theJarCarriesTheGeneratedCodeAndTheLibrarysHints() throws IOException {
		try (JarFile jar = new JarFile(SampleInstance.jar().toFile())) {
			assertThat(jar.getEntry(
					"BOOT-INF/classes/dev/idempotency/sample/payments/PaymentsApplication__ApplicationContextInitializer.class"))
				.as("the application context's initializer generated by process-aot")
				.isNotNull();
			assertThat(jar.getEntry(
					"BOOT-INF/classes/dev/idempotency/spring/autoconfigure/ProcessedConditionsCheck__BeanDefinitions.class"))
				.as("the starter's bean definitions generated by process-aot")
				.isNotNull();
			JarEntry metadata = jar.getJarEntry("META-INF/native-image/dev.idempotency/"
					+ "idempotency-sample-payments/reachability-metadata.json");
			assertThat(metadata).as("the reachability metadata for a native image").isNotNull();
			JsonNode hints;
			try (InputStream in = jar.getInputStream(metadata)) {
				hints = JsonMapper.builder().build().readTree(in);
			}
			List<String> resources = texts(hints.path("resources"), "glob");
			// a JDK proxy's type is an object: only the named types
			List<String> types = texts(hints.path("reflection"), "type");
			// the starter's hints (IdempotencyRuntimeHints), collected from the
			// application
			assertThat(resources).contains("dev/idempotency/spring/store/redis/*.lua",
					"dev/idempotency/spring/store/jdbc/migration/postgresql/*.sql",
					"dev/idempotency/spring/store/jdbc/migration/mariadb/*.sql");
			assertThat(types).contains("tools.jackson.core.json.JsonFactory",
					"dev.idempotency.core.engine.IdempotencyListener", "org.flywaydb.core.Flyway");
		}
	}

	@Test
	void bothInstancesRunTheGeneratedContextWithTheStoreOfTheBuild() {
		for (SampleInstance instance : List.of(this.onPostgres, this.onMariaDb)) {
			assertThat(instance.output()).as(instance.name()).contains("Starting AOT-processed PaymentsApplication");
		}
		assertThat(this.onPostgres.output()).contains("Idempotency store: tiered, Redis in front of PostgreSQL")
			.contains("(idempotency.store.type=auto: Redis and a PostgreSQL DataSource present)");
		assertThat(this.onMariaDb.output()).contains("The following 1 profile is active: \"mariadb\"")
			.contains("Idempotency store: tiered, Redis in front of MariaDB")
			.contains("(idempotency.store.type=auto: Redis and a MariaDB DataSource present)");
	}

	@Test
	void aStoreTypeOtherThanTheBuildsFailsTheStartUp() {
		assertThatIllegalStateException().isThrownBy(() -> this.otherStoreType.awaitStarted(START_TIMEOUT))
			.withMessageContaining("exited with status 1 before it started")
			.withMessageContaining("idempotency.store.type is jdbc here, and was auto at build time");
	}

	@Test
	void theStoryOnPostgreSql() throws Exception {
		story(this.onPostgres, this.postgres.jdbc());
	}

	@Test
	void theStoryOnMariaDbWithItsProfile() throws Exception {
		story(this.onMariaDb, this.mariadb.jdbc());
	}

	private void story(SampleInstance instance, JdbcClient jdbc) throws Exception {
		SampleClient client = new SampleClient(instance.port());

		// a transactional account opening (the accounts policy), replayed
		String opening = "{\"currency\":\"EUR\",\"initialBalance\":10000}";
		HttpResponse<byte[]> opened = client.post("alice", "/accounts", opening, "Idempotency-Key", "aot-account");
		assertThat(opened.statusCode()).isEqualTo(201);
		HttpResponse<byte[]> openedAgain = client.post("alice", "/accounts", opening, "Idempotency-Key", "aot-account");
		assertThat(openedAgain.statusCode()).isEqualTo(201);
		assertThat(openedAgain.body()).isEqualTo(opened.body());
		assertThat(openedAgain.headers().firstValue("Idempotent-Replayed")).contains("true");
		String account = id(opened);

		// the first payment runs the handler once
		String payment = paymentJson(account, 3000, "Order 1001");
		HttpResponse<byte[]> first = client.post("alice", "/payments", payment, "Idempotency-Key", "aot-1001");
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(first.headers().firstValue("Idempotency-Expires")).isPresent();

		// a retry is replayed byte for byte
		HttpResponse<byte[]> retry = client.post("alice", "/payments", payment, "Idempotency-Key", "aot-1001");
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");

		// the key with another body is refused
		HttpResponse<byte[]> reused = client.post("alice", "/payments", paymentJson(account, 9999, "Order 1001"),
				"Idempotency-Key", "aot-1001");
		assertThat(reused.statusCode()).isEqualTo(422);
		assertThat(SampleClient.text(reused)).contains("idempotency-key-reused");

		// a request without a key is refused before the handler
		HttpResponse<byte[]> unkeyed = client.post("alice", "/payments", paymentJson(account, 100, "No key"));
		assertThat(unkeyed.statusCode()).isEqualTo(400);
		assertThat(SampleClient.text(unkeyed)).contains("idempotency-key-missing");

		// a duplicate while the first still runs: 409 with Retry-After, once the
		// payments policy's in-flight wait (1 s) is over
		String slow = paymentJson(account, 1000, "Order 1002");
		CompletableFuture<HttpResponse<byte[]>> inFlight = CompletableFuture.supplyAsync(() -> client.post("alice",
				"/payments", slow, "Idempotency-Key", "aot-1002", "Demo-Gateway-Delay-Ms", "4000"));
		awaitProcessing(client, "aot-1002", inFlight);
		HttpResponse<byte[]> busy = client.post("alice", "/payments", slow, "Idempotency-Key", "aot-1002");
		assertThat(busy.statusCode()).isEqualTo(409);
		assertThat(busy.headers().firstValue("Retry-After")).isPresent();
		assertThat(SampleClient.text(busy)).contains("request-in-progress");
		HttpResponse<byte[]> slowAnswer = inFlight.get(60, TimeUnit.SECONDS);
		assertThat(slowAnswer.statusCode()).isEqualTo(201);

		// a gateway event delivered twice (key from the body, transactional): settled
		// once
		String eventId = "evt_" + UUID.randomUUID().toString().replace("-", "");
		String event = "{\"id\":\"" + eventId + "\",\"type\":\"charge.succeeded\",\"data\":{\"id\":\"ch_" + eventId
				+ "\",\"amount\":4200,\"currency\":\"EUR\"}}";
		HttpResponse<byte[]> delivered = client.post("gateway", "/webhooks/gateway", event);
		assertThat(delivered.statusCode()).isEqualTo(200);
		HttpResponse<byte[]> redelivered = client.post("gateway", "/webhooks/gateway", event);
		assertThat(redelivered.body()).isEqualTo(delivered.body());
		assertThat(redelivered.headers().firstValue("Idempotent-Replayed")).contains("true");

		// the database: each handler ran once per key
		assertThat(count(jdbc, "SELECT count(*) FROM accounts WHERE owner = ?", "alice")).as("accounts").isOne();
		for (String key : List.of("aot-1001", "aot-1002")) {
			assertThat(
					count(jdbc, "SELECT count(*) FROM payments WHERE owner = ? AND idempotency_key = ?", "alice", key))
				.as("payments with key %s", key)
				.isOne();
			assertThat(count(jdbc, "SELECT count(*) FROM gateway_charges WHERE charge_key = ?",
					PaymentService.chargeKey("alice", key)))
				.as("charges of key %s", key)
				.isOne();
		}
		assertThat(count(jdbc, "SELECT count(*) FROM payments WHERE owner = ?", "alice")).as("payments").isEqualTo(2);
		assertThat(count(jdbc, "SELECT count(*) FROM gateway_settlements WHERE event_id = ?", eventId))
			.as("settlements")
			.isOne();
		assertThat(jdbc.sql("SELECT balance FROM accounts WHERE id = ?")
			.param(UUID.fromString(account))
			.query(Long.class)
			.single()).isEqualTo(10_000 - 3000 - 1000);
	}

	private static List<String> texts(JsonNode entries, String field) {
		List<String> texts = new ArrayList<>();
		for (JsonNode entry : entries) {
			if (entry.path(field).isString()) {
				texts.add(entry.path(field).asString());
			}
		}
		return texts;
	}

	private static void awaitProcessing(SampleClient client, String key, CompletableFuture<?> request)
			throws InterruptedException {
		String path = "/actuator/idempotency?key=" + key + "&scope="
				+ URLEncoder.encode("principal:alice", StandardCharsets.UTF_8);
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		while (!SampleClient.text(client.get("admin", path)).contains("\"state\":\"PROCESSING\"")) {
			assertThat(request).as("the request holding %s", key).isNotDone();
			assertThat(System.nanoTime() - deadline).as("%s in progress within 30 s", key).isNegative();
			Thread.sleep(20);
		}
	}

	private static long count(JdbcClient jdbc, String sql, Object... parameters) {
		return jdbc.sql(sql).params(parameters).query(Long.class).single();
	}

	private static String paymentJson(String account, long amount, String description) {
		return "{\"accountId\":\"" + account + "\",\"amount\":" + amount + ",\"currency\":\"EUR\",\"description\":\""
				+ description + "\"}";
	}

	private static String id(HttpResponse<byte[]> response) {
		Matcher matcher = ID.matcher(SampleClient.text(response));
		assertThat(matcher.find()).as("id in %s", SampleClient.text(response)).isTrue();
		return matcher.group(1);
	}

}
