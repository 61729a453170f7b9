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
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
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

import dev.idempotency.test.servers.TestServers;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.util.StringUtils;

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
 * {@link #awaitPaused()} returns once the database shows every state: the victim's two
 * transactions open, each holding its claim (on PostgreSQL an advisory lock, on MariaDB
 * the uncommitted row of the claim) and only the second one its insert into the accounts,
 * and the third account committed. After the kill, the assertions race several retries of
 * each key on a surviving instance: each rolled-back opening runs once, the committed one
 * is replayed, every answer carries the same bytes, and the database holds exactly one
 * account per key.
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

	private final TestDatabase.Namespace namespace;

	private final JdbcClient jdbc;

	private final SampleInstance victim;

	private final String victimConnectionName;

	private final SampleInstance survivor;

	private final @Nullable String redisPrefix;

	private final List<CompletableFuture<HttpResponse<byte[]>>> requests = new ArrayList<>();

	// MariaDB: the sessions of the victim's paused transactions, by thread id
	private List<Long> victimThreads = List.of();

	/**
	 * Send the three openings to the victim.
	 * @param namespace the schema or database of the instances
	 * @param victim the instance to kill
	 * @param victimConnectionName the name of its connections
	 * ({@link TestDatabase.Namespace#connectionNameProperties(String)})
	 * @param survivor the instance that the retries go to, whose output a failure shows
	 * @param redisPrefix the key prefix of the instances' Redis records (tiered mode), or
	 * {@code null} if they use none
	 */
	AccountOpeningCrash(TestDatabase.Namespace namespace, SampleInstance victim, String victimConnectionName,
			SampleInstance survivor, @Nullable String redisPrefix) {
		this.namespace = namespace;
		this.jdbc = namespace.jdbc();
		this.victim = victim;
		this.victimConnectionName = victimConnectionName;
		this.survivor = survivor;
		this.redisPrefix = redisPrefix;
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
		// the two paused transactions: open, each holding its claim, and only the second
		// one holding its insert into the accounts
		awaitState(this.victim, "the victim's two transactions open", () -> victimTransactions() == 2,
				this.requests.get(0));
		assertThat(victimTransactionsThatWroteAccounts()).as("open transactions that wrote to the accounts").isOne();
		assertThat(accounts(BEFORE_HANDLER)).as("accounts before the kill").isZero();
		assertThat(accounts(BEFORE_COMMIT)).as("committed accounts before the kill").isZero();
	}

	/**
	 * Once the victim is killed, wait until the database has ended its sessions (rolling
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
			assertThat(retry.statusCode()).as(() -> describe(retry)).isEqualTo(201);
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
			assertThat(retry.statusCode()).as(() -> describe(retry)).isEqualTo(201);
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
		assertThat(replay.statusCode()).as(() -> describe(replay)).isEqualTo(201);
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).contains("true");
		assertThat(replay.body()).as("replayed bytes").isEqualTo(answer.body());
		assertThat(accounts(opening)).isOne();
	}

	// Several clients retry the same key at once, each until it is not answered 409 any
	// more (a claim of a live retry holds the key, or, in tiered mode, the dead owner's
	// Redis claim until its lease lapses).
	private List<HttpResponse<byte[]>> raceRetries(SampleClient survivor, Opening opening) {
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
			if (ex.getCause() instanceof AssertionError failure) {
				throw new AssertionError(failure.getMessage() + state(), failure);
			}
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
	 * @return the first other answer
	 * @throws AssertionError if every answer of that minute was a 409, with how many
	 * there were and how long the slowest took
	 */
	static HttpResponse<byte[]> retryWhileInProgress(SampleClient client, String path, String key, String body) {
		long start = System.nanoTime();
		long deadline = start + PATIENCE.toNanos();
		int tries = 0;
		long slowest = 0;
		while (true) {
			long sent = System.nanoTime();
			HttpResponse<byte[]> response = client.post("alice", path, body, "Idempotency-Key", key);
			tries++;
			slowest = Math.max(slowest, System.nanoTime() - sent);
			if (response.statusCode() != 409) {
				return response;
			}
			assertThat(SampleClient.text(response)).contains("request-in-progress");
			if (System.nanoTime() > deadline) {
				throw new AssertionError("'" + key + "' still answered 409 after " + tries + " tries in "
						+ TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start) + " ms (the slowest answer took "
						+ TimeUnit.NANOSECONDS.toMillis(slowest) + " ms): " + SampleClient.text(response));
			}
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

	private long victimTransactions() {
		if (this.namespace.database() == TestDatabase.MARIADB) {
			this.victimThreads = openTransactionThreads();
			return this.victimThreads.size();
		}
		return victimTransactions(false);
	}

	private long victimTransactionsThatWroteAccounts() {
		if (this.namespace.database() == TestDatabase.MARIADB) {
			// InnoDB names no table an open transaction wrote to: read the accounts it
			// wrote, uncommitted, instead
			return accountsReadUncommitted(BEFORE_HANDLER) + accountsReadUncommitted(BEFORE_COMMIT);
		}
		return victimTransactions(true);
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
				""").params(this.victimConnectionName, wroteAccounts).query(Long.class).single();
	}

	// MariaDB: the sessions of the test's database that are idle in a transaction that
	// wrote rows (a transactional claim is a row inserted in the request's transaction);
	// only the victim's paused requests hold one
	private List<Long> openTransactionThreads() {
		return this.jdbc.sql("""
				SELECT t.trx_mysql_thread_id FROM information_schema.innodb_trx t
				JOIN information_schema.processlist p ON p.id = t.trx_mysql_thread_id
				WHERE p.db = ? AND p.command = 'Sleep' AND t.trx_rows_modified > 0
				""").param(this.namespace.name()).query(Long.class).list();
	}

	// MariaDB: the accounts of an opening, committed or not (READ UNCOMMITTED)
	private long accountsReadUncommitted(Opening opening) {
		try (Connection connection = this.namespace.dataSource().getConnection()) {
			connection.setTransactionIsolation(Connection.TRANSACTION_READ_UNCOMMITTED);
			try (PreparedStatement statement = connection
				.prepareStatement("SELECT count(*) FROM accounts WHERE owner = 'alice' AND balance = ?")) {
				statement.setLong(1, opening.balance());
				try (ResultSet result = statement.executeQuery()) {
					result.next();
					return result.getLong(1);
				}
			}
		}
		catch (SQLException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private long victimConnections() {
		if (this.namespace.database() == TestDatabase.MARIADB) {
			// its paused transactions' sessions: MariaDB names no client of a session
			// (without the performance schema), so they are known by their thread ids
			if (this.victimThreads.isEmpty()) {
				return 0;
			}
			return this.jdbc
				.sql("SELECT count(*) FROM information_schema.processlist WHERE id IN ("
						+ StringUtils.collectionToCommaDelimitedString(this.victimThreads) + ")")
				.query(Long.class)
				.single() + openTransactionThreads().size();
		}
		return this.jdbc.sql("SELECT count(*) FROM pg_stat_activity WHERE application_name = ?")
			.param(this.victimConnectionName)
			.query(Long.class)
			.single();
	}

	// An answer that failed an assertion, and what the stores held then: the
	// idempotency records, the Redis records of the test's prefix (tiered mode), the
	// database's open transactions, and the survivor's latest output
	private String describe(HttpResponse<byte[]> answer) {
		return SampleClient.text(answer) + state();
	}

	private String state() {
		StringBuilder state = new StringBuilder();
		try {
			// each with its id as the Redis key shows it
			state.append("\nidempotency records: ")
				.append(this.jdbc
					.sql("SELECT id, idem_key, status, created_at, lease_expires_at, expires_at, takeover_at,"
							+ " CURRENT_TIMESTAMP AS now FROM idempotency_record")
					.query((row, number) -> "\n  {"
							+ Base64.getUrlEncoder().withoutPadding().encodeToString(row.getBytes(1)) + "} "
							+ row.getString(2) + " status=" + row.getString(3) + " created=" + row.getString(4)
							+ " lease=" + row.getString(5) + " expires=" + row.getString(6) + " takeover="
							+ row.getString(7) + " now=" + row.getString(8))
					.list());
			if (this.namespace.database() == TestDatabase.MARIADB) {
				state.append("\nopen transactions: ")
					.append(this.jdbc
						.sql("SELECT t.trx_mysql_thread_id, t.trx_state, t.trx_started,"
								+ " t.trx_rows_locked, t.trx_rows_modified, t.trx_query, p.command, p.time, p.info"
								+ " FROM information_schema.innodb_trx t"
								+ " LEFT JOIN information_schema.processlist p ON p.id = t.trx_mysql_thread_id")
						.query()
						.listOfRows());
			}
		}
		catch (RuntimeException ex) {
			state.append("\n(the database could not be read: ").append(ex).append(')');
		}
		if (this.redisPrefix != null) {
			state.append("\nRedis records: ").append(redisRecords(this.redisPrefix));
		}
		String output = this.survivor.output();
		return state.append("\nthe survivor's latest output:\n")
			.append(output, Math.max(0, output.length() - 8000), output.length())
			.toString();
	}

	private static String redisRecords(String prefix) {
		LettuceConnectionFactory factory = TestServers.redis().connectionFactory();
		factory.afterPropertiesSet();
		try (RedisConnection connection = factory.getConnection()) {
			StringBuilder records = new StringBuilder();
			for (byte[] key : TestServers.Redis.keys(connection, prefix)) {
				byte[] value = connection.stringCommands().get(key);
				records.append("\n  ")
					.append(new String(key, StandardCharsets.UTF_8))
					.append(" pttl=")
					.append(connection.keyCommands().pTtl(key))
					.append(' ')
					.append((value != null) ? printable(value) : "(gone)");
			}
			return records.toString();
		}
		catch (RuntimeException ex) {
			return "(Redis could not be read: " + ex + ")";
		}
		finally {
			factory.destroy();
		}
	}

	// the record's header is ASCII; the response bytes after it are cut short
	private static String printable(byte[] value) {
		StringBuilder text = new StringBuilder();
		for (int i = 0; i < Math.min(value.length, 120); i++) {
			char c = (char) (value[i] & 0xff);
			text.append((c >= 0x20 && c < 0x7f) ? c : '.');
		}
		return text.toString();
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
