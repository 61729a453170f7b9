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
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Three openings of an account, {@code POST /accounts} of the transactional "accounts"
 * policy, that a crash test sends to the instance it is about to kill, each paused by the
 * demo-only {@link DemoTransactionPauses} at one point of its request transaction:
 * <ul>
 * <li>before the handler: the key is claimed in the open transaction, nothing is written;
 * <li>after the handler wrote the account, before the commit;
 * <li>after the commit, before the response is written (in tiered mode, before Redis is
 * completed too).
 * </ul>
 * {@link #awaitPaused()} returns once PostgreSQL shows every state: the victim's two
 * transactions open, each holding its claim's advisory lock and only the second one its
 * insert into the accounts, and the third account committed. After the kill, the
 * assertions race several retries of each key on a surviving instance: each rolled-back
 * opening runs once, the committed one is replayed, every answer carries the same bytes,
 * and the database holds exactly one account per key.
 *
 * @author Idempotency contributors
 */
final class AccountOpeningCrash {

	static final Opening BEFORE_HANDLER = new Opening("crash-account-before-handler", 31_001,
			DemoTransactionPauses.BEFORE_HANDLER, "before the handler");

	static final Opening BEFORE_COMMIT = new Opening("crash-account-before-commit", 32_002,
			DemoTransactionPauses.BEFORE_COMMIT, "before the commit");

	static final Opening AFTER_COMMIT = new Opening("crash-account-after-commit", 33_003,
			DemoTransactionPauses.AFTER_COMMIT, "after the commit");

	private static final List<Opening> OPENINGS = List.of(BEFORE_HANDLER, BEFORE_COMMIT, AFTER_COMMIT);

	private static final Duration PATIENCE = Duration.ofSeconds(60);

	private static final Pattern ID = Pattern.compile("\"id\":\"([0-9a-f-]{36})\"");

	private static final int RACING_RETRIES = 4;

	private final JdbcClient jdbc;

	private final SampleInstance victim;

	private final String victimApplicationName;

	private final List<CompletableFuture<HttpResponse<byte[]>>> requests = new ArrayList<>();

	/**
	 * Send the three openings to the victim.
	 * @param jdbc the schema of the instances
	 * @param victim the instance to kill
	 * @param victimApplicationName the {@code ApplicationName} of its connections
	 */
	AccountOpeningCrash(JdbcClient jdbc, SampleInstance victim, String victimApplicationName) {
		this.jdbc = jdbc;
		this.victim = victim;
		this.victimApplicationName = victimApplicationName;
		SampleClient client = new SampleClient(victim.port());
		for (Opening opening : OPENINGS) {
			this.requests.add(send(() -> client.post("alice", "/accounts", opening.body(), "Idempotency-Key",
					opening.key(), opening.pauseHeader(), "60000")));
		}
	}

	/**
	 * Wait until the three openings are paused, and check what the database shows then.
	 */
	void awaitPaused() {
		for (int i = 0; i < OPENINGS.size(); i++) {
			Opening opening = OPENINGS.get(i);
			awaitState(this.victim, "the pause " + opening.point() + " of '" + opening.key() + "'",
					() -> this.victim.output().contains(opening.pauseLogLine()), this.requests.get(i));
		}
		awaitState(this.victim, "account '" + AFTER_COMMIT.key() + "' committed", () -> accounts(AFTER_COMMIT) == 1,
				this.requests.get(2));
		// the two paused transactions: open, each holding its claim's advisory lock, and
		// only the second one holding its insert into the accounts
		awaitState(this.victim, "the victim's two transactions open", () -> victimTransactions(false) == 2,
				this.requests.get(0));
		assertThat(victimTransactions(true)).as("open transactions that wrote to the accounts").isOne();
		assertThat(accounts(BEFORE_HANDLER)).as("accounts before the kill").isZero();
		assertThat(accounts(BEFORE_COMMIT)).as("committed accounts before the kill").isZero();
	}

	/**
	 * Once the victim is killed, wait until PostgreSQL has ended its sessions (rolling
	 * back their transactions), and check that its requests got no answer.
	 */
	void awaitVictimGone() {
		assertThat(this.victim.isAlive()).as("%s alive", this.victim).isFalse();
		awaitCondition("the victim's connections closed", () -> victimConnections() == 0);
		this.requests.forEach((request) -> assertThat(request).failsWithin(Duration.ofSeconds(30)));
	}

	/**
	 * Race retries of an opening rolled back by the crash on the survivor: exactly one of
	 * them opens the account, the others replay it.
	 * @param survivor a client of the survivor
	 * @param opening {@link #BEFORE_HANDLER} or {@link #BEFORE_COMMIT}
	 */
	void assertOpenedOnceByTheRetries(SampleClient survivor, Opening opening) {
		assertThat(accounts(opening)).as("accounts of the rolled-back transaction").isZero();
		List<HttpResponse<byte[]>> retries = raceRetries(survivor, opening);
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
		assertThat(match(executed.get(0))).as("the retry describes the account").isEqualTo(accountId(opening));
		assertReplayed(survivor, opening, executed.get(0));
	}

	/**
	 * Race retries of the opening committed before the crash on the survivor: every one
	 * replays it, none opens another account.
	 * @param survivor a client of the survivor
	 */
	void assertReplayedByTheRetries(SampleClient survivor) {
		String id = accountId(AFTER_COMMIT);
		List<HttpResponse<byte[]>> retries = raceRetries(survivor, AFTER_COMMIT);
		for (HttpResponse<byte[]> retry : retries) {
			assertThat(retry.statusCode()).as(SampleClient.text(retry)).isEqualTo(201);
			assertThat(retry.headers().firstValue("Idempotent-Replayed")).as("a retry ran the handler")
				.contains("true");
			assertThat(retry.body()).as("replayed bytes").isEqualTo(retries.get(0).body());
		}
		assertThat(match(retries.get(0))).as("the replay describes the committed account").isEqualTo(id);
		assertThat(accounts(AFTER_COMMIT)).as("accounts opened with key %s", AFTER_COMMIT.key()).isOne();
		assertReplayed(survivor, AFTER_COMMIT, retries.get(0));
	}

	private void assertReplayed(SampleClient survivor, Opening opening, HttpResponse<byte[]> answer) {
		HttpResponse<byte[]> replay = survivor.post("alice", "/accounts", opening.body(), "Idempotency-Key",
				opening.key());
		assertThat(replay.statusCode()).as(SampleClient.text(replay)).isEqualTo(201);
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).contains("true");
		assertThat(replay.body()).as("replayed bytes").isEqualTo(answer.body());
		assertThat(accounts(opening)).isOne();
	}

	// Several clients retry the same key at once, each until it is not answered 409 any
	// more (a claim of a live retry holds the key, or, in tiered mode, the dead owner's
	// Redis claim until its lease lapses).
	private static List<HttpResponse<byte[]>> raceRetries(SampleClient survivor, Opening opening) {
		ExecutorService executor = Executors.newFixedThreadPool(RACING_RETRIES);
		try {
			CyclicBarrier start = new CyclicBarrier(RACING_RETRIES);
			List<CompletableFuture<HttpResponse<byte[]>>> retries = new ArrayList<>();
			for (int i = 0; i < RACING_RETRIES; i++) {
				retries.add(CompletableFuture.supplyAsync(() -> {
					await(start);
					return retryWhileInProgress(survivor, "/accounts", opening.key(), opening.body());
				}, executor));
			}
			List<HttpResponse<byte[]>> answers = new ArrayList<>();
			for (CompletableFuture<HttpResponse<byte[]>> retry : retries) {
				answers.add(retry.get());
			}
			return answers;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		catch (ExecutionException ex) {
			throw new IllegalStateException("A retry failed", ex.getCause());
		}
		finally {
			executor.shutdownNow();
		}
	}

	/**
	 * Post a request until it is not answered {@code 409 request-in-progress}, for at
	 * most a minute.
	 * @param client the client
	 * @param path the path
	 * @param key the idempotency key
	 * @param body the JSON body
	 * @return the first other answer, or the last one after a minute
	 */
	static HttpResponse<byte[]> retryWhileInProgress(SampleClient client, String path, String key, String body) {
		long deadline = System.nanoTime() + PATIENCE.toNanos();
		while (true) {
			HttpResponse<byte[]> response = client.post("alice", path, body, "Idempotency-Key", key);
			if (response.statusCode() != 409 || System.nanoTime() > deadline) {
				return response;
			}
			assertThat(SampleClient.text(response)).contains("request-in-progress");
			pause(Duration.ofMillis(100));
		}
	}

	/**
	 * Send a request on a thread of its own: requests sent so are in flight at once.
	 * @param request sends the request
	 * @return its answer, or its failure
	 */
	static CompletableFuture<HttpResponse<byte[]>> send(Supplier<HttpResponse<byte[]>> request) {
		CompletableFuture<HttpResponse<byte[]>> future = new CompletableFuture<>();
		Thread thread = new Thread(() -> {
			try {
				future.complete(request.get());
			}
			catch (Throwable ex) {
				future.completeExceptionally(ex);
			}
		}, "crash-test-request");
		thread.setDaemon(true);
		thread.start();
		return future;
	}

	/**
	 * Wait until a request in flight has reached a state, polling for at most a minute.
	 * @param instance the instance that serves the request
	 * @param description the state, for the failure message
	 * @param reached whether it is reached
	 * @param request the request, which must not end before
	 */
	static void awaitState(SampleInstance instance, String description, BooleanSupplier reached,
			CompletableFuture<HttpResponse<byte[]>> request) {
		long deadline = System.nanoTime() + PATIENCE.toNanos();
		while (!reached.getAsBoolean()) {
			if (request.isDone()) {
				HttpResponse<byte[]> response = request.exceptionally((ex) -> null).join();
				fail("The request ended before the state was reached, " + description + ": "
						+ ((response != null) ? response.statusCode() + " " + SampleClient.text(response) : "it failed")
						+ "\n" + instance.output());
			}
			if (System.nanoTime() > deadline) {
				fail("Not reached within " + PATIENCE.toSeconds() + " s: " + description + "\n" + instance.output());
			}
			pause(Duration.ofMillis(20));
		}
	}

	private static void awaitCondition(String description, BooleanSupplier reached) {
		long deadline = System.nanoTime() + PATIENCE.toNanos();
		while (!reached.getAsBoolean()) {
			if (System.nanoTime() > deadline) {
				fail("Not reached within " + PATIENCE.toSeconds() + " s: " + description);
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

	static void pause(Duration duration) {
		try {
			Thread.sleep(duration.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	// The victim's sessions open in a transaction and holding an advisory lock (a
	// transactional claim), optionally only those that inserted into the accounts
	private long victimTransactions(boolean wroteAccounts) {
		return this.jdbc.sql("""
				SELECT count(*) FROM pg_stat_activity a
				WHERE a.application_name = ? AND a.state = 'idle in transaction'
					AND EXISTS (SELECT 1 FROM pg_locks l
						WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.granted)
					AND (NOT ? OR EXISTS (SELECT 1 FROM pg_locks l
						WHERE l.pid = a.pid AND l.locktype = 'relation' AND l.granted
							AND l.relation = 'accounts'::regclass AND l.mode = 'RowExclusiveLock'))
				""").params(this.victimApplicationName, wroteAccounts).query(Long.class).single();
	}

	private long victimConnections() {
		return this.jdbc.sql("SELECT count(*) FROM pg_stat_activity WHERE application_name = ?")
			.param(this.victimApplicationName)
			.query(Long.class)
			.single();
	}

	// the opening balance of each opening is its own: it tells its accounts apart
	private long accounts(Opening opening) {
		return this.jdbc.sql("SELECT count(*) FROM accounts WHERE owner = 'alice' AND balance = ?")
			.param(opening.balance())
			.query(Long.class)
			.single();
	}

	private String accountId(Opening opening) {
		return this.jdbc.sql("SELECT id FROM accounts WHERE owner = 'alice' AND balance = ?")
			.param(opening.balance())
			.query(UUID.class)
			.single()
			.toString();
	}

	private static String match(HttpResponse<byte[]> response) {
		Matcher matcher = ID.matcher(SampleClient.text(response));
		assertThat(matcher.find()).as("%s in %s", ID, SampleClient.text(response)).isTrue();
		return matcher.group(1);
	}

	/**
	 * An account opening killed at one point of its transaction.
	 *
	 * @param key its idempotency key
	 * @param balance its opening balance, which no other account of the test has
	 * @param pauseHeader the demo header that pauses it at that point
	 * @param point where it is paused, as the sample logs it
	 */
	record Opening(String key, long balance, String pauseHeader, String point) {

		String body() {
			return "{\"currency\":\"EUR\",\"initialBalance\":" + this.balance + "}";
		}

		String pauseLogLine() {
			return "Demo pause of 60000 ms " + this.point + " of POST /accounts, key '" + this.key + "'";
		}

	}

}
