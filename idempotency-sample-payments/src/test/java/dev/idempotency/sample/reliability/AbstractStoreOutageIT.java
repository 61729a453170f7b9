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
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.sample.payments.TestDatabase;
import dev.idempotency.spring.store.tiered.CircuitBreakerState;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two instances of the payments sample sharing one Redis and one database (tiered store:
 * Redis in front of the {@link #database() database}, PostgreSQL or MariaDB), each
 * reaching them through proxies of its own, while a test cuts one server off from both
 * instances and restores it: Redis in the middle of a load, then the database. Every test
 * counts handler runs, payments, gateway charges and balances.
 *
 * @author Idempotency contributors
 */
@Tag("reliability")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractStoreOutageIT {

	private static final int INSTANCES = 2;

	private PaymentsCluster cluster;

	/**
	 * Return the database the instances share.
	 * @return the database
	 */
	abstract TestDatabase database();

	@BeforeAll
	void start() {
		this.cluster = PaymentsCluster.start(database(),
				(database() == TestDatabase.POSTGRESQL) ? "store_outage_it" : "store_outage_mariadb_it", INSTANCES,
				true, Map.of());
	}

	@AfterAll
	void stop() {
		if (this.cluster != null) {
			this.cluster.close();
		}
	}

	@AfterEach
	void restoreServers() {
		this.cluster.restoreRedis();
		this.cluster.restoreDatabase();
	}

	/**
	 * Scenario 2: Redis is cut off in the middle of a load of many keys, each sent twice
	 * at once to both instances. Requests keep succeeding on the database alone, no key
	 * runs twice, and replays of keys completed before the cut still work. Once Redis is
	 * restored, the circuit breakers close and Redis serves again.
	 */
	@Test
	void redisCutDuringALoadFallsBackToTheDatabaseAndRecovers() throws Exception {
		String account = this.cluster.openAccount(0, "alice", 10_000_000);
		Map<String, Expected> keys = new LinkedHashMap<>();
		long chargesBefore = this.cluster.charges();
		double[] fallbacksBefore = fallbacks();

		// completed before the cut
		for (int i = 0; i < 8; i++) {
			Expected expected = new Expected("before-" + i, PaymentsCluster.paymentJson(account, 100, "Before " + i));
			HttpResponse<byte[]> first = this.cluster.pay(i % INSTANCES, "alice", expected.json(), expected.key());
			assertThat(first.statusCode()).as(PaymentsCluster.text(first)).isEqualTo(201);
			expected.answered(first);
			keys.put(expected.key(), expected);
		}

		// the load: every key sent twice at once, once to each instance; Redis is cut
		// once a third of the requests have been answered
		int loadKeys = 40;
		List<Expected> load = new ArrayList<>();
		for (int i = 0; i < loadKeys; i++) {
			Expected expected = new Expected("load-" + i, PaymentsCluster.paymentJson(account, 10, "Load " + i));
			load.add(expected);
			keys.put(expected.key(), expected);
		}
		ExecutorService executor = Executors.newFixedThreadPool(8);
		try {
			AtomicInteger answered = new AtomicInteger();
			CountDownLatch aThirdAnswered = new CountDownLatch(1);
			List<Future<?>> futures = new ArrayList<>();
			for (Expected expected : load) {
				for (int instance = 0; instance < INSTANCES; instance++) {
					int target = instance;
					futures.add(executor.submit(() -> {
						HttpResponse<byte[]> response = this.cluster.pay(target, "alice", expected.json(),
								expected.key());
						expected.answered(response);
						if (answered.incrementAndGet() == loadKeys * INSTANCES / 3) {
							aThirdAnswered.countDown();
						}
						return null;
					}));
				}
			}
			assertThat(aThirdAnswered.await(2, TimeUnit.MINUTES)).isTrue();
			this.cluster.cutRedis();
			for (Future<?> future : futures) {
				future.get(2, TimeUnit.MINUTES);
			}
		}
		finally {
			executor.shutdownNow();
		}

		// Redis is still cut: new keys run, keys completed before the cut replay
		for (int i = 0; i < 4; i++) {
			Expected expected = new Expected("during-" + i, PaymentsCluster.paymentJson(account, 1000, "During " + i));
			HttpResponse<byte[]> first = this.cluster.pay(i % INSTANCES, "alice", expected.json(), expected.key());
			assertThat(first.statusCode()).as(PaymentsCluster.text(first)).isEqualTo(201);
			assertThat(PaymentsCluster.isReplay(first)).isFalse();
			expected.answered(first);
			keys.put(expected.key(), expected);
		}
		int i = 0;
		for (Expected expected : keys.values()) {
			if (expected.key().startsWith("before-")) {
				HttpResponse<byte[]> replay = this.cluster.pay((i++ + 1) % INSTANCES, "alice", expected.json(),
						expected.key());
				assertThat(replay.statusCode()).as(PaymentsCluster.text(replay)).isEqualTo(201);
				assertThat(PaymentsCluster.isReplay(replay)).isTrue();
				expected.answered(replay);
			}
		}
		double[] fallbacksDuringCut = fallbacks();
		for (int n = 0; n < INSTANCES; n++) {
			assertThat(fallbacksDuringCut[n]).as("fallbacks of instance %d", n).isGreaterThan(fallbacksBefore[n]);
			assertThat(this.cluster.instance(n).redisProxy().refusedConnections()).isPositive();
		}

		// Redis restored: each instance's breaker closes on the traffic that follows
		this.cluster.restoreRedis();
		AtomicInteger after = new AtomicInteger();
		PaymentsCluster.await(Duration.ofSeconds(60), "the circuit breakers to close", () -> {
			boolean closed = true;
			for (int n = 0; n < INSTANCES; n++) {
				if (this.cluster.instance(n).store().getCircuitBreakerState() != CircuitBreakerState.CLOSED) {
					closed = false;
					Expected expected = new Expected("after-" + after.incrementAndGet(),
							PaymentsCluster.paymentJson(account, 1, "After"));
					HttpResponse<byte[]> first = this.cluster.pay(n, "alice", expected.json(), expected.key());
					assertThat(first.statusCode()).as(PaymentsCluster.text(first)).isEqualTo(201);
					expected.answered(first);
					keys.put(expected.key(), expected);
				}
			}
			return closed;
		});
		// and the fast path serves again: a first request and its replay, no fallback
		for (int n = 0; n < INSTANCES; n++) {
			double fallbacks = this.cluster.instance(n).fallbacks();
			Expected expected = new Expected("fast-" + n, PaymentsCluster.paymentJson(account, 1, "Fast"));
			HttpResponse<byte[]> first = this.cluster.pay(n, "alice", expected.json(), expected.key());
			assertThat(first.statusCode()).as(PaymentsCluster.text(first)).isEqualTo(201);
			expected.answered(first);
			keys.put(expected.key(), expected);
			HttpResponse<byte[]> replay = this.cluster.pay(n, "alice", expected.json(), expected.key());
			assertThat(PaymentsCluster.isReplay(replay)).isTrue();
			expected.answered(replay);
			assertThat(this.cluster.instance(n).fallbacks()).as("fallbacks of instance %d", n).isEqualTo(fallbacks);
		}

		// every key ran exactly once, and replays the bytes its first 2xx carried; a key
		// whose Redis claim outlived the cut answers 409 until that claim's lease lapses
		List<HttpResponse<byte[]>> replays = PaymentsCluster.parallel(8, new ArrayList<>(keys.values()),
				this::replayWhenFree);
		long amount = 0;
		int k = 0;
		for (Expected expected : keys.values()) {
			HttpResponse<byte[]> replay = replays.get(k++);
			assertThat(replay.statusCode()).as(PaymentsCluster.text(replay)).isEqualTo(201);
			assertThat(PaymentsCluster.isReplay(replay)).as(expected.key()).isTrue();
			expected.answered(replay);
			expected.check();
			assertThat(this.cluster.handlerRuns("alice", expected.key())).as(expected.key()).isEqualTo(1);
			amount += Long.parseLong(expected.json().replaceAll(".*\"amount\":(\\d+).*", "$1"));
		}
		Map<String, Long> payments = this.cluster.paymentsPerKey("alice");
		assertThat(payments).hasSize(keys.size()).allSatisfy((key, count) -> assertThat(count).as(key).isEqualTo(1));
		assertThat(payments.keySet()).containsExactlyInAnyOrderElementsOf(keys.keySet());
		assertThat(this.cluster.paymentsOn(account)).isEqualTo(keys.size());
		assertThat(this.cluster.charges() - chargesBefore).isEqualTo(keys.size());
		assertThat(this.cluster.balance(account)).isEqualTo(10_000_000 - amount);
	}

	/**
	 * Scenario 4: the database is cut off. New requests are refused with a 503 problem
	 * and {@code Retry-After}, nothing runs, and neither tier keeps anything of them;
	 * replays Redis holds are still served. Once the database is restored, the refused
	 * requests retried with the same keys run, once.
	 */
	@Test
	void databaseCutFailsClosedAndRefusedRequestsRunOnceRestored() throws Exception {
		String account = this.cluster.openAccount(0, "bob", 100_000);
		String hotJson = PaymentsCluster.paymentJson(account, 100, "Hot");
		HttpResponse<byte[]> hot = this.cluster.pay(0, "bob", hotJson, "pg-hot");
		assertThat(hot.statusCode()).as(PaymentsCluster.text(hot)).isEqualTo(201);
		int runsBefore = this.cluster.handlerRuns();
		long chargesBefore = this.cluster.charges();
		List<String> redisBefore = this.cluster.redisKeys();
		int refused = 4;

		this.cluster.cutDatabase();
		try {
			List<HttpResponse<byte[]>> responses = PaymentsCluster.race(refused, (n) -> this.cluster.pay(n % INSTANCES,
					"bob", PaymentsCluster.paymentJson(account, 1000 + n, "Cut " + n), "pg-cut-" + n));
			assertThat(responses).allSatisfy((response) -> {
				assertThat(response.statusCode()).as(PaymentsCluster.text(response)).isEqualTo(503);
				assertThat(response.headers().firstValue("Retry-After")).isPresent();
				assertThat(response.headers().firstValue("Content-Type"))
					.hasValueSatisfying((type) -> assertThat(type).startsWith("application/problem+json"));
				assertThat(PaymentsCluster.text(response)).contains("idempotency-store-unavailable");
				assertThat(PaymentsCluster.isReplay(response)).isFalse();
			});
			// a response Redis holds is still replayed
			HttpResponse<byte[]> hotReplay = this.cluster.pay(1, "bob", hotJson, "pg-hot");
			assertThat(hotReplay.statusCode()).isEqualTo(201);
			assertThat(PaymentsCluster.isReplay(hotReplay)).isTrue();
			assertThat(hotReplay.body()).isEqualTo(hot.body());

			// nothing ran, and nothing is left: no Redis claim, no record, no payment
			assertThat(this.cluster.handlerRuns()).isEqualTo(runsBefore);
			assertThat(this.cluster.redisKeys()).containsExactlyInAnyOrderElementsOf(redisBefore);
			for (int n = 0; n < refused; n++) {
				assertThat(this.cluster.durableRecords("pg-cut-" + n)).isZero();
				assertThat(this.cluster.payments("bob", "pg-cut-" + n)).isZero();
			}
			assertThat(this.cluster.charges()).isEqualTo(chargesBefore);
		}
		finally {
			this.cluster.restoreDatabase();
		}

		// the refused requests, retried with the
		// same keys on the other instance, run once
		long amount = 100;
		for (int n = 0; n < refused; n++) {
			String key = "pg-cut-" + n;
			String json = PaymentsCluster.paymentJson(account, 1000 + n, "Cut " + n);
			HttpResponse<byte[]> retry = retryWhileUnavailable((n + 1) % INSTANCES, "bob", json, key);
			assertThat(retry.statusCode()).as(PaymentsCluster.text(retry)).isEqualTo(201);
			assertThat(PaymentsCluster.isReplay(retry)).isFalse();
			HttpResponse<byte[]> replay = this.cluster.pay(n % INSTANCES, "bob", json, key);
			assertThat(PaymentsCluster.isReplay(replay)).isTrue();
			assertThat(replay.body()).isEqualTo(retry.body());
			assertThat(this.cluster.handlerRuns("bob", key)).isEqualTo(1);
			assertThat(this.cluster.payments("bob", key)).isEqualTo(1);
			amount += 1000 + n;
		}
		assertThat(this.cluster.charges() - chargesBefore).isEqualTo(refused);
		assertThat(this.cluster.balance(account)).isEqualTo(100_000 - amount);
	}

	private double[] fallbacks() {
		double[] fallbacks = new double[INSTANCES];
		for (int n = 0; n < INSTANCES; n++) {
			fallbacks[n] = this.cluster.instance(n).fallbacks();
		}
		return fallbacks;
	}

	// as a client would:
	// retry a 409 (a Redis claim left over from the cut, until its lease lapses)
	private HttpResponse<byte[]> replayWhenFree(Expected expected) {
		List<HttpResponse<byte[]>> last = new ArrayList<>();
		PaymentsCluster.await(Duration.ofSeconds(30), "a replay of " + expected.key(), () -> {
			HttpResponse<byte[]> response = this.cluster.pay(1, "alice", expected.json(), expected.key());
			last.clear();
			last.add(response);
			return response.statusCode() != 409;
		});
		return last.get(0);
	}

	// as a client would: retry a 503 (the database's connections are being
	// re-established)
	private HttpResponse<byte[]> retryWhileUnavailable(int instance, String user, String json, String key) {
		List<HttpResponse<byte[]>> last = new ArrayList<>();
		PaymentsCluster.await(Duration.ofSeconds(30), "the database to serve " + key, () -> {
			HttpResponse<byte[]> response = this.cluster.pay(instance, user, json, key);
			last.clear();
			last.add(response);
			return response.statusCode() != 503;
		});
		return last.get(0);
	}

	/**
	 * A key of the load and every 2xx body answered for it, which must all be the same.
	 */
	private static final class Expected {

		private final String key;

		private final String json;

		private final List<byte[]> created = new CopyOnWriteArrayList<>();

		Expected(String key, String json) {
			this.key = key;
			this.json = json;
		}

		String key() {
			return this.key;
		}

		String json() {
			return this.json;
		}

		void answered(HttpResponse<byte[]> response) {
			assertThat(response.statusCode()).as("%s: %s", this.key, PaymentsCluster.text(response)).isIn(201, 409);
			if (response.statusCode() == 409) {
				assertThat(response.headers().firstValue("Retry-After")).isPresent();
			}
			else {
				this.created.add(response.body());
			}
		}

		void check() {
			assertThat(this.created).as(this.key).isNotEmpty();
			assertThat(this.created).as(this.key).allSatisfy((body) -> assertThat(body).isEqualTo(this.created.get(0)));
		}

	}

}
