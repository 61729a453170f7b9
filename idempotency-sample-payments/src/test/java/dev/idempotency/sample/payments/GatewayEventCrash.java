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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two deliveries of gateway events, {@code POST /webhooks/gateway} of the transactional
 * "gateway-events" policy keyed by the event's id, that a crash test sends to the
 * instance it is about to kill: one paused after the handler wrote its settlement, before
 * the commit; the other after the commit, before the receipt is written. After the kill
 * the provider redelivers both, several times at once, to a surviving instance: the
 * rolled-back event is settled by exactly one redelivery, the committed one is replayed,
 * and the database holds exactly one settlement per event.
 *
 * @author Idempotency contributors
 */
final class GatewayEventCrash {

	static final String BEFORE_COMMIT = "evt_crash_before_commit";

	static final String AFTER_COMMIT = "evt_crash_after_commit";

	private static final Duration PATIENCE = Duration.ofSeconds(60);

	private static final int REDELIVERIES = 4;

	private final JdbcClient jdbc;

	private final SampleInstance victim;

	private final List<CompletableFuture<HttpResponse<byte[]>>> deliveries = new ArrayList<>();

	/**
	 * Send the two deliveries to the victim.
	 * @param jdbc the schema of the instances
	 * @param victim the instance to kill
	 */
	GatewayEventCrash(JdbcClient jdbc, SampleInstance victim) {
		this.jdbc = jdbc;
		this.victim = victim;
		SampleClient client = new SampleClient(victim.port());
		this.deliveries.add(AccountOpeningCrash.send(() -> client.post("gateway", "/webhooks/gateway",
				event(BEFORE_COMMIT), DemoTransactionPauses.BEFORE_COMMIT, "60000")));
		this.deliveries.add(AccountOpeningCrash.send(() -> client.post("gateway", "/webhooks/gateway",
				event(AFTER_COMMIT), DemoTransactionPauses.AFTER_COMMIT, "60000")));
	}

	static String event(String id) {
		return "{\"id\":\"" + id + "\",\"type\":\"charge.succeeded\",\"data\":{\"id\":\"ch_" + id + "\",\"amount\":"
				+ amount(id) + ",\"currency\":\"EUR\"}}";
	}

	private static long amount(String id) {
		return BEFORE_COMMIT.equals(id) ? 4101 : 4202;
	}

	/**
	 * Wait until both deliveries are paused, and check what the database shows then.
	 */
	void awaitPaused() {
		AccountOpeningCrash.awaitState(this.victim, "the pause before the commit of '" + BEFORE_COMMIT + "'",
				() -> this.victim.output().contains(pauseLogLine("before the commit", BEFORE_COMMIT)),
				this.deliveries.get(0));
		AccountOpeningCrash.awaitState(this.victim, "the pause after the commit of '" + AFTER_COMMIT + "'",
				() -> this.victim.output().contains(pauseLogLine("after the commit", AFTER_COMMIT)),
				this.deliveries.get(1));
		assertThat(settlements(BEFORE_COMMIT)).as("committed settlements before the kill").isZero();
		assertThat(settlements(AFTER_COMMIT)).as("committed settlements before the kill").isOne();
	}

	private static String pauseLogLine(String point, String id) {
		return "Demo pause of 60000 ms " + point + " of POST /webhooks/gateway, key '" + id + "'";
	}

	/**
	 * Once the victim is gone, check that its deliveries got no answer.
	 */
	void assertUnanswered() {
		this.deliveries.forEach((delivery) -> assertThat(delivery).failsWithin(Duration.ofSeconds(30)));
	}

	/**
	 * Redeliver both events to the survivor, several times at once each, until no
	 * redelivery is answered {@code 409}: one settles the rolled-back event, every other
	 * answer replays it, and the committed event is only replayed.
	 * @param survivor a client of the survivor
	 */
	void assertSettledOnceByTheRedeliveries(SampleClient survivor) {
		List<HttpResponse<byte[]>> rolledBack = redeliver(survivor, BEFORE_COMMIT);
		assertThat(rolledBack.stream().filter((r) -> r.headers().firstValue("Idempotent-Replayed").isEmpty()))
			.as("redeliveries of the rolled-back event that ran the handler")
			.hasSize(1);
		List<HttpResponse<byte[]>> committed = redeliver(survivor, AFTER_COMMIT);
		assertThat(committed).allSatisfy((r) -> assertThat(r.headers().firstValue("Idempotent-Replayed"))
			.as("a redelivery of the committed event ran the handler")
			.contains("true"));
		for (List<HttpResponse<byte[]>> answers : List.of(rolledBack, committed)) {
			assertThat(answers).allSatisfy((r) -> {
				assertThat(r.statusCode()).as(SampleClient.text(r)).isEqualTo(200);
				assertThat(r.body()).as("bytes of every answer").isEqualTo(answers.get(0).body());
			});
			assertThat(SampleClient.text(answers.get(0))).contains("\"outcome\":\"settled\"");
		}
		assertThat(settlements(BEFORE_COMMIT)).as("settlements of %s", BEFORE_COMMIT).isOne();
		assertThat(settlements(AFTER_COMMIT)).as("settlements of %s", AFTER_COMMIT).isOne();
	}

	private static List<HttpResponse<byte[]>> redeliver(SampleClient survivor, String id) {
		ExecutorService executor = Executors.newFixedThreadPool(REDELIVERIES);
		try {
			List<CompletableFuture<HttpResponse<byte[]>>> answers = new ArrayList<>();
			for (int i = 0; i < REDELIVERIES; i++) {
				answers.add(CompletableFuture.supplyAsync(() -> redeliverWhileInProgress(survivor, id), executor));
			}
			return answers.stream().map(CompletableFuture::join).toList();
		}
		finally {
			executor.shutdownNow();
		}
	}

	// a provider redelivers until it gets a 2xx; 409 while the dead owner's Redis claim
	// has not lapsed, or while another redelivery runs
	private static HttpResponse<byte[]> redeliverWhileInProgress(SampleClient survivor, String id) {
		long deadline = System.nanoTime() + PATIENCE.toNanos();
		while (true) {
			HttpResponse<byte[]> response = survivor.post("gateway", "/webhooks/gateway", event(id));
			if (response.statusCode() != 409 || System.nanoTime() > deadline) {
				return response;
			}
			AccountOpeningCrash.pause(Duration.ofMillis(100));
		}
	}

	private long settlements(String id) {
		return this.jdbc.sql("SELECT count(*) FROM gateway_settlements WHERE event_id = ? AND amount = ?")
			.params(id, amount(id))
			.query(Long.class)
			.single();
	}

}
