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
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.spring.VirtualThreads;
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
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The transactional mode on real servers, with two application instances sharing a
 * database, PostgreSQL or MariaDB ({@link #database()}), and Redis, for the tiered store:
 * the claim, the handler's own writes and the stored response commit together or not at
 * all, a duplicate of a request whose transaction is still open is answered at once from
 * any instance, and nothing of a request whose response was not stored persists,
 * whichever way the handler writes. A handler run is a row of the ledger: the tests count
 * them.
 *
 * @author Idempotency contributors
 */
@TestInstance(Lifecycle.PER_CLASS)
abstract class AbstractTransactionalModeIT {

	private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	private final String prefix = "it-tx-" + storeType() + "-" + Long.toHexString(System.nanoTime()) + ":";

	private TransactionalTestDatabase.Opened database;

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

	/**
	 * Return the database the instances share.
	 * @return the database
	 */
	abstract TransactionalTestDatabase database();

	@BeforeAll
	void startInstances() {
		this.database = database().open("it_tx_" + storeType());
		this.dataSource = this.database.dataSource();
		this.jdbc = new JdbcTemplate(this.dataSource);
		database().createTables(this.jdbc);
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
		if (this.database != null) {
			this.database.drop().run();
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
		// on the threads the instance turned on: virtual ones in the compatibility lane
		boolean virtual = VirtualThreads.expected(this.a.getEnvironment());
		assertThat(controller(this.a).ranOnVirtualThread(key))
			.as("the handler ran on a %s thread", VirtualThreads.kind(virtual))
			.isEqualTo(virtual);
		HttpResponse<String> retry = post(this.b, key, "pay-1", "");
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(entries(key)).isOne();
	}

	@Test
	void racingDuplicatesOnTwoInstancesRunTheHandlerOnce() throws Exception {
		String key = newKey();
		// on MariaDB, 64: each loser's claim meets the winner's uncommitted row, or its
		// committed one, in an INSERT IGNORE and a locking read that do not wait
		int racers = (database() == TransactionalTestDatabase.MARIADB) ? 64 : 16;
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
			// Redis loses what it knew: the duplicate can only learn from the database
			assertThat(deleteRedisRecord(key)).isEqualTo(redisRecords());
			long started = System.nanoTime();
			HttpResponse<String> duplicate = post(this.b, key, "held", "");
			Duration waited = Duration.ofNanos(System.nanoTime() - started);
			assertThat(duplicate.statusCode()).isEqualTo(409);
			assertThat(duplicate.headers().firstValue("Retry-After")).isPresent();
			// answered, not queued behind the open transaction: that one ends when the
			// test releases it, after this answer, or at its 30 s time-out
			assertThat(waited).isLessThan(Duration.ofSeconds(15));
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
		// PostgreSQL: a deferred unique constraint, broken; MariaDB, which has no
		// deferred constraints: a backup that blocks the server's commits
		HttpResponse<String> failed = (database() == TransactionalTestDatabase.POSTGRESQL)
				? post(this.a, key, "commit", "break-commit") : postWhileABackupBlocksItsCommit(key, "commit");
		// the real cause: the application's transaction, not the store
		assertThat(failed.statusCode()).isEqualTo(500);
		assertThat(failed.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(failed.body()).contains("transaction-rolled-back")
			.contains("commit failed")
			.contains("nothing of it was processed")
			// the database's own message stays in the log
			.doesNotContain("JDBC")
			.doesNotContain("ERROR:")
			.doesNotContain("store-unavailable")
			.doesNotContain("\"entries\"");
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

	@Test
	void businessRejectionOfATransactionalServiceIsTheHandlersAnswerAndTheRetryRunsAgain() throws Exception {
		String key = newKey();
		HttpResponse<String> rejected = post(this.a, key, "taken", "reject");
		// the handler's own 422, not a 503: its service marked the
		// transaction rollback-only
		assertThat(rejected.statusCode()).isEqualTo(422);
		assertThat(rejected.body()).isEqualTo("{\"error\":\"rejected\"}");
		assertThat(entries(key)).isZero();
		assertThat(recordStatus(key)).isNull();
		// nothing of it persisted, so nothing is stored either: the retry
		// runs the handler at once, on either instance, without a lease
		HttpResponse<String> retry = post(this.b, key, "taken", "reject");
		assertThat(retry.statusCode()).isEqualTo(422);
		assertThat(controller(this.a).runs(key) + controller(this.b).runs(key)).isEqualTo(2);
		HttpResponse<String> accepted = post(this.a, key, "taken", "");
		assertThat(accepted.statusCode()).isEqualTo(201);
		assertThat(entries(key)).isOne();
		assertThat(recordStatus(key)).isEqualTo("C");
	}

	@Test
	void successOnARollbackOnlyTransactionIsNeverSentAndTheProblemNamesTheRollback() throws Exception {
		String key = newKey();
		HttpResponse<String> swallowed = post(this.a, key, "swallowed", "swallow");
		assertThat(swallowed.statusCode()).isEqualTo(500);
		assertThat(swallowed.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(swallowed.body()).contains("transaction-rolled-back")
			.contains("rollback-only")
			.doesNotContain("store-unavailable")
			.doesNotContain("\"entries\"");
		assertRolledBackAndRetryRuns(key, "swallowed");
	}

	@Test
	void failedStatementOfTheHandlerFreesTheKeyAtOnceInEveryTier() throws Exception {
		String key = newKey();
		// PostgreSQL aborted the transaction: the release cannot run in it
		assertThat(post(this.a, key, "dup", "break-statement").statusCode()).isEqualTo(500);
		assertRolledBackAndRetryRuns(key, "dup");
	}

	@Test
	void failedStatementThatTheHandlerAnswersItselfIsItsAnswerAndTheRetryRunsAgain() throws Exception {
		String key = newKey();
		HttpResponse<String> conflict = post(this.a, key, "dup", "break-statement-caught");
		assertThat(conflict.statusCode()).isEqualTo(409);
		assertThat(conflict.body()).isEqualTo("{\"error\":\"duplicate\"}");
		if (database() == TransactionalTestDatabase.MARIADB) {
			// InnoDB rolled back the failed statement alone, and the transaction went
			// on: the handler's 409 was stored and committed with its ledger entry, as
			// any 4xx of a transaction that can commit, and retries replay it
			assertThat(entries(key)).isOne();
			assertThat(recordStatus(key)).isEqualTo("C");
			HttpResponse<String> replay = post(this.b, key, "dup", "");
			assertThat(replay.statusCode()).isEqualTo(409);
			assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
			assertThat(replay.body()).isEqualTo(conflict.body());
			assertThat(entries(key)).isOne();
			assertThat(controller(this.a).runs(key) + controller(this.b).runs(key)).isOne();
			return;
		}
		assertRolledBackAndRetryRuns(key, "dup");
	}

	@Test
	void idempotentMethodInsideTheRequestCommitsWithItAndRunsOnce() throws Exception {
		String key = newKey();
		String nestedKey = newKey();
		// slower than a third of the method's lock timeout: its claim is
		// the transaction's, which no heartbeat on another connection sees
		HttpResponse<String> first = post(this.a, key, "nested",
				Map.of("X-Nested", nestedKey, "X-Nested-Millis", "700"));
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(nestedEntries(nestedKey)).isOne();
		assertThat(awaitRecordStatus(nestedKey, "C")).isEqualTo("C");
		// called again, on the other instance and outside any request: replayed
		assertThat(nested(this.b).apply(nestedKey, 0)).isEqualTo("applied " + nestedKey);
		assertThat(nested(this.a).runs(nestedKey) + nested(this.b).runs(nestedKey)).isOne();
		assertThat(nestedEntries(nestedKey)).isOne();
		for (ConfigurableApplicationContext instance : List.of(this.a, this.b)) {
			assertThat(instance.getBean(MeterRegistry.class)
				.find("idempotency.fencing.rejections")
				.tag("policy", "nested")
				.counters())
				.allSatisfy((counter) -> assertThat(counter.count()).as(counter.getId().toString()).isZero());
		}
	}

	@Test
	void idempotentMethodCalledTwiceWithOneKeyInOneRequestRunsOnceAndTheSecondCallGetsTheFirstResult()
			throws Exception {
		String key = newKey();
		String nestedKey = newKey();
		HttpResponse<String> first = post(this.a, key, "twice", Map.of("X-Nested", nestedKey, "X-Nested-Calls", "2"));
		assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
		assertThat(first.body()).contains("\"nested\":[\"applied " + nestedKey + "\",\"applied " + nestedKey + "\"]");
		assertThat(nested(this.a).runs(nestedKey)).isOne();
		assertThat(nestedEntries(nestedKey)).isOne();
		assertThat(recordStatus(nestedKey)).isEqualTo("C");
		assertThat(nested(this.b).apply(nestedKey, 0)).isEqualTo("applied " + nestedKey);
		assertThat(nested(this.a).runs(nestedKey) + nested(this.b).runs(nestedKey)).isOne();
		assertThat(nestedEntries(nestedKey)).isOne();
	}

	@Test
	void idempotentMethodWhoseSavepointRolledBackRunsAgainInTheSameRequestAndNothingOfItIsReplayed() throws Exception {
		String key = newKey();
		String nestedKey = newKey();
		HttpResponse<String> first = post(this.a, key, "savepoint",
				Map.of("X-Nested", nestedKey, "X-Nested-Calls", "2", "X-Nested-Savepoint", "rollback"));
		assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
		// the first call's entry and record rolled back with its savepoint: the second
		// call ran again, and its entry and record committed with the request
		assertThat(nested(this.a).runs(nestedKey)).isEqualTo(2);
		assertThat(nestedEntries(nestedKey)).isOne();
		assertThat(awaitRecordStatus(nestedKey, "C")).isEqualTo("C");
		assertThat(nested(this.b).apply(nestedKey, 0)).isEqualTo("applied " + nestedKey);
		assertThat(nested(this.a).runs(nestedKey) + nested(this.b).runs(nestedKey)).isEqualTo(2);
		assertThat(nestedEntries(nestedKey)).isOne();
	}

	@Test
	void idempotentMethodWhoseSavepointRolledBackAloneIsNotReplayedAfterTheRequestCommitted() throws Exception {
		String key = newKey();
		String nestedKey = newKey();
		HttpResponse<String> first = post(this.a, key, "savepoint",
				Map.of("X-Nested", nestedKey, "X-Nested-Savepoint", "rollback"));
		assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
		assertThat(entries(key)).isOne();
		assertThat(nestedEntries(nestedKey)).isZero();
		assertThat(recordStatus(nestedKey)).isNull();
		// nothing of the call persisted, in either tier: a later call runs it, and the
		// one after that replays it
		assertThat(nested(this.b).apply(nestedKey, 0)).isEqualTo("applied " + nestedKey);
		assertThat(nested(this.a).apply(nestedKey, 0)).isEqualTo("applied " + nestedKey);
		assertThat(nested(this.a).runs(nestedKey) + nested(this.b).runs(nestedKey)).isEqualTo(2);
		assertThat(recordStatus(nestedKey)).isEqualTo("C");
	}

	@Test
	void idempotentMethodWhoseSavepointWasReleasedCommitsWithTheRequestAndRunsOnce() throws Exception {
		String key = newKey();
		String nestedKey = newKey();
		HttpResponse<String> first = post(this.a, key, "savepoint",
				Map.of("X-Nested", nestedKey, "X-Nested-Calls", "2", "X-Nested-Savepoint", "release"));
		assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
		assertThat(nested(this.a).runs(nestedKey)).isOne();
		assertThat(nestedEntries(nestedKey)).isOne();
		assertThat(awaitRecordStatus(nestedKey, "C")).isEqualTo("C");
		assertThat(nested(this.b).apply(nestedKey, 0)).isEqualTo("applied " + nestedKey);
		assertThat(nested(this.a).runs(nestedKey) + nested(this.b).runs(nestedKey)).isOne();
	}

	@Test
	void idempotentMethodOfARolledBackRequestRollsBackWithItAndRunsAgain() throws Exception {
		String key = newKey();
		String nestedKey = newKey();
		assertThat(post(this.a, key, "nested", Map.of("X-Nested", nestedKey, "X-Mode", "fail")).statusCode())
			.isEqualTo(500);
		assertThat(nestedEntries(nestedKey)).isZero();
		assertThat(recordStatus(nestedKey)).isNull();
		assertThat(post(this.b, key, "nested", Map.of("X-Nested", nestedKey)).statusCode()).isEqualTo(201);
		assertThat(nestedEntries(nestedKey)).isOne();
		assertThat(awaitRecordStatus(nestedKey, "C")).isEqualTo("C");
	}

	@Test
	void idempotentMethodCalledFromAnAfterCommitListenerRunsOnceOnItsOwnConnections() throws Exception {
		String key = newKey();
		String listenerKey = newKey();
		HttpResponse<String> first = post(this.a, key, "event", Map.of("X-After-Commit", listenerKey));
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(awaitRecordStatus(listenerKey, "C")).isEqualTo("C");
		assertThat(nestedEntries(listenerKey)).isOne();
		assertThat(nested(this.b).apply(listenerKey, 0)).isEqualTo("applied " + listenerKey);
		assertThat(nested(this.a).runs(listenerKey) + nested(this.b).runs(listenerKey)).isOne();
		assertThat(nestedEntries(listenerKey)).isOne();
	}

	@Test
	void duplicateOfARequestThatTookAnExpiredKeyOverIsAnsweredWithoutWaitingForIt() throws Exception {
		String key = newKey();
		assertThat(post(this.a, key, "expiring", "").statusCode()).isEqualTo(201);
		// the record expires, and Redis forgets it: the next request takes the row over
		this.jdbc.update(database().expireRecord(), key);
		assertThat(deleteRedisRecord(key)).isEqualTo(redisRecords());
		controller(this.a).hold(key);
		CompletableFuture<HttpResponse<String>> first = CompletableFuture.supplyAsync(() -> {
			try {
				return post(this.a, key, "expiring", "");
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		});
		try {
			assertThat(controller(this.a).awaitEntered(key)).isTrue();
			assertThat(deleteRedisRecord(key)).isEqualTo(redisRecords());
			long started = System.nanoTime();
			HttpResponse<String> duplicate = post(this.b, key, "expiring", "");
			Duration waited = Duration.ofNanos(System.nanoTime() - started);
			assertThat(duplicate.statusCode()).isEqualTo(409);
			// the first request stays held until the test lets it go: a duplicate that
			// queued behind its row lock would not have been answered yet
			assertThat(waited).isLessThan(Duration.ofSeconds(4));
			assertThat(first).isNotDone();
		}
		finally {
			controller(this.a).release(key);
		}
		assertThat(first.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
		assertThat(entries(key)).isEqualTo(2);
		assertThat(recordStatus(key)).isEqualTo("C");
	}

	@Test
	void handlerHungPastTheLockTimeoutCannotHoldItsKeyAndItsWorkNeverCommits() throws Exception {
		String key = newKey();
		controller(this.a).hold(key);
		CompletableFuture<HttpResponse<String>> hung = CompletableFuture.supplyAsync(() -> {
			try {
				return post(this.a, "/ledger/quick", key, "hung", Map.of());
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		});
		HttpResponse<String> retry;
		try {
			assertThat(controller(this.a).awaitEntered(key)).isTrue();
			// on MariaDB, the session of the hung request's transaction, which the server
			// is to close
			List<Long> sessions = (database() == TransactionalTestDatabase.MARIADB) ? sessionsInTransaction()
					: List.of();
			// the request's time-out is 5 s, the floor (the lock timeout is 1 s): the
			// database then ends the idle transaction, which frees the key there, and
			// the Redis claim's lease ran out long before
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
			do {
				Thread.sleep(250);
				retry = post(this.b, "/ledger/quick", key, "hung", Map.of());
			}
			while (retry.statusCode() == 409 && System.nanoTime() < deadline);
			assertThat(retry.statusCode()).as(retry.body()).isEqualTo(201);
			assertThat(hung).isNotDone();
			if (database() == TransactionalTestDatabase.MARIADB) {
				// MariaDB closed it (idle_transaction_timeout), while the handler still
				// hangs
				assertThat(sessions).as("sessions in a transaction").hasSize(1);
				assertThat(sessionExists(sessions.get(0))).as("the hung request's session").isFalse();
			}
		}
		finally {
			controller(this.a).release(key);
		}
		HttpResponse<String> late = hung.get(30, TimeUnit.SECONDS);
		// its work was rolled back with its transaction: never a success
		assertThat(late.statusCode()).as(late.body()).isIn(500, 503);
		assertThat(late.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(entries(key)).isOne();
		assertThat(recordStatus(key)).isEqualTo("C");
		HttpResponse<String> replay = post(this.a, "/ledger/quick", key, "hung", Map.of());
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(replay.body()).isEqualTo(retry.body());
		assertThat(entries(key)).isOne();
	}

	@Test
	void handlerBusyInTheDatabasePastItsTimeOutIsRolledBackAndTheProblemSaysSo() throws Exception {
		String key = newKey();
		// the request's time-out is 5 s, the floor (the lock timeout is 1 s); the
		// handler's statement has no query time-out and keeps the transaction busy, so
		// neither the driver nor PostgreSQL's idle time-out ends it: the completion,
		// after the deadline, is refused, and the transaction is rolled back
		HttpResponse<String> late = post(this.a, "/ledger/quick", key, "busy", Map.of("X-Mode", "busy"));
		assertThat(late.statusCode()).as(late.body()).isEqualTo(500);
		assertThat(late.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(late.body()).contains("transaction-rolled-back")
			.contains(
					"ran past its time-out, 5 s, the floor of a request's time-out (the policy's lock timeout is 1000 ms)");
		assertThat(entries(key)).isZero();
		assertThat(recordStatus(key)).isNull();
		// the key is free at once in every tier: the retry runs the handler, once
		HttpResponse<String> retry = post(this.b, "/ledger/quick", key, "busy", Map.of());
		assertThat(retry.statusCode()).as(retry.body()).isEqualTo(201);
		assertThat(entries(key)).isOne();
		assertThat(recordStatus(key)).isEqualTo("C");
		assertThat(controller(this.a).runs(key) + controller(this.b).runs(key)).isEqualTo(2);
	}

	@Test
	void completionThatTheDatabaseRefusesIsTriedOnceAndTheProblemNamesTheRefusal() throws Exception {
		String key = newKey();
		// a rule of the database that the stored response breaks (here a trigger that
		// counts and refuses responses with a marker; in the field a trigger of the
		// application's, a full disk, a value the column cannot take): the database
		// refuses the completion's UPDATE; PostgreSQL aborts the request's transaction,
		// in which no second attempt can succeed
		database().refuseResponsesWithTheMarker(this.jdbc);
		HttpResponse<String> refused;
		long attempts;
		try {
			refused = post(this.a, key, "refused-by-the-database", "");
			attempts = database().refusedCompletions(this.jdbc);
		}
		finally {
			database().stopRefusing(this.jdbc);
		}
		assertThat(refused.statusCode()).as(refused.body()).isEqualTo(500);
		assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		// the database's own reason, not the "current transaction is aborted" that a
		// second attempt in the aborted transaction gets
		assertThat(refused.body()).contains("transaction-rolled-back")
			.contains("could not be stored")
			.contains("this response may not be stored")
			.doesNotContain("current transaction is aborted")
			.doesNotContain("\"entries\"");
		// one attempt: the engine does not try a completion again in a transaction
		// that can only roll back (nor pause 25 and 100 ms between the attempts)
		assertThat(attempts).as("attempts of the completion").isOne();
		// nothing persisted, the key is free in every tier: the retry runs the handler
		assertRolledBackAndRetryRuns(key, "refused-by-the-database");
	}

	private ConfigurableApplicationContext start(String instance) {
		Map<String, Object> properties = TransactionalTestApplication.properties(storeType(), this.prefix);
		// a request held open by a test outlasts the test's own steps even on a busy
		// machine: its transaction's time-out is 30 s (the short one is /ledger/quick's)
		properties.put("idempotency.policies.ledger.lock-timeout", "30s");
		LettuceConnectionFactory redis = this.redis;
		// as a pool configured with auto-commit=false hands out connections (JPA
		// applications often do): a statement run outside a transaction is lost unless
		// it is committed
		DataSource dataSource = new DelegatingDataSource(this.dataSource) {

			@Override
			public Connection getConnection() throws SQLException {
				Connection connection = super.getConnection();
				connection.setAutoCommit(false);
				return connection;
			}

		};
		return new SpringApplicationBuilder(TransactionalTestApplication.class).properties(properties)
			.initializers((context) -> {
				GenericApplicationContext generic = (GenericApplicationContext) context;
				generic.registerBean("redisConnectionFactory", LettuceConnectionFactory.class, () -> redis);
				generic.registerBean("dataSource", DataSource.class, () -> dataSource,
						(definition) -> definition.setDestroyMethodName(""));
			})
			.run("--instance=" + instance);
	}

	// MariaDB: a backup holds every commit of the server (BACKUP STAGE BLOCK_COMMIT, as
	// mariabackup does) when the request is about to commit, and the request's session
	// waits for it no longer than its lock_wait_timeout, 0 here (1 year by default):
	// MariaDB refuses the COMMIT (error 1205) and rolls the transaction back. The backup
	// ends as soon as the transaction has, so that the server's other commits wait only
	// that long.
	private HttpResponse<String> postWhileABackupBlocksItsCommit(String key, String body) throws Exception {
		JdbcTemplate application = this.a.getBean(JdbcTemplate.class);
		try (Connection backup = this.dataSource.getConnection(); Statement stages = backup.createStatement()) {
			AtomicBoolean blocking = new AtomicBoolean();
			Runnable endBackup = () -> {
				if (blocking.compareAndSet(true, false)) {
					try {
						stages.execute("BACKUP STAGE END");
					}
					catch (SQLException ex) {
						throw new IllegalStateException(ex);
					}
				}
			};
			controller(this.a).beforeCommit(key, () -> {
				application
					.execute("SET @it_lock_wait_before = @@session.lock_wait_timeout, @@session.lock_wait_timeout = 0");
				TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

					@Override
					public void afterCompletion(int status) {
						endBackup.run();
						application.execute("SET @@session.lock_wait_timeout = @it_lock_wait_before");
					}

				});
				try {
					stages.execute("BACKUP STAGE START");
					blocking.set(true);
					stages.execute("BACKUP STAGE BLOCK_COMMIT");
				}
				catch (SQLException ex) {
					throw new IllegalStateException(ex);
				}
			});
			try {
				return post(this.a, key, body, "");
			}
			finally {
				endBackup.run();
			}
		}
	}

	private HttpResponse<String> post(ConfigurableApplicationContext instance, String key, String body, String mode)
			throws IOException, InterruptedException {
		return post(instance, key, body, mode.isEmpty() ? Map.of() : Map.of("X-Mode", mode));
	}

	private HttpResponse<String> post(ConfigurableApplicationContext instance, String key, String body,
			Map<String, String> headers) throws IOException, InterruptedException {
		return post(instance, "/ledger", key, body, headers);
	}

	HttpResponse<String> post(ConfigurableApplicationContext instance, String path, String key, String body,
			Map<String, String> headers) throws IOException, InterruptedException {
		int port = ((WebServerApplicationContext) instance).getWebServer().getPort();
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.header("Content-Type", "text/plain")
			.header("Idempotency-Key", key)
			.POST(BodyPublishers.ofString(body, StandardCharsets.UTF_8));
		headers.forEach(request::header);
		return this.client.send(request.build(), BodyHandlers.ofString(StandardCharsets.UTF_8));
	}

	static LedgerController controller(ConfigurableApplicationContext instance) {
		return instance.getBean(LedgerController.class);
	}

	long entries(String key) {
		return new LedgerRows(this.jdbc, database()).count("ledger_entry", key);
	}

	// nothing of the request persisted, and its key is free at once: the
	// retry, on the other instance, runs the handler
	private void assertRolledBackAndRetryRuns(String key, String body) throws IOException, InterruptedException {
		assertThat(entries(key)).isZero();
		assertThat(recordStatus(key)).isNull();
		HttpResponse<String> retry = post(this.b, key, body, "");
		assertThat(retry.statusCode()).as("the retry, at once: %s", retry.body()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(entries(key)).isOne();
	}

	private long nestedEntries(String key) {
		Long count = this.jdbc.queryForObject("SELECT count(*) FROM nested_entry WHERE idem_key = ?", Long.class, key);
		return (count != null) ? count : 0;
	}

	// the method's result is stored after the request's commit, which
	// the client may see first
	private @Nullable String awaitRecordStatus(String key, String expected) throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		String status = recordStatus(key);
		while (!expected.equals(status) && System.nanoTime() < deadline) {
			Thread.sleep(20);
			status = recordStatus(key);
		}
		return status;
	}

	private static TransactionalTestApplication.NestedWork nested(ConfigurableApplicationContext instance) {
		return instance.getBean(TransactionalTestApplication.NestedWork.class);
	}

	private long audits(String key) {
		return new LedgerRows(this.jdbc, database()).count("audit_entry", key);
	}

	@Nullable String recordStatus(String key) {
		return new LedgerRows(this.jdbc, database()).recordStatus(key);
	}

	/**
	 * Return the instance that a test's first request goes to.
	 * @return the instance
	 */
	ConfigurableApplicationContext instanceA() {
		return this.a;
	}

	/**
	 * Return the other instance.
	 * @return the instance
	 */
	ConfigurableApplicationContext instanceB() {
		return this.b;
	}

	/**
	 * Return the template on the pool that the instances share.
	 * @return the template
	 */
	JdbcTemplate jdbc() {
		return this.jdbc;
	}

	/**
	 * Return the pool that the instances share, which the test's own template uses too.
	 * @return the pool
	 */
	HikariDataSource dataSource() {
		return this.dataSource;
	}

	// MariaDB: the sessions of this test's database with a transaction open
	List<Long> sessionsInTransaction() {
		return this.jdbc.queryForList("SELECT p.ID FROM information_schema.INNODB_TRX t"
				+ " JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id WHERE p.DB = DATABASE()",
				Long.class);
	}

	// MariaDB: whether a session is still connected
	boolean sessionExists(long session) {
		Long sessions = this.jdbc.queryForObject("SELECT count(*) FROM information_schema.PROCESSLIST WHERE ID = ?",
				Long.class, session);
		return sessions != null && sessions > 0;
	}

	// the key's own Redis record, deleted by its name: a scan of the keyspace for the
	// prefix, in the window in which a request is held, would take longer than that
	// request's time-out on a server that holds millions of other keys
	private long deleteRedisRecord(String key) {
		try (var connection = this.redis.getConnection()) {
			Long deleted = connection.keyCommands()
				.del(TestServers.Redis.recordKey(this.prefix, IdempotencyKey.global(key).digest()));
			return (deleted != null) ? deleted : 0;
		}
	}

	// the records a key has in Redis: one in tiered mode, none with the database alone
	private long redisRecords() {
		return "tiered".equals(storeType()) ? 1 : 0;
	}

	private void deleteRedisKeys() {
		try (var connection = this.redis.getConnection()) {
			TestServers.Redis.deleteKeys(connection, this.prefix);
		}
	}

	static String newKey() {
		return UUID.randomUUID().toString();
	}

}
