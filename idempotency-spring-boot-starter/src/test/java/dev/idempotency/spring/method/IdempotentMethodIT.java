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

package dev.idempotency.spring.method;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.spring.method.MethodTestApplication.ChargeCommand;
import dev.idempotency.spring.method.MethodTestApplication.Charges;
import dev.idempotency.spring.method.MethodTestApplication.Checkout;
import dev.idempotency.spring.method.MethodTestApplication.Receipt;
import dev.idempotency.test.servers.TestServers;
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
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Idempotent methods of a Spring bean on real servers: two application instances share
 * the tiered store (Redis in front of PostgreSQL) and a payments service whose methods
 * are idempotent by a key in their arguments. Every run of a method writes a row: the
 * tests count executions in the database.
 *
 * @author Idempotency contributors
 */
@TestInstance(Lifecycle.PER_CLASS)
class IdempotentMethodIT {

	private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	private final String schema = "it_method_" + Long.toHexString(System.nanoTime());

	private final String prefix = "it-method-" + Long.toHexString(System.nanoTime()) + ":";

	private HikariDataSource dataSource;

	private LettuceConnectionFactory redis;

	private JdbcTemplate jdbc;

	private ConfigurableApplicationContext a;

	private ConfigurableApplicationContext b;

	@BeforeAll
	void startInstances() {
		this.dataSource = TestServers.postgres().dataSource(this.schema);
		this.jdbc = new JdbcTemplate(this.dataSource);
		for (String statement : MethodTestApplication.SCHEMA_DDL.split(";")) {
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
			try (var connection = this.redis.getConnection()) {
				TestServers.Redis.deleteKeys(connection, this.prefix);
			}
		}
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
	void aRetryOnTheOtherInstanceGetsAnEqualResultWithoutRunning() throws Exception {
		String key = newKey();
		Receipt first = charges(this.a).charge(new ChargeCommand(key, 1250, ""));
		assertThat(first.requestId()).isEqualTo(key);
		Receipt retry = charges(this.b).charge(new ChargeCommand(key, 1250, ""));
		assertThat(retry).isEqualTo(first);
		assertThat(calls("charge", key)).isOne();
		assertThat(charged(key)).isOne();
	}

	@Test
	void racingCallsOnTwoInstancesRunOnceAndTheOthersWaitForItsResult() throws Exception {
		String key = newKey();
		int racers = 16;
		List<Receipt> receipts = race(racers,
				(i) -> charges((i % 2 == 0) ? this.a : this.b).chargePatiently(new ChargeCommand(key, 990, "slow")));
		assertThat(receipts).hasSize(racers).containsOnly(receipts.get(0));
		assertThat(calls("charge", key)).isOne();
		assertThat(charged(key)).isOne();
	}

	@Test
	void racingCallsWithoutWaitRunOnceAndTheOthersAreToldItIsInProgress() throws Exception {
		String key = newKey();
		int racers = 16;
		List<Object> outcomes = race(racers, (i) -> {
			try {
				return charges((i % 2 == 0) ? this.a : this.b).charge(new ChargeCommand(key, 700, "slow"));
			}
			catch (IdempotentCallInProgressException ex) {
				assertThat(ex.getRetryAfter()).isPositive();
				return ex;
			}
		});
		assertThat(outcomes).hasSize(racers);
		assertThat(outcomes).filteredOn(Receipt.class::isInstance)
			.isNotEmpty()
			.containsOnly(outcomes.stream().filter(Receipt.class::isInstance).findFirst().orElseThrow());
		assertThat(calls("charge", key)).isOne();
		assertThat(charged(key)).isOne();
	}

	@Test
	void aCallWhileTheFirstRunsIsRefusedThenGetsTheResult() throws Exception {
		String key = newKey();
		CountDownLatch gate = new CountDownLatch(1);
		CountDownLatch entered = charges(this.a).hold(key, gate);
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			Future<Receipt> first = executor.submit(() -> charges(this.a).charge(new ChargeCommand(key, 500, "")));
			assertThat(entered.await(30, TimeUnit.SECONDS)).isTrue();
			assertThatExceptionOfType(IdempotentCallInProgressException.class)
				.isThrownBy(() -> charges(this.b).charge(new ChargeCommand(key, 500, "")))
				.satisfies((ex) -> assertThat(ex.getKey().key()).isEqualTo(key));
			gate.countDown();
			Receipt receipt = first.get(30, TimeUnit.SECONDS);
			assertThat(charges(this.b).charge(new ChargeCommand(key, 500, ""))).isEqualTo(receipt);
		}
		finally {
			gate.countDown();
			executor.shutdownNow();
		}
		assertThat(calls("charge", key)).isOne();
	}

