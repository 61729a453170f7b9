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

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.sql.DataSource;

import dev.idempotency.test.servers.TestServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A crash in the middle of a request: the sample runs in child JVMs from its packaged
 * jar, in tiered mode (Redis in front of PostgreSQL) with a 2 s lock timeout, and one of
 * them is killed with {@code SIGKILL} while five requests are in flight, each at a
 * precise point. Two payments (the default mode: the handler commits on its own):
 * <ul>
 * <li>while the gateway works: the payment is recorded {@code PENDING}, nothing is
 * charged and the key's lease is held;
 * <li>after the payment is committed {@code SUCCEEDED} and charged, before the library
 * stores the response (the sample's demo-only {@code Demo-Delay-After-Commit-Ms} pause).
 * </ul>
 * And three account openings (the transactional mode: the claim, the account and the
 * stored response commit in one transaction), before the handler, before the commit and
 * after the commit ({@link AccountOpeningCrash}). And two deliveries of gateway events
 * (transactional, keyed by the event's id), before and after the commit
 * ({@link GatewayEventCrash}). The kill happens only once the database shows every state.
 * <p>
 * The retries go to the other instance. A payment's retry, once the dead owner's lease
 * has lapsed, runs the handler again, which resumes the payment instead of paying twice.
 * An account's retries, raced from several threads, wait out the dead owner's Redis
 * claim, then open the account once (PostgreSQL rolled the dead owner's transaction back
 * when its connection dropped) or replay the committed response without opening it again.
 * Every later retry replays the same bytes, and the database holds exactly one payment
 * and one gateway charge, or one account, per key: never none with a replay, never two.
 *
 * @author Idempotency contributors
 * @see TransactionalCrashJdbcIT
 */
@Tag("reliability")
class CrashRecoveryIT {

	private static final String SCHEMA = "crash_it_" + Long.toHexString(System.nanoTime());

	private static final Duration START_TIMEOUT = Duration.ofMinutes(3);

	private static final Pattern ID = Pattern.compile("\"id\":\"([0-9a-f-]{36})\"");

	private static final Pattern AMOUNT = Pattern.compile("\"amount\":(\\d+)");

	private static final List<SampleInstance> instances = new ArrayList<>();

	private static final List<CompletableFuture<HttpResponse<byte[]>>> killedPayments = new ArrayList<>();

	private static DataSource dataSource;

	private static JdbcClient jdbc;

	private static SampleInstance victim;

	private static SampleClient survivorClient;

	private static AccountOpeningCrash openings;

	private static GatewayEventCrash events;

	private static String account;

	private static String pending;

	private static String committed;

	@BeforeAll
	static void startInstancesAndKillOne() {
		dataSource = SampleInstance.schemaDataSource(SCHEMA);
		jdbc = JdbcClient.create(dataSource);
		Path logs = SampleInstance.jar().getParent().resolve("crash-it");
		// both start at once: the second one's start-up overlaps the first one's
		victim = launch("victim", logs);
		SampleInstance survivor = launch("survivor", logs);
		victim.awaitStarted(START_TIMEOUT);
		survivor.awaitStarted(START_TIMEOUT);
		survivorClient = new SampleClient(survivor.port());
		killWithRequestsInFlight(new SampleClient(victim.port()));
	}

	private static SampleInstance launch(String name, Path logs) {
		Map<String, Object> properties = new LinkedHashMap<>(TestServers.springProperties());
		properties.put("server.port", 0);
		properties.put("spring.datasource.hikari.schema", SCHEMA);
		// the server is shared: a small pool each, named to find its connections
		properties.put("spring.datasource.hikari.maximum-pool-size", 8);
		properties.put("spring.datasource.hikari.data-source-properties.ApplicationName", name + "-" + SCHEMA);
		properties.put("spring.flyway.schemas", SCHEMA);
		properties.put("spring.flyway.default-schema", SCHEMA);
		properties.put("idempotency.store.type", "tiered");
		properties.put("idempotency.redis.key-prefix", SCHEMA + ":");
		properties.put("idempotency.lock-timeout", "2s");
		properties.put("idempotency.ttl", "5m");
		properties.put("idempotency.policies.payments.ttl", "5m");
		properties.put("payments.demo.enabled", true);
		SampleInstance instance = SampleInstance.start(name, properties,
				List.of("-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"), logs);
		instances.add(instance);
		return instance;
	}

	private static void killWithRequestsInFlight(SampleClient victimClient) {
		account = openAccount(survivorClient, 100_000);
		pending = paymentJson(account, 1111, "Killed while the gateway works");
		committed = paymentJson(account, 2222, "Killed after the commit");
		CompletableFuture<HttpResponse<byte[]>> first = AccountOpeningCrash.send(() -> victimClient.post("alice",
				"/payments", pending, "Idempotency-Key", "crash-pending", "Demo-Gateway-Delay-Ms", "60000"));
		CompletableFuture<HttpResponse<byte[]>> second = AccountOpeningCrash.send(() -> victimClient.post("alice",
				"/payments", committed, "Idempotency-Key", "crash-committed", "Demo-Delay-After-Commit-Ms", "60000"));
		killedPayments.add(first);
		killedPayments.add(second);
		openings = new AccountOpeningCrash(jdbc, victim, "victim-" + SCHEMA);
		AccountOpeningCrash.awaitState(victim, "payment 'crash-pending' PENDING",
				() -> "PENDING".equals(status("crash-pending")), first);
		AccountOpeningCrash.awaitState(victim, "payment 'crash-committed' SUCCEEDED",
				() -> "SUCCEEDED".equals(status("crash-committed")), second);
		openings.awaitPaused();
		events = new GatewayEventCrash(jdbc, victim);
		events.awaitPaused();
		assertThat(charges("crash-pending")).as("charges before the kill").isZero();
		assertThat(charges("crash-committed")).as("charges before the kill").isOne();

		assertThat(victim.kill()).as("exit status of %s", victim).isEqualTo(SampleInstance.SIGKILL_EXIT_STATUS);
		openings.awaitVictimGone();
	}

	@AfterAll
	static void stopInstances() {
		instances.forEach(SampleInstance::close);
		if (dataSource != null) {
			TestServers.Postgres.dropSchema(dataSource, SCHEMA);
		}
	}

	@Test
	void aPaymentKilledBeforeOrAfterItsCommitIsTakenOnceAndDescribedByTheRetry() {
		killedPayments.forEach((request) -> assertThat(request).failsWithin(Duration.ofSeconds(30)));
		assertRecovered(survivorClient, "crash-pending", pending, 1111);
		assertRecovered(survivorClient, "crash-committed", committed, 2222);
		assertThat(balance(account)).isEqualTo(100_000 - 1111 - 2222);
	}

	@Test
	void gatewayEventsKilledBeforeOrAfterTheirCommitAreSettledOnceByTheRedeliveries() {
		events.assertUnanswered();
		events.assertSettledOnceByTheRedeliveries(survivorClient);
	}

	@Test
	void anAccountKilledBeforeTheHandlerIsOpenedOnceByTheRetries() {
		openings.assertOpenedOnceByTheRetries(survivorClient, AccountOpeningCrash.BEFORE_HANDLER);
	}

	@Test
	void anAccountKilledBeforeItsCommitIsOpenedOnceByTheRetries() {
		openings.assertOpenedOnceByTheRetries(survivorClient, AccountOpeningCrash.BEFORE_COMMIT);
	}

	@Test
	void anAccountKilledAfterItsCommitIsReplayedByTheRetries() {
		openings.assertReplayedByTheRetries(survivorClient);
	}

	private void assertRecovered(SampleClient client, String key, String body, long amount) {
		HttpResponse<byte[]> retry = retryUntilTheLeaseLapses(client, key, body);
		assertThat(retry.statusCode()).as("%s: %s", key, SampleClient.text(retry)).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).as(key).isEmpty();
		assertThat(payments(key)).as("payments with key %s", key).isOne();
		assertThat(charges(key)).as("gateway charges for key %s", key).isOne();
		assertThat(status(key)).isEqualTo("SUCCEEDED");
		assertThat(match(ID, retry)).as("the retry describes the payment").isEqualTo(paymentId(key));
		assertThat(Long.parseLong(match(AMOUNT, retry))).isEqualTo(amount);
		assertThat(SampleClient.text(retry)).contains("\"status\":\"SUCCEEDED\"");

		HttpResponse<byte[]> replay = client.post("alice", "/payments", body, "Idempotency-Key", key);
		assertThat(replay.statusCode()).isEqualTo(201);
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).contains("true");
		assertThat(replay.body()).as("replayed bytes").isEqualTo(retry.body());
		assertThat(payments(key)).isOne();
		assertThat(charges(key)).isOne();
	}

	// While the dead owner's lease lasts (2 s, no heartbeat any more) a retry gets 409;
	// the first retry after it lapses schedules the takeover one lease later (still 409),
	// and the first retry after that takes the key over.
	private HttpResponse<byte[]> retryUntilTheLeaseLapses(SampleClient client, String key, String body) {
		return AccountOpeningCrash.retryWhileInProgress(client, "/payments", key, body);
	}

	private static String openAccount(SampleClient client, long balance) {
		HttpResponse<byte[]> response = client.post("alice", "/accounts",
				"{\"currency\":\"EUR\",\"initialBalance\":" + balance + "}", "Idempotency-Key",
				"account-" + UUID.randomUUID());
		assertThat(response.statusCode()).as(SampleClient.text(response)).isEqualTo(201);
		return match(ID, response);
	}

	private static String paymentJson(String account, long amount, String description) {
		return "{\"accountId\":\"" + account + "\",\"amount\":" + amount + ",\"currency\":\"EUR\",\"description\":\""
				+ description + "\"}";
	}

	private static String match(Pattern pattern, HttpResponse<byte[]> response) {
		Matcher matcher = pattern.matcher(SampleClient.text(response));
		assertThat(matcher.find()).as("%s in %s", pattern, SampleClient.text(response)).isTrue();
		return matcher.group(1);
	}

	private static String status(String key) {
		return jdbc.sql("SELECT status FROM payments WHERE owner = 'alice' AND idempotency_key = ?")
			.param(key)
			.query(String.class)
			.optional()
			.orElse(null);
	}

	private static String paymentId(String key) {
		return jdbc.sql("SELECT id FROM payments WHERE owner = 'alice' AND idempotency_key = ?")
			.param(key)
			.query(UUID.class)
			.single()
			.toString();
	}

	private static long payments(String key) {
		return jdbc.sql("SELECT count(*) FROM payments WHERE owner = 'alice' AND idempotency_key = ?")
			.param(key)
			.query(Long.class)
			.single();
	}

	private static long charges(String key) {
		return jdbc.sql("SELECT count(*) FROM gateway_charges WHERE charge_key = ?")
			.param(PaymentService.chargeKey("alice", key))
			.query(Long.class)
			.single();
	}

	private static long balance(String account) {
		return jdbc.sql("SELECT balance FROM accounts WHERE id = ?")
			.param(UUID.fromString(account))
			.query(Long.class)
			.single();
	}

}
