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

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A crash in the middle of a request: the sample runs in child JVMs from its packaged
 * jar, in tiered mode (Redis in front of the {@link #database() database}, PostgreSQL or
 * MariaDB) with a 2 s lock timeout, and one of them is killed with {@code SIGKILL} while
 * five requests are in flight, each at a precise point. Two payments (the default mode:
 * the handler commits on its own):
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
 * claim, then open the account once (the database rolled the dead owner's transaction
 * back when its connection dropped) or replay the committed response without opening it
 * again. Every later retry replays the same bytes, and the database holds exactly one
 * payment and one gateway charge, or one account, per key: never none with a replay,
 * never two.
 *
 * @author Idempotency contributors
 * @see AbstractTransactionalCrashJdbcIT
 */
@Tag("reliability")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractCrashRecoveryIT {

	private static final Duration START_TIMEOUT = Duration.ofMinutes(3);

	private static final Pattern ID = Pattern.compile("\"id\":\"([0-9a-f-]{36})\"");

	private static final Pattern AMOUNT = Pattern.compile("\"amount\":(\\d+)");

	private final String schema = "crash_it_" + Long.toHexString(System.nanoTime());

	private final List<SampleInstance> instances = new ArrayList<>();

	private final List<CompletableFuture<HttpResponse<byte[]>>> killedPayments = new ArrayList<>();

	private TestDatabase.Namespace namespace;

	private JdbcClient jdbc;

	private SampleInstance victim;

	private SampleInstance survivor;

	private SampleClient survivorClient;

	private AccountOpeningCrash openings;

	private GatewayEventCrash events;

	private String account;

	private String pending;

	private String committed;

	/**
	 * Return the database the instances run on.
	 * @return the database
	 */
	abstract TestDatabase database();

	@BeforeAll
	void startInstancesAndKillOne() {
		this.namespace = database().create(this.schema);
		this.jdbc = this.namespace.jdbc();
		Path logs = SampleInstance.jar()
			.getParent()
			.resolve((database() == TestDatabase.POSTGRESQL) ? "crash-it" : "crash-it-mariadb");
		// both start at once: the second one's start-up overlaps the first one's
		this.victim = launch("victim", logs);
		this.survivor = launch("survivor", logs);
		this.victim.awaitStarted(START_TIMEOUT);
		this.survivor.awaitStarted(START_TIMEOUT);
		this.survivorClient = new SampleClient(this.survivor.port());
		killWithRequestsInFlight(new SampleClient(this.victim.port()));
	}

	private SampleInstance launch(String name, Path logs) {
		Map<String, Object> properties = new LinkedHashMap<>(this.namespace.springProperties());
		properties.put("server.port", 0);
		// the server is shared: a small pool each, named to find its connections
		properties.put("spring.datasource.hikari.maximum-pool-size", 8);
		properties.putAll(this.namespace.connectionNameProperties(name + "-" + this.schema));
		properties.put("idempotency.store.type", "tiered");
		properties.put("idempotency.redis.key-prefix", this.schema + ":");
		properties.put("idempotency.lock-timeout", "2s");
		properties.put("idempotency.ttl", "5m");
		properties.put("idempotency.policies.payments.ttl", "5m");
		properties.put("payments.demo.enabled", true);
		SampleInstance instance = SampleInstance.start(name, properties,
				List.of("-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"), logs);
		this.instances.add(instance);
		return instance;
	}

	private void killWithRequestsInFlight(SampleClient victimClient) {
		this.account = openAccount(this.survivorClient, 100_000);
		// the victim's first transactional request, its code still cold, must not be one
		// of those it is killed in: with a 2 s lock timeout (the request transaction's
		// time-out) a busy machine can time it out before it reaches its pause
		openAccount(victimClient, 1);
		this.pending = paymentJson(this.account, 1111, "Killed while the gateway works");
		this.committed = paymentJson(this.account, 2222, "Killed after the commit");
		String pendingJson = this.pending;
		String committedJson = this.committed;
		CompletableFuture<HttpResponse<byte[]>> first = AccountOpeningCrash.send(() -> victimClient.post("alice",
				"/payments", pendingJson, "Idempotency-Key", "crash-pending", "Demo-Gateway-Delay-Ms", "60000"));
		CompletableFuture<HttpResponse<byte[]>> second = AccountOpeningCrash
			.send(() -> victimClient.post("alice", "/payments", committedJson, "Idempotency-Key", "crash-committed",
					"Demo-Delay-After-Commit-Ms", "60000"));
		this.killedPayments.add(first);
		this.killedPayments.add(second);
		this.openings = new AccountOpeningCrash(this.namespace, this.victim, "victim-" + this.schema, this.survivor,
				this.schema + ":");
		AccountOpeningCrash.awaitState(this.victim, "payment 'crash-pending' PENDING",
				() -> "PENDING".equals(status("crash-pending")), first);
		AccountOpeningCrash.awaitState(this.victim, "payment 'crash-committed' SUCCEEDED",
				() -> "SUCCEEDED".equals(status("crash-committed")), second);
		this.openings.awaitPaused();
		this.events = new GatewayEventCrash(this.jdbc, this.victim);
		this.events.awaitPaused();
		assertThat(charges("crash-pending")).as("charges before the kill").isZero();
		assertThat(charges("crash-committed")).as("charges before the kill").isOne();

		assertThat(this.victim.kill()).as("exit status of %s", this.victim)
			.isEqualTo(SampleInstance.SIGKILL_EXIT_STATUS);
		this.openings.awaitVictimGone();
	}

	@AfterAll
	void stopInstances() {
		this.instances.forEach(SampleInstance::close);
		if (this.namespace != null) {
			this.namespace.close();
		}
	}

	@Test
	void aPaymentKilledBeforeOrAfterItsCommitIsTakenOnceAndDescribedByTheRetry() {
		this.killedPayments.forEach((request) -> assertThat(request).failsWithin(Duration.ofSeconds(30)));
		assertRecovered(this.survivorClient, "crash-pending", this.pending, 1111);
		assertRecovered(this.survivorClient, "crash-committed", this.committed, 2222);
		assertThat(balance(this.account)).isEqualTo(100_000 - 1111 - 2222);
	}

	@Test
	void gatewayEventsKilledBeforeOrAfterTheirCommitAreSettledOnceByTheRedeliveries() {
		this.events.assertUnanswered();
		this.events.assertSettledOnceByTheRedeliveries(this.survivorClient);
	}

	@Test
	void anAccountKilledBeforeTheHandlerIsOpenedOnceByTheRetries() {
		this.openings.assertOpenedOnceByTheRetries(this.survivorClient, AccountOpeningCrash.BEFORE_HANDLER);
	}

	@Test
	void anAccountKilledBeforeItsCommitIsOpenedOnceByTheRetries() {
		this.openings.assertOpenedOnceByTheRetries(this.survivorClient, AccountOpeningCrash.BEFORE_COMMIT);
	}

	@Test
	void anAccountKilledAfterItsCommitIsReplayedByTheRetries() {
		this.openings.assertReplayedByTheRetries(this.survivorClient);
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

	// Retried while the store is unavailable: the first transactional request of an
	// instance runs cold code within its 2 s transaction time-out, which a busy machine
	// can exceed (a 503, which a client retries)
	private static String openAccount(SampleClient client, long balance) {
		String key = "account-" + UUID.randomUUID();
		String json = "{\"currency\":\"EUR\",\"initialBalance\":" + balance + "}";
		long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
		HttpResponse<byte[]> response = client.post("alice", "/accounts", json, "Idempotency-Key", key);
		while (response.statusCode() == 503 && System.nanoTime() < deadline) {
			AccountOpeningCrash.pause(Duration.ofMillis(500));
			response = client.post("alice", "/accounts", json, "Idempotency-Key", key);
		}
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

	private String status(String key) {
		return this.jdbc.sql("SELECT status FROM payments WHERE owner = 'alice' AND idempotency_key = ?")
			.param(key)
			.query(String.class)
			.optional()
			.orElse(null);
	}

	private String paymentId(String key) {
		return this.jdbc.sql("SELECT id FROM payments WHERE owner = 'alice' AND idempotency_key = ?")
			.param(key)
			.query(UUID.class)
			.single()
			.toString();
	}

	private long payments(String key) {
		return this.jdbc.sql("SELECT count(*) FROM payments WHERE owner = 'alice' AND idempotency_key = ?")
			.param(key)
			.query(Long.class)
			.single();
	}

	private long charges(String key) {
		return this.jdbc.sql("SELECT count(*) FROM gateway_charges WHERE charge_key = ?")
			.param(PaymentService.chargeKey("alice", key))
			.query(Long.class)
			.single();
	}

	private long balance(String account) {
		return this.jdbc.sql("SELECT balance FROM accounts WHERE id = ?")
			.param(UUID.fromString(account))
			.query(Long.class)
			.single();
	}

}