	@Test
	void theSameKeyWithOtherArgumentsIsRefusedWithoutRunning() throws Exception {
		String key = newKey();
		charges(this.a).charge(new ChargeCommand(key, 100, ""));
		assertThatExceptionOfType(IdempotencyKeyReusedException.class)
			.isThrownBy(() -> charges(this.b).charge(new ChargeCommand(key, 200, "")))
			.withMessageContaining(key);
		assertThat(calls("charge", key)).isOne();
	}

	@Test
	void aDeterministicExceptionIsStoredAndThrownAgainWithoutRunning() throws Exception {
		String key = newKey();
		assertThatExceptionOfType(DeclinedException.class)
			.isThrownBy(() -> charges(this.a).charge(new ChargeCommand(key, 0, "")))
			.withMessage("declined: amount 0 is not positive");
		assertThatExceptionOfType(DeclinedException.class)
			.isThrownBy(() -> charges(this.b).charge(new ChargeCommand(key, 0, "")))
			.withMessage("declined: amount 0 is not positive");
		assertThat(calls("charge", key)).isOne();
		assertThat(charged(key)).isZero();
	}

	@Test
	void anyOtherExceptionReleasesTheKeySoThatARetryRuns() throws Exception {
		String key = newKey();
		charges(this.a).failOnce(key);
		assertThatExceptionOfType(IllegalStateException.class)
			.isThrownBy(() -> charges(this.a).charge(new ChargeCommand(key, 300, "")))
			.withMessage("the gateway timed out");
		Receipt receipt = charges(this.b).charge(new ChargeCommand(key, 300, ""));
		assertThat(receipt.amount()).isEqualTo(300);
		assertThat(charges(this.a).charge(new ChargeCommand(key, 300, ""))).isEqualTo(receipt);
		assertThat(calls("charge", key)).isEqualTo(2);
		assertThat(charged(key)).isOne();
	}

