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
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.sql.DataSource;

import dev.idempotency.spring.test.TestServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

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
 * Three account openings (the transactional mode: the claim, the account and the stored
 * response commit in one transaction), paused by the demo-only
 * {@link DemoTransactionPauses}:
 * <ul>
 * <li>before the handler: the key is claimed in the open transaction, nothing is written;
 * <li>after the handler wrote the account, before the commit;
 * <li>after the commit, before the response is written (and before Redis is completed).
 * </ul>
 * The kill happens only once the database shows every state: the payments' rows, the
 * victim's two transactions open with their claims' advisory locks (one of them holding
 * its insert into the accounts), and the third account committed.
 * <p>
 * The retries go to the other instance. A payment's retry, once the dead owner's lease
 * has lapsed, runs the handler again, which resumes the payment instead of paying twice.
 * An account's retries, raced from several threads, either open the account once
 * (PostgreSQL rolled the dead owner's transaction back when its connection dropped) or
 * replay the committed response without opening it again. Every later retry replays the
 * same bytes, and the database holds exactly one payment and one gateway charge, or one
 * account, per key: never none with a replay, never two.
 *
 * @author Idempotency contributors
 */
class CrashRecoveryIT {

	private static final String SCHEMA = "crash_it_" + Long.toHexString(System.nanoTime());

	private static final String VICTIM = "victim-" + SCHEMA;

	private static final Duration START_TIMEOUT = Duration.ofMinutes(3);

	private static final Pattern ID = Pattern.compile("\"id\":\"([0-9a-f-]{36})\"");

	private static final Pattern AMOUNT = Pattern.compile("\"amount\":(\\d+)");

	private static final int RACING_RETRIES = 4;

	private static final List<SampleInstance> instances = new ArrayList<>();

	private static final List<CompletableFuture<HttpResponse<byte[]>>> killed = new ArrayList<>();

	private static final Opening BEFORE_HANDLER = new Opening("crash-account-before-handler", 31_001,
			DemoTransactionPauses.BEFORE_HANDLER, "before the handler");

	private static final Opening BEFORE_COMMIT = new Opening("crash-account-before-commit", 32_002,
			DemoTransactionPauses.BEFORE_COMMIT, "before the commit");

	private static final Opening AFTER_COMMIT = new Opening("crash-account-after-commit", 33_003,
			DemoTransactionPauses.AFTER_COMMIT, "after the commit");

	private static DataSource dataSource;

	private static JdbcClient jdbc;

	private static SampleInstance victim;

	private static SampleInstance survivor;

	private static SampleClient survivorClient;

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
		survivor = launch("survivor", logs);
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
		CompletableFuture<HttpResponse<byte[]>> first = send(() -> victimClient.post("alice", "/payments", pending,
				"Idempotency-Key", "crash-pending", "Demo-Gateway-Delay-Ms", "60000"));
		CompletableFuture<HttpResponse<byte[]>> second = send(() -> victimClient.post("alice", "/payments", committed,
				"Idempotency-Key", "crash-committed", "Demo-Delay-After-Commit-Ms", "60000"));
		List<CompletableFuture<HttpResponse<byte[]>>> openings = new ArrayList<>();
		for (Opening opening : List.of(BEFORE_HANDLER, BEFORE_COMMIT, AFTER_COMMIT)) {
			openings.add(send(() -> victimClient.post("alice", "/accounts", opening.body(), "Idempotency-Key",
					opening.key(), opening.pauseHeader(), "60000")));
		}
		awaitState("payment 'crash-pending' PENDING", () -> "PENDING".equals(status("crash-pending")), first);
		awaitState("payment 'crash-committed' SUCCEEDED", () -> "SUCCEEDED".equals(status("crash-committed")), second);
		List<Opening> paused = List.of(BEFORE_HANDLER, BEFORE_COMMIT, AFTER_COMMIT);
		for (int i = 0; i < paused.size(); i++) {
			Opening opening = paused.get(i);
			awaitState("the pause " + opening.point() + " of '" + opening.key() + "'",
					() -> victim.output().contains(opening.pauseLogLine()), openings.get(i));
		}
		awaitState("account '" + AFTER_COMMIT.key() + "' committed", () -> accounts(AFTER_COMMIT) == 1,
				openings.get(2));
		// the two paused transactions: open, each holding its claim's advisory lock, and
		// only the second one holding its insert into the accounts
		awaitState("the victim's two transactions open", () -> victimTransactions(false) == 2, openings.get(0));
		assertThat(victimTransactions(true)).as("open transactions that wrote to the accounts").isOne();
		assertThat(charges("crash-pending")).as("charges before the kill").isZero();
		assertThat(charges("crash-committed")).as("charges before the kill").isOne();
		assertThat(accounts(BEFORE_HANDLER)).as("accounts before the kill").isZero();
		assertThat(accounts(BEFORE_COMMIT)).as("committed accounts before the kill").isZero();

		assertThat(victim.kill()).as("exit status of %s", victim).isEqualTo(SampleInstance.SIGKILL_EXIT_STATUS);
		killed.add(first);
		killed.add(second);
		killed.addAll(openings);
		// its connections dropped with it: PostgreSQL ends their sessions, rolling back
		awaitCondition("the victim's connections closed", () -> victimConnections() == 0);
	}

	@AfterAll
	static void stopInstances() {
		instances.forEach(SampleInstance::close);
		if (dataSource != null) {
			TestServers.Postgres.dropSchema(dataSource, SCHEMA);
		}
	}

	@Test
	void theKilledRequestsGetNoAnswer() {
		killed.forEach((request) -> assertThat(request).failsWithin(Duration.ofSeconds(30)));
	}

	@Test
	void aPaymentKilledBeforeOrAfterItsCommitIsTakenOnceAndDescribedByTheRetry() {
		assertRecovered(survivorClient, "crash-pending", pending, 1111);
		assertRecovered(survivorClient, "crash-committed", committed, 2222);
		assertThat(balance(account)).isEqualTo(100_000 - 1111 - 2222);
	}

	@Test
	void anAccountKilledBeforeTheHandlerIsOpenedOnceByTheRetries() throws Exception {
		assertOpenedOnceByTheRetries(BEFORE_HANDLER);
	}

	@Test
	void anAccountKilledBeforeItsCommitIsOpenedOnceByTheRetries() throws Exception {
		assertOpenedOnceByTheRetries(BEFORE_COMMIT);
	}

	@Test
	void anAccountKilledAfterItsCommitIsReplayedByTheRetries() throws Exception {
		String id = accountId(AFTER_COMMIT);
		List<HttpResponse<byte[]>> retries = raceRetries(AFTER_COMMIT);
		for (HttpResponse<byte[]> retry : retries) {
			assertThat(retry.statusCode()).as(SampleClient.text(retry)).isEqualTo(201);
			assertThat(retry.headers().firstValue("Idempotent-Replayed")).as("a retry ran the handler")
				.contains("true");
			assertThat(retry.body()).as("replayed bytes").isEqualTo(retries.get(0).body());
		}
		assertThat(match(ID, retries.get(0))).as("the replay describes the committed account").isEqualTo(id);
		assertThat(accounts(AFTER_COMMIT)).as("accounts opened with key %s", AFTER_COMMIT.key()).isOne();
		assertReplayed(AFTER_COMMIT, retries.get(0));
	}

	private void assertOpenedOnceByTheRetries(Opening opening) throws Exception {
		assertThat(accounts(opening)).as("accounts of the rolled-back transaction").isZero();
		List<HttpResponse<byte[]>> retries = raceRetries(opening);
		List<HttpResponse<byte[]>> executed = new ArrayList<>();
		for (HttpResponse<byte[]> retry : retries) {
			assertThat(retry.statusCode()).as(SampleClient.text(retry)).isEqualTo(201);
			if (retry.headers().firstValue("Idempotent-Replayed").isEmpty()) {
				executed.add(retry);
			}
		}
		assertThat(executed).as("retries that ran the handler").hasSize(1);
		for (HttpResponse<byte[]> retry : retries) {
			assertThat(retry.body()).as("bytes of every retry").isEqualTo(executed.get(0).body());
		}
		assertThat(accounts(opening)).as("accounts opened with key %s", opening.key()).isOne();
		assertThat(match(ID, executed.get(0))).as("the retry describes the account").isEqualTo(accountId(opening));
		assertReplayed(opening, executed.get(0));
	}

	private void assertReplayed(Opening opening, HttpResponse<byte[]> answer) {
		HttpResponse<byte[]> replay = survivorClient.post("alice", "/accounts", opening.body(), "Idempotency-Key",
				opening.key());
		assertThat(replay.statusCode()).as(SampleClient.text(replay)).isEqualTo(201);
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).contains("true");
		assertThat(replay.body()).as("replayed bytes").isEqualTo(answer.body());
		assertThat(accounts(opening)).isOne();
	}

	// Several clients retry the same key at once on the survivor, each until it is not
	// answered 409 any more (the dead owner's Redis claim holds the key until its lease
	// lapses, and then one retry at a time).
	private static List<HttpResponse<byte[]>> raceRetries(Opening opening) throws Exception {
		ExecutorService executor = Executors.newFixedThreadPool(RACING_RETRIES);
		try {
			CyclicBarrier start = new CyclicBarrier(RACING_RETRIES);
			List<CompletableFuture<HttpResponse<byte[]>>> retries = new ArrayList<>();
			for (int i = 0; i < RACING_RETRIES; i++) {
				retries.add(CompletableFuture.supplyAsync(() -> {
					await(start);
					return retryWhileInProgress(survivorClient, "/accounts", opening.key(), opening.body());
				}, executor));
			}
			List<HttpResponse<byte[]>> answers = new ArrayList<>();
			for (CompletableFuture<HttpResponse<byte[]>> retry : retries) {
				answers.add(retry.get());
			}
			return answers;
		}
		finally {
			executor.shutdownNow();
		}
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
		return retryWhileInProgress(client, "/payments", key, body);
	}

	private static HttpResponse<byte[]> retryWhileInProgress(SampleClient client, String path, String key,
			String body) {
		long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
		while (true) {
			HttpResponse<byte[]> response = client.post("alice", path, body, "Idempotency-Key", key);
			if (response.statusCode() != 409 || System.nanoTime() > deadline) {
				return response;
			}
			assertThat(SampleClient.text(response)).contains("request-in-progress");
			pause(Duration.ofMillis(100));
		}
	}

	private static CompletableFuture<HttpResponse<byte[]>> send(Supplier<HttpResponse<byte[]>> request) {
		// a thread each: the requests must be in flight at once
		CompletableFuture<HttpResponse<byte[]>> future = new CompletableFuture<>();
		Thread thread = new Thread(() -> {
			try {
				future.complete(request.get());
			}
			catch (Throwable ex) {
				future.completeExceptionally(ex);
			}
		}, "crash-it-request");
		thread.setDaemon(true);
		thread.start();
		return future;
	}

	private static void awaitState(String description, BooleanSupplier reached,
			CompletableFuture<HttpResponse<byte[]>> request) {
		long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
		while (!reached.getAsBoolean()) {
			if (request.isDone()) {
				HttpResponse<byte[]> response = request.exceptionally((ex) -> null).join();
				fail("The request ended before the state was reached, " + description + ": "
						+ ((response != null) ? response.statusCode() + " " + SampleClient.text(response) : "it failed")
						+ "\n" + victim.output());
			}
			if (System.nanoTime() > deadline) {
				fail("Not reached within 60 s: " + description + "\n" + victim.output());
			}
			pause(Duration.ofMillis(20));
		}
	}

	private static void awaitCondition(String description, BooleanSupplier reached) {
		long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
		while (!reached.getAsBoolean()) {
			if (System.nanoTime() > deadline) {
				fail("Not reached within 60 s: " + description);
			}
			pause(Duration.ofMillis(20));
		}
	}

	private static void await(CyclicBarrier barrier) {
		try {
			barrier.await(30, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	// The victim's sessions open in a transaction and holding an advisory lock (a
	// transactional claim), optionally only those that inserted into the accounts
	private static long victimTransactions(boolean wroteAccounts) {
		return jdbc.sql("""
				SELECT count(*) FROM pg_stat_activity a
				WHERE a.application_name = ? AND a.state = 'idle in transaction'
					AND EXISTS (SELECT 1 FROM pg_locks l
						WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.granted)
					AND (NOT ? OR EXISTS (SELECT 1 FROM pg_locks l
						WHERE l.pid = a.pid AND l.locktype = 'relation' AND l.granted
							AND l.relation = 'accounts'::regclass AND l.mode = 'RowExclusiveLock'))
				""").params(VICTIM, wroteAccounts).query(Long.class).single();
	}

	private static long victimConnections() {
		return jdbc.sql("SELECT count(*) FROM pg_stat_activity WHERE application_name = ?")
			.param(VICTIM)
			.query(Long.class)
			.single();
	}

	// the opening balance of each opening is its own: it tells its accounts apart
	private static long accounts(Opening opening) {
		return jdbc.sql("SELECT count(*) FROM accounts WHERE owner = 'alice' AND balance = ?")
			.param(opening.balance())
			.query(Long.class)
			.single();
	}

	private static String accountId(Opening opening) {
		return jdbc.sql("SELECT id FROM accounts WHERE owner = 'alice' AND balance = ?")
			.param(opening.balance())
			.query(UUID.class)
			.single()
			.toString();
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

	private static void pause(Duration duration) {
		try {
			Thread.sleep(duration.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * An account opening killed at one point of its transaction.
	 *
	 * @param key its idempotency key
	 * @param balance its opening balance, which no other account of the test has
	 * @param pauseHeader the demo header that pauses it at that point
	 * @param point where it is paused, as the sample logs it
	 */
	private record Opening(String key, long balance, String pauseHeader, String point) {

		String body() {
			return "{\"currency\":\"EUR\",\"initialBalance\":" + this.balance + "}";
		}

		String pauseLogLine() {
			return "Demo pause of 60000 ms " + this.point + " of POST /accounts, key '" + this.key + "'";
		}

	}

}
