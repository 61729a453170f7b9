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

package dev.idempotency.sample.reliability;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.idempotency.sample.payments.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Three instances of the payments sample sharing one Redis and one database (tiered
 * store: Redis in front of the {@link #database() database}, PostgreSQL or MariaDB), no
 * faults but the ones a shared store must absorb: a stampede of duplicates spread over
 * the instances, the same for a transactional request, Redis losing its data, and two
 * users who pick the same key. Every test counts handler runs, payments, gateway charges,
 * accounts and balances.
 *
 * @author Idempotency contributors
 */
@Tag("reliability")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractMultiInstanceIT {

	static final int INSTANCES = 3;

	private static final Pattern BALANCE = Pattern.compile("\"balance\":(\\d+)");

	private PaymentsCluster cluster;

	/**
	 * Return the database the instances share.
	 * @return the database
	 */
	abstract TestDatabase database();

	@BeforeAll
	void start() {
		this.cluster = PaymentsCluster.start(database(),
				(database() == TestDatabase.POSTGRESQL) ? "multi_instance_it" : "multi_instance_mariadb_it", INSTANCES,
				false, Map.of());
	}

	@AfterAll
	void stop() {
		if (this.cluster != null) {
			this.cluster.close();
		}
	}

	/**
	 * Return how many concurrent requests the stampede of scenario 1 sends.
	 * @return 300
	 */
	int stampede() {
		return 300;
	}

	/**
	 * Scenario 1: {@link #stampede() 300} concurrent requests with one key, spread over
	 * three instances, run the handler once; every 2xx is the same bytes, every other
	 * answer a 409 with {@code Retry-After}.
	 */
	@Test
	void concurrentDuplicatesOverThreeInstancesRunOnce() throws Exception {
		assertConcurrentDuplicatesRunOnce(this.cluster, stampede(), "stampede");
	}

	/**
	 * Scenario 1 for a transactional request: 60 concurrent openings of an account with
	 * one key, spread over three instances, while the first one's transaction stays open
	 * for a second, open the account once. A duplicate never waits behind the open
	 * transaction: it is told to retry, or replays the committed response.
	 */
	@Test
	void sixtyConcurrentTransactionalDuplicatesOverThreeInstancesOpenOneAccount() throws Exception {
		assertConcurrentTransactionalDuplicatesOpenOneAccount(this.cluster, 60, "account-stampede", 500_001);
	}

	/**
	 * Race concurrent payments with one key over the instances of a cluster, and check
	 * that the handler ran once, the database holds one payment and one charge, and every
	 * answer is the payment or a 409 with {@code Retry-After}.
	 * @param cluster the cluster
	 * @param requests how many requests
	 * @param key the idempotency key, new to the cluster
	 * @throws Exception if a request failed
	 */
	static void assertConcurrentDuplicatesRunOnce(PaymentsCluster cluster, int requests, String key) throws Exception {
		int instances = cluster.size();
		String account = cluster.openAccount(0, "alice", 1_000_000);
		String payment = PaymentsCluster.paymentJson(account, 4200, "Stampede");
		long chargesBefore = cluster.charges();
		// the gateway takes 2s, longer than the policy's 1s in-flight-wait: duplicates
		// that arrive while it runs are told to retry, later ones get the replay
		List<HttpResponse<byte[]>> responses = PaymentsCluster.race(requests,
				(i) -> cluster.pay(i % instances, "alice", payment, key, "Demo-Gateway-Delay-Ms", "2000"));

		assertThat(responses).allSatisfy(
				(response) -> assertThat(response.statusCode()).as(PaymentsCluster.text(response)).isIn(201, 409));
		List<HttpResponse<byte[]>> created = responses.stream().filter((r) -> r.statusCode() == 201).toList();
		assertThat(created).isNotEmpty();
		assertThat(created).allSatisfy((r) -> assertThat(r.body()).isEqualTo(created.get(0).body()));
		assertThat(created).allSatisfy((r) -> assertThat(r.headers().firstValue("Location"))
			.isEqualTo(created.get(0).headers().firstValue("Location")));
		assertThat(created.stream().filter((r) -> !PaymentsCluster.isReplay(r))).hasSize(1);
		assertThat(responses.stream().filter((r) -> r.statusCode() == 409)).allSatisfy((busy) -> {
			assertThat(busy.headers().firstValue("Retry-After")).isPresent();
			assertThat(busy.headers().firstValue("Content-Type"))
				.hasValueSatisfying((type) -> assertThat(type).startsWith("application/problem+json"));
			assertThat(PaymentsCluster.text(busy)).contains("request-in-progress");
		});

		assertThat(cluster.handlerRuns("alice", key)).isEqualTo(1);
		assertThat(cluster.payments("alice", key)).isEqualTo(1);
		assertThat(cluster.charges() - chargesBefore).isEqualTo(1);
		assertThat(cluster.balance(account)).isEqualTo(1_000_000 - 4200);
		// every instance replays the same bytes afterwards
		for (int i = 0; i < instances; i++) {
			HttpResponse<byte[]> replay = cluster.pay(i, "alice", payment, key);
			assertThat(replay.statusCode()).isEqualTo(201);
			assertThat(PaymentsCluster.isReplay(replay)).isTrue();
			assertThat(replay.body()).isEqualTo(created.get(0).body());
		}
		assertThat(cluster.handlerRuns("alice", key)).isEqualTo(1);
	}

	/**
	 * Race concurrent openings of an account (the transactional "accounts" policy) with
	 * one key over the instances of a cluster, the first one's transaction held open for
	 * 1 s before its commit, and check that the handler ran once, the database holds one
	 * account of that opening, and every answer is the account or a 409 with
	 * {@code Retry-After}.
	 * @param cluster the cluster
	 * @param requests how many requests
	 * @param key the idempotency key, new to the cluster
	 * @param balance the opening balance, which no other account of the cluster has
	 * @throws Exception if a request failed
	 */
	static void assertConcurrentTransactionalDuplicatesOpenOneAccount(PaymentsCluster cluster, int requests, String key,
			long balance) throws Exception {
		int instances = cluster.size();
		String json = "{\"currency\":\"EUR\",\"initialBalance\":" + balance + "}";
		List<HttpResponse<byte[]>> responses = PaymentsCluster.race(requests, (i) -> cluster.post(i % instances,
				"alice", "/accounts", json, "Idempotency-Key", key, "Demo-Pause-Before-Commit-Ms", "1000"));

		assertThat(responses).allSatisfy(
				(response) -> assertThat(response.statusCode()).as(PaymentsCluster.text(response)).isIn(201, 409));
		List<HttpResponse<byte[]>> created = responses.stream().filter((r) -> r.statusCode() == 201).toList();
		assertThat(created).isNotEmpty();
		assertThat(created).allSatisfy((r) -> assertThat(r.body()).isEqualTo(created.get(0).body()));
		assertThat(created.stream().filter((r) -> !PaymentsCluster.isReplay(r))).hasSize(1);
		assertThat(responses.stream().filter((r) -> r.statusCode() == 409)).allSatisfy((busy) -> {
			assertThat(busy.headers().firstValue("Retry-After")).isPresent();
			assertThat(PaymentsCluster.text(busy)).contains("request-in-progress");
		});
		Matcher opened = BALANCE.matcher(PaymentsCluster.text(created.get(0)));
		assertThat(opened.find()).isTrue();
		assertThat(Long.parseLong(opened.group(1))).isEqualTo(balance);

		assertThat(cluster.handlerRuns("alice", key)).isEqualTo(1);
		assertThat(cluster.accountsWithBalance("alice", balance)).isEqualTo(1);
		assertThat(cluster.durableRecords(key)).isEqualTo(1);
		for (int i = 0; i < instances; i++) {
			HttpResponse<byte[]> replay = cluster.post(i, "alice", "/accounts", json, "Idempotency-Key", key);
			assertThat(replay.statusCode()).isEqualTo(201);
			assertThat(PaymentsCluster.isReplay(replay)).isTrue();
			assertThat(replay.body()).isEqualTo(created.get(0).body());
		}
		assertThat(cluster.handlerRuns("alice", key)).isEqualTo(1);
		assertThat(cluster.accountsWithBalance("alice", balance)).isEqualTo(1);
	}

	/**
	 * Scenario 3: Redis loses every key of the store after the requests completed (keys
	 * deleted, as an eviction, a failover to an empty replica or a restart would); the
	 * retries replay from the database, byte for byte, and run nothing again. A duplicate
	 * of a request that is still running when Redis loses its claim is told to retry.
	 */
	@Test
	void redisLosingItsDataReplaysFromTheDatabaseWithoutRunningAgain() throws Exception {
		String account = this.cluster.openAccount(1, "alice", 100_000);
		Map<String, HttpResponse<byte[]>> firsts = new LinkedHashMap<>();
		for (int i = 0; i < 20; i++) {
			String key = "lost-" + i;
			HttpResponse<byte[]> first = this.cluster.pay(i % INSTANCES, "alice",
					PaymentsCluster.paymentJson(account, 100 + i, key), key);
			assertThat(first.statusCode()).as(PaymentsCluster.text(first)).isEqualTo(201);
			assertThat(PaymentsCluster.isReplay(first)).isFalse();
			firsts.put(key, first);
		}
		long chargesBefore = this.cluster.charges();
		int runsBefore = this.cluster.handlerRuns();

		this.cluster.deleteRedisKeys();
		assertThat(this.cluster.redisKeys()).isEmpty();

		int i = 0;
		for (Map.Entry<String, HttpResponse<byte[]>> first : firsts.entrySet()) {
			String key = first.getKey();
			// another instance than the one that ran it
			HttpResponse<byte[]> retry = this.cluster.pay((i + 1) % INSTANCES, "alice",
					PaymentsCluster.paymentJson(account, 100 + i, key), key);
			assertThat(retry.statusCode()).as(PaymentsCluster.text(retry)).isEqualTo(201);
			assertThat(PaymentsCluster.isReplay(retry)).as(key).isTrue();
			assertThat(retry.body()).as(key).isEqualTo(first.getValue().body());
			i++;
		}
		assertThat(this.cluster.handlerRuns()).isEqualTo(runsBefore);
		assertThat(this.cluster.charges()).isEqualTo(chargesBefore);
		assertThat(this.cluster.paymentsOn(account)).isEqualTo(20);
		assertThat(this.cluster.balance(account)).isEqualTo(100_000 - (20 * 100 + 190));

		// a request still running when Redis loses its claim: its duplicate finds the
		// durable claim in the database
		String slow = PaymentsCluster.paymentJson(account, 777, "Slow");
		CompletableFuture<HttpResponse<byte[]>> running = CompletableFuture
			.supplyAsync(() -> this.cluster.pay(0, "alice", slow, "lost-in-flight", "Demo-Gateway-Delay-Ms", "3000"));
		PaymentsCluster.await(Duration.ofSeconds(10), "the slow payment to start",
				() -> this.cluster.handlerRuns("alice", "lost-in-flight") == 1);
		this.cluster.deleteRedisKeys();
		assertThat(this.cluster.redisKeys()).isEmpty();
		HttpResponse<byte[]> duplicate = this.cluster.pay(1, "alice", slow, "lost-in-flight");
		HttpResponse<byte[]> original = running.get(30, TimeUnit.SECONDS);
		assertThat(original.statusCode()).as(PaymentsCluster.text(original)).isEqualTo(201);
		assertThat(PaymentsCluster.isReplay(original)).isFalse();
		if (duplicate.statusCode() == 409) {
			assertThat(duplicate.headers().firstValue("Retry-After")).isPresent();
		}
		else {
			// only on a machine so slow that the duplicate waited for the completion
			assertThat(duplicate.statusCode()).as(PaymentsCluster.text(duplicate)).isEqualTo(201);
			assertThat(PaymentsCluster.isReplay(duplicate)).isTrue();
			assertThat(duplicate.body()).isEqualTo(original.body());
		}
		HttpResponse<byte[]> later = this.cluster.pay(2, "alice", slow, "lost-in-flight");
		assertThat(PaymentsCluster.isReplay(later)).isTrue();
		assertThat(later.body()).isEqualTo(original.body());
		assertThat(this.cluster.handlerRuns("alice", "lost-in-flight")).isEqualTo(1);
		assertThat(this.cluster.payments("alice", "lost-in-flight")).isEqualTo(1);
		assertThat(this.cluster.charges()).isEqualTo(chargesBefore + 1);
	}

	/**
	 * Scenario 9: Bob sending Alice's key, even with Alice's very request, gets an
	 * execution of his own and never Alice's response; each one's retry replays their
	 * own.
	 */
	@Test
	void anotherUserWithTheSameKeyGetsAnExecutionOfTheirOwn() throws Exception {
		String alice = this.cluster.openAccount(0, "alice", 10_000);
		String bob = this.cluster.openAccount(1, "bob", 10_000);

		// the very same request from Bob:
		// his own execution, which cannot see Alice's account
		String alicePayment = PaymentsCluster.paymentJson(alice, 1500, "Order 42");
		HttpResponse<byte[]> aliceFirst = this.cluster.pay(0, "alice", alicePayment, "order-42");
		assertThat(aliceFirst.statusCode()).isEqualTo(201);
		HttpResponse<byte[]> bobSame = this.cluster.pay(1, "bob", alicePayment, "order-42");
		assertThat(bobSame.statusCode()).as(PaymentsCluster.text(bobSame)).isEqualTo(404);
		assertThat(PaymentsCluster.isReplay(bobSame)).isFalse();
		assertThat(PaymentsCluster.text(bobSame)).doesNotContain(PaymentsCluster.id(aliceFirst));
		assertThat(this.cluster.handlerRuns("bob", "order-42")).isEqualTo(1);

		// both at once with the same key,
		// each on their own account, on different instances
		CompletableFuture<HttpResponse<byte[]>> aliceRace = CompletableFuture.supplyAsync(
				() -> this.cluster.pay(1, "alice", PaymentsCluster.paymentJson(alice, 2500, "Order 43"), "order-43"));
		CompletableFuture<HttpResponse<byte[]>> bobRace = CompletableFuture.supplyAsync(
				() -> this.cluster.pay(2, "bob", PaymentsCluster.paymentJson(bob, 2500, "Order 43"), "order-43"));
		HttpResponse<byte[]> alice43 = aliceRace.get(30, TimeUnit.SECONDS);
		HttpResponse<byte[]> bob43 = bobRace.get(30, TimeUnit.SECONDS);
		assertThat(alice43.statusCode()).as(PaymentsCluster.text(alice43)).isEqualTo(201);
		assertThat(bob43.statusCode()).as(PaymentsCluster.text(bob43)).isEqualTo(201);
		assertThat(PaymentsCluster.isReplay(alice43)).isFalse();
		assertThat(PaymentsCluster.isReplay(bob43)).isFalse();
		assertThat(PaymentsCluster.id(bob43)).isNotEqualTo(PaymentsCluster.id(alice43));
		assertThat(PaymentsCluster.text(bob43)).contains(bob).doesNotContain(alice);

		// every retry replays its own user's response, on any instance
		for (int i = 0; i < INSTANCES; i++) {
			assertReplays(this.cluster.pay(i, "alice", alicePayment, "order-42"), aliceFirst);
			assertReplays(this.cluster.pay(i, "bob", alicePayment, "order-42"), bobSame);
			assertReplays(
					this.cluster.pay(i, "alice", PaymentsCluster.paymentJson(alice, 2500, "Order 43"), "order-43"),
					alice43);
			assertReplays(this.cluster.pay(i, "bob", PaymentsCluster.paymentJson(bob, 2500, "Order 43"), "order-43"),
					bob43);
		}

		assertThat(this.cluster.handlerRuns("alice", "order-42")).isEqualTo(1);
		assertThat(this.cluster.handlerRuns("bob", "order-42")).isEqualTo(1);
		assertThat(this.cluster.handlerRuns("alice", "order-43")).isEqualTo(1);
		assertThat(this.cluster.handlerRuns("bob", "order-43")).isEqualTo(1);
		assertThat(this.cluster.payments("alice", "order-42")).isEqualTo(1);
		assertThat(this.cluster.payments("bob", "order-42")).isZero();
		assertThat(this.cluster.payments("alice", "order-43")).isEqualTo(1);
		assertThat(this.cluster.payments("bob", "order-43")).isEqualTo(1);
		// two records per key, one per scope
		assertThat(this.cluster.durableRecords("order-42")).isEqualTo(2);
		assertThat(this.cluster.durableRecords("order-43")).isEqualTo(2);
		assertThat(this.cluster.chargesFor(alice)).isEqualTo(2);
		assertThat(this.cluster.chargesFor(bob)).isEqualTo(1);
		assertThat(this.cluster.balance(alice)).isEqualTo(10_000 - 1500 - 2500);
		assertThat(this.cluster.balance(bob)).isEqualTo(10_000 - 2500);
	}

	private static void assertReplays(HttpResponse<byte[]> replay, HttpResponse<byte[]> original) {
		assertThat(replay.statusCode()).as(PaymentsCluster.text(replay)).isEqualTo(original.statusCode());
		assertThat(PaymentsCluster.isReplay(replay)).isTrue();
		assertThat(replay.body()).isEqualTo(original.body());
	}

}