	@Test
	void aMissingKeyIsRefusedWithoutRunning() {
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class)
			.isThrownBy(() -> charges(this.a).charge(new ChargeCommand(null, 100, "")))
			.withMessage("The idempotency key of operation '" + MethodTestApplication.Charges.class.getName()
					+ ".charge-" + MethodTestApplication.ChargeCommand.class.getName() + "' is missing");
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class)
			.isThrownBy(() -> charges(this.a).charge(new ChargeCommand("has space", 100, "")))
			.withMessageContaining("must be 1 to 255 characters of visible ASCII");
		assertThat(this.jdbc.queryForObject(
				"SELECT count(*) FROM method_call WHERE request_id IS NULL" + " OR request_id = 'has space'",
				Long.class))
			.isZero();
	}

	@Test
	void aGenericResultIsReadBackAsDeclaredAndTheFingerprintCoversTheNamedArguments() throws Exception {
		String key = newKey();
		List<Receipt> first = charges(this.a).chargeAll(key, List.of(100L, 200L), "first try");
		List<Receipt> retry = charges(this.b).chargeAll(key, List.of(100L, 200L), "comment changed");
		assertThat(retry).isEqualTo(first)
			.hasSize(2)
			.allSatisfy((receipt) -> assertThat(receipt).isInstanceOf(Receipt.class));
		assertThat(calls("chargeAll", key + "-0")).isOne();
		assertThatExceptionOfType(IdempotencyKeyReusedException.class)
			.isThrownBy(() -> charges(this.b).chargeAll(key, List.of(100L, 300L), "first try"));
	}

	@Test
	void theOutcomeOfACallInARolledBackTransactionIsNotReplayed() throws Exception {
		String key = newKey();
		TransactionTemplate transaction = new TransactionTemplate(this.a.getBean(PlatformTransactionManager.class));
		Receipt rolledBack = transaction.execute((status) -> {
			Receipt receipt = chargeUnchecked(charges(this.a), new ChargeCommand(key, 800, ""));
			status.setRollbackOnly();
			return receipt;
		});
		assertThat(charged(key)).isZero();
		// the key was released with the rollback: the retry runs
		Receipt retry = charges(this.b).charge(new ChargeCommand(key, 800, ""));
		assertThat(retry.chargeId()).isNotEqualTo(rolledBack.chargeId());
		assertThat(calls("charge", key)).isEqualTo(2);
		assertThat(charges(this.a).charge(new ChargeCommand(key, 800, ""))).isEqualTo(retry);
		assertThat(calls("charge", key)).isEqualTo(2);
		assertThat(charged(key)).isOne();
	}

	@Test
	void aTransactionalMethodStoresItsOutcomeAfterItsOwnCommit() throws Exception {
		String key = newKey();
		Receipt first = charges(this.a).chargeInTransaction(new ChargeCommand(key, 650, ""));
		assertThat(charges(this.b).chargeInTransaction(new ChargeCommand(key, 650, ""))).isEqualTo(first);
		assertThat(calls("chargeInTransaction", key)).isOne();
		assertThat(charged(key)).isOne();
	}

	@Test
	void theOutcomeOfACallInACommittedTransactionIsStoredAfterTheCommit() throws Exception {
		String key = newKey();
		TransactionTemplate transaction = new TransactionTemplate(this.a.getBean(PlatformTransactionManager.class));
		CountDownLatch returned = new CountDownLatch(1);
		CountDownLatch commit = new CountDownLatch(1);
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			Future<Receipt> first = executor.submit(() -> transaction.execute((status) -> {
				Receipt receipt = chargeUnchecked(charges(this.a), new ChargeCommand(key, 450, ""));
				returned.countDown();
				awaitUnchecked(commit);
				return receipt;
			}));
			assertThat(returned.await(30, TimeUnit.SECONDS)).isTrue();
			// returned, not committed: the key is still held
			assertThatExceptionOfType(IdempotentCallInProgressException.class)
				.isThrownBy(() -> charges(this.b).charge(new ChargeCommand(key, 450, "")));
			commit.countDown();
			Receipt receipt = first.get(30, TimeUnit.SECONDS);
			assertThat(charges(this.b).charge(new ChargeCommand(key, 450, ""))).isEqualTo(receipt);
		}
		finally {
			commit.countDown();
			executor.shutdownNow();
		}
		assertThat(calls("charge", key)).isOne();
		assertThat(charged(key)).isOne();
	}

	@Test
	void resultTooLargeToStoreIsNeverRunAgain() {
		String key = newKey();
		assertThat(charges(this.a).statement(key, 1000)).hasSize(1000);
		// the call ran: a retry is told its result was not stored, on either instance
		for (ConfigurableApplicationContext instance : List.of(this.a, this.b)) {
			assertThatExceptionOfType(IdempotentResultNotStoredException.class)
				.isThrownBy(() -> charges(instance).statement(key, 1000))
				.withMessageContaining(key)
				.satisfies((ex) -> assertThat(ex.getReason()).isEqualTo("too-large"));
		}
		assertThat(calls("statement", key)).isOne();
		// the record keeps the key, completed: nothing for a takeover
		assertThat(recordStatus(key)).isEqualTo("C");
		String small = newKey();
		assertThat(charges(this.a).statement(small, 10)).isEqualTo(charges(this.b).statement(small, 10));
		assertThat(calls("statement", small)).isOne();
	}

	@Test
	void resultThatCannotBeWrittenIsNeverRunAgain() {
		String key = newKey();
		assertThat(charges(this.a).loop(key)).isNotNull();
		assertThatExceptionOfType(IdempotentResultNotStoredException.class).isThrownBy(() -> charges(this.b).loop(key))
			.satisfies((ex) -> assertThat(ex.getReason()).isEqualTo("not-writable"));
		assertThatExceptionOfType(IdempotentResultNotStoredException.class).isThrownBy(() -> charges(this.a).loop(key));
		assertThat(calls("loop", key)).isOne();
		assertThat(recordStatus(key)).isEqualTo("C");
	}

	@Test
	void resultTooLargeToStoreInATransactionIsNeverRunAgain() {
		String key = newKey();
		TransactionTemplate transaction = new TransactionTemplate(this.a.getBean(PlatformTransactionManager.class));
		String first = transaction.execute((status) -> charges(this.a).statement(key, 1000));
		assertThat(first).hasSize(1000);
		assertThatExceptionOfType(IdempotentResultNotStoredException.class)
			.isThrownBy(() -> charges(this.b).statement(key, 1000));
		assertThat(calls("statement", key)).isOne();
	}

	@Test
	void theSameKeyTwiceInOneTransactionRunsOnceAndTheSecondCallGetsTheFirstResult() {
		String key = newKey();
		TransactionTemplate transaction = new TransactionTemplate(this.a.getBean(PlatformTransactionManager.class));
		List<Receipt> receipts = transaction.execute((status) -> {
			Receipt first = chargeUnchecked(charges(this.a), new ChargeCommand(key, 300, ""));
			Receipt second = chargeUnchecked(charges(this.a), new ChargeCommand(key, 300, ""));
			// the same key with other arguments is refused in the transaction too
			assertThatExceptionOfType(IdempotencyKeyReusedException.class)
				.isThrownBy(() -> charges(this.a).charge(new ChargeCommand(key, 301, "")));
			return List.of(first, second);
		});
		assertThat(receipts).hasSize(2);
		assertThat(receipts.get(1)).isEqualTo(receipts.get(0));
		assertThat(calls("charge", key)).isOne();
		assertThat(charged(key)).isOne();
		// committed: the other instance replays it
		assertThat(chargeUnchecked(charges(this.b), new ChargeCommand(key, 300, ""))).isEqualTo(receipts.get(0));
		assertThat(calls("charge", key)).isOne();
	}

	@Test
	void aCallInASavepointThatRolledBackIsNotReplayedWhenTheOuterTransactionCommits() throws Exception {
		String key = newKey();
		Receipt rolledBack = transaction(this.a).execute((outer) -> {
			Receipt receipt = savepoint(this.a).execute((inner) -> {
				Receipt charged = chargeUnchecked(charges(this.a), new ChargeCommand(key, 820, ""));
				inner.setRollbackOnly();
				return charged;
			});
			// a write of the outer transaction, which commits
			this.jdbc.update("INSERT INTO method_call (operation, request_id) VALUES ('outer', ?)", key);
			return receipt;
		});
		// the charge rolled back with its savepoint, the outer transaction committed
		assertThat(calls("outer", key)).isOne();
		assertThat(charged(key)).isZero();
		assertThat(recordStatus(key)).isNull();
		// nothing to replay: the retry, on the other instance, runs
		Receipt retry = charges(this.b).charge(new ChargeCommand(key, 820, ""));
		assertThat(retry.chargeId()).isNotEqualTo(rolledBack.chargeId());
		assertThat(calls("charge", key)).isEqualTo(2);
		assertThat(charged(key)).isOne();
		assertThat(charges(this.a).charge(new ChargeCommand(key, 820, ""))).isEqualTo(retry);
		assertThat(calls("charge", key)).isEqualTo(2);
	}

	@Test
	void aKeyWhoseSavepointRolledBackIsFreeAtOnceForAnotherCaller() throws Exception {
		String key = newKey();
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			Receipt other = transaction(this.a).execute((outer) -> {
				savepoint(this.a).executeWithoutResult((inner) -> {
					chargeUnchecked(charges(this.a), new ChargeCommand(key, 830, ""));
					inner.setRollbackOnly();
				});
				// the outer transaction is still open: the call on the other instance
				// runs, not told it is in progress
				try {
					return executor.submit(() -> charges(this.b).charge(new ChargeCommand(key, 830, "")))
						.get(30, TimeUnit.SECONDS);
				}
				catch (Exception ex) {
					throw new IllegalStateException(ex);
				}
			});
			assertThat(calls("charge", key)).isEqualTo(2);
			assertThat(charged(key)).isOne();
			assertThat(charges(this.a).charge(new ChargeCommand(key, 830, ""))).isEqualTo(other);
			assertThat(calls("charge", key)).isEqualTo(2);
		}
		finally {
			executor.shutdownNow();
		}
	}

	@Test
	void aSecondCallAfterASavepointRolledBackRunsAgainAndWhatASavepointReleasedIsKept() throws Exception {
		String again = newKey();
		String released = newKey();
		String kept = newKey();
		String innerRolledBack = newKey();
		String outerRolledBack = newKey();
		Map<String, Receipt> receipts = new HashMap<>();
		transaction(this.a).executeWithoutResult((outer) -> {
			savepoint(this.a).executeWithoutResult((inner) -> {
				chargeUnchecked(charges(this.a), new ChargeCommand(again, 100, ""));
				inner.setRollbackOnly();
			});
			// the first charge is gone: the second call runs
			receipts.put(again, chargeUnchecked(charges(this.a), new ChargeCommand(again, 100, "")));
			// a savepoint released into the outer transaction keeps its call's outcome
			Receipt first = savepoint(this.a)
				.execute((inner) -> chargeUnchecked(charges(this.a), new ChargeCommand(released, 200, "")));
			assertThat(chargeUnchecked(charges(this.a), new ChargeCommand(released, 200, ""))).isEqualTo(first);
			receipts.put(released, first);
			// a savepoint inside a savepoint: the inner one rolls back, the outer is
			// released
			savepoint(this.a).executeWithoutResult((middle) -> {
				receipts.put(kept, chargeUnchecked(charges(this.a), new ChargeCommand(kept, 300, "")));
				savepoint(this.a).executeWithoutResult((inner) -> {
					chargeUnchecked(charges(this.a), new ChargeCommand(innerRolledBack, 400, ""));
					inner.setRollbackOnly();
				});
			});
			// the inner one is released, the outer rolls back: both calls are gone
			savepoint(this.a).executeWithoutResult((middle) -> {
				savepoint(this.a).executeWithoutResult(
						(inner) -> chargeUnchecked(charges(this.a), new ChargeCommand(outerRolledBack, 500, "")));
				middle.setRollbackOnly();
			});
			assertThat(chargeUnchecked(charges(this.a), new ChargeCommand(kept, 300, "")))
				.isEqualTo(receipts.get(kept));
		});
		assertThat(calls("charge", again)).isEqualTo(2);
		assertThat(calls("charge", released)).isOne();
		assertThat(calls("charge", kept)).isOne();
		assertThat(calls("charge", innerRolledBack)).isOne();
		assertThat(calls("charge", outerRolledBack)).isOne();
		for (String key : List.of(again, released, kept)) {
			assertThat(charged(key)).as(key).isOne();
			// committed: the other instance replays the call that persisted
			assertThat(charges(this.b).charge(new ChargeCommand(key, receipts.get(key).amount(), "")))
				.isEqualTo(receipts.get(key));
		}
		for (String key : List.of(innerRolledBack, outerRolledBack)) {
			assertThat(charged(key)).as(key).isZero();
			assertThat(recordStatus(key)).as(key).isNull();
		}
		// nothing of those persisted: a retry runs them
		charges(this.b).charge(new ChargeCommand(innerRolledBack, 400, ""));
		charges(this.b).charge(new ChargeCommand(outerRolledBack, 500, ""));
		assertThat(calls("charge", innerRolledBack)).isEqualTo(2);
		assertThat(calls("charge", outerRolledBack)).isEqualTo(2);
		assertThat(calls("charge", again)).isEqualTo(2);
		assertThat(calls("charge", released)).isOne();
	}

	@Test
	void aTransactionalServiceThatChargesAgainAfterASavepointRolledBackRunsTheSecondCall() throws Exception {
		String key = newKey();
		List<Receipt> receipts = this.a.getBean(Checkout.class)
			.chargeAgainAfterASavepointRolledBack(new ChargeCommand(key, 610, ""));
		// the second charge ran: it is not the first one's, which rolled back
		assertThat(receipts.get(1).chargeId()).isNotEqualTo(receipts.get(0).chargeId());
		assertThat(calls("charge", key)).isEqualTo(2);
		assertThat(charged(key)).isOne();
		assertThat(this.jdbc.queryForObject("SELECT id FROM method_charge WHERE request_id = ?", Long.class, key))
			.isEqualTo(receipts.get(1).chargeId());
		assertThat(charges(this.b).charge(new ChargeCommand(key, 610, ""))).isEqualTo(receipts.get(1));
		assertThat(calls("charge", key)).isEqualTo(2);
	}

	@Test
	void keysAreScopedByTheCurrentRequestOrByTheirExpression() throws Exception {
		String key = newKey();
		assertThat(postScoped(this.a, key, "acme")).isEqualTo("ran");
		assertThat(postScoped(this.b, key, "acme")).isEqualTo("ran");
		assertThat(postScoped(this.b, key, "globex")).isEqualTo("ran");
		// outside a request: the global scope
		assertThat(charges(this.a).scoped(key)).isEqualTo("ran");
		assertThat(charges(this.b).scoped(key)).isEqualTo("ran");
		assertThat(calls("scoped", key)).isEqualTo(3);
		charges(this.a).touch("acme", key);
		charges(this.b).touch("acme", key);
		charges(this.b).touch("globex", key);
		assertThat(calls("touch", key)).isEqualTo(2);
		// the default operation: the class, the method and its parameter types
		String charges = "operation:" + MethodTestApplication.Charges.class.getName();
		String scoped = charges + ".scoped-java.lang.String";
		String touch = charges + ".touch-java.lang.String-java.lang.String";
		assertThat(this.jdbc.queryForList("SELECT DISTINCT scope FROM idempotency_record WHERE idem_key = ?",
				String.class, key))
			.containsExactlyInAnyOrder(scoped + "/header:acme", scoped + "/header:globex", scoped + "/",
					touch + "/custom:acme", touch + "/custom:globex");
	}

	@Test
	void aHandlerWithAKeyIsAnIdempotentMethodNotAnIdempotentEndpoint() throws Exception {
		String key = newKey();
		// no Idempotency-Key: the filter does not ask for one
		String first = post(this.a, "/keyed/" + key, null);
		assertThat(first).startsWith("keyed ");
		assertThat(post(this.b, "/keyed/" + key, null)).isEqualTo(first);
		assertThat(calls("keyed", key)).isOne();
	}

	@Test
	void theTemplateRunsAnOperationOnceAndReadsAGenericResultBack() {
		String key = newKey();
		IdempotencyTemplate refunds = this.a.getBean(IdempotencyTemplate.class)
			.withPolicy("charges")
			.withOperation("refunds");
		IdempotencyTemplate refundsOnB = this.b.getBean(IdempotencyTemplate.class)
			.withPolicy("charges")
			.withOperation("refunds");
		ParameterizedTypeReference<Map<String, List<Long>>> type = new ParameterizedTypeReference<>() {
		};
		Map<String, List<Long>> first = refunds.execute(key, Map.of("amount", 50), type, () -> {
			this.jdbc.update("INSERT INTO method_call (operation, request_id) VALUES ('refund', ?)", key);
			return Map.of("refunded", List.of(50L));
		});
		Map<String, List<Long>> retry = refundsOnB.execute(key, Map.of("amount", 50), type, () -> {
			throw new AssertionError("must not run");
		});
		assertThat(retry).isEqualTo(first).containsEntry("refunded", List.of(50L));
		assertThat(calls("refund", key)).isOne();
		assertThatExceptionOfType(IdempotencyKeyReusedException.class)
			.isThrownBy(() -> refundsOnB.execute(key, Map.of("amount", 60), type, Map::of));
		// another operation's keys are its own
		String other = refundsOnB.withOperation("credits").execute(key, null, String.class, () -> "credited");
		assertThat(other).isEqualTo("credited");
	}

	private String postScoped(ConfigurableApplicationContext instance, String key, String tenant)
			throws IOException, InterruptedException {
		return post(instance, "/scoped/" + key, tenant);
	}

	private String post(ConfigurableApplicationContext instance, String path, @Nullable String tenant)
			throws IOException, InterruptedException {
		int port = ((WebServerApplicationContext) instance).getWebServer().getPort();
		HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.POST(BodyPublishers.noBody());
		if (tenant != null) {
			builder.header("X-Tenant", tenant);
		}
		HttpRequest request = builder.build();
		HttpResponse<String> response = this.client.send(request, BodyHandlers.ofString(StandardCharsets.UTF_8));
		assertThat(response.statusCode()).isEqualTo(200);
		return response.body();
	}

	private <T> List<T> race(int racers, Racer<T> racer) throws Exception {
		ExecutorService executor = Executors.newFixedThreadPool(racers);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<T>> futures = new ArrayList<>();
			for (int i = 0; i < racers; i++) {
				int index = i;
				futures.add(executor.submit(() -> {
					start.await();
					return racer.run(index);
				}));
			}
			start.countDown();
			List<T> results = new ArrayList<>();
			for (Future<T> future : futures) {
				results.add(future.get(60, TimeUnit.SECONDS));
			}
			return results;
		}
		finally {
			executor.shutdownNow();
		}
	}

	private static TransactionTemplate transaction(ConfigurableApplicationContext instance) {
		return new TransactionTemplate(instance.getBean(PlatformTransactionManager.class));
	}

	// a savepoint in the transaction that is active, as Spring makes it for NESTED
	private static TransactionTemplate savepoint(ConfigurableApplicationContext instance) {
		TransactionTemplate savepoint = transaction(instance);
		savepoint.setPropagationBehavior(TransactionDefinition.PROPAGATION_NESTED);
		return savepoint;
	}

	private long calls(String operation, String requestId) {
		Long count = this.jdbc.queryForObject("SELECT count(*) FROM method_call WHERE operation = ? AND request_id = ?",
				Long.class, operation, requestId);
		return (count != null) ? count : -1;
	}

	private @Nullable String recordStatus(String requestId) {
		List<String> statuses = this.jdbc.queryForList(
				"SELECT status::text FROM idempotency_record WHERE idem_key = ? AND expires_at > now()", String.class,
				requestId);
		return statuses.isEmpty() ? null : statuses.get(0);
	}

	private long charged(String requestId) {
		Long count = this.jdbc.queryForObject("SELECT count(*) FROM method_charge WHERE request_id = ?", Long.class,
				requestId);
		return (count != null) ? count : -1;
	}

	private static Charges charges(ConfigurableApplicationContext instance) {
		return instance.getBean(Charges.class);
	}

	private static Receipt chargeUnchecked(Charges charges, ChargeCommand command) {
		try {
			return charges.charge(command);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static void awaitUnchecked(CountDownLatch latch) {
		try {
			if (!latch.await(30, TimeUnit.SECONDS)) {
				throw new IllegalStateException("never released");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private ConfigurableApplicationContext start(String instance) {
		Map<String, Object> properties = MethodTestApplication.properties(this.prefix);
		LettuceConnectionFactory redis = this.redis;
		DataSource dataSource = this.dataSource;
		return new SpringApplicationBuilder(MethodTestApplication.class).properties(properties)
			.initializers((context) -> {
				GenericApplicationContext generic = (GenericApplicationContext) context;
				generic.registerBean("redisConnectionFactory", LettuceConnectionFactory.class, () -> redis);
				generic.registerBean("dataSource", DataSource.class, () -> dataSource,
						(definition) -> definition.setDestroyMethodName(""));
			})
			.run("--instance=" + instance);
	}

	private static String newKey() {
		return UUID.randomUUID().toString();
	}

	@FunctionalInterface
	private interface Racer<T> {

		T run(int index) throws Exception;

	}

}
