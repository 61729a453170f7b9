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

import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The README's story, end to end over HTTP on real Redis and a real database (PostgreSQL
 * or MariaDB, as the subclass points the sample at it), checking the database after each
 * step: one payment and one gateway charge per key, the balance debited once.
 *
 * @author Idempotency contributors
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
abstract class AbstractPaymentsApplicationIT {

	private static final Pattern ID = Pattern.compile("\"id\":\"([0-9a-f-]{36})\"");

	@LocalServerPort
	private int port;

	@Autowired
	private JdbcClient jdbc;

	private SampleClient client;

	@BeforeEach
	void client() {
		this.client = new SampleClient(this.port);
	}

	@Test
	void theReadmeStory() throws Exception {
		String account = openAccount("alice", 10_000);
		String payment = paymentJson(account, 3000, "Order 1001");

		// 1. the first payment runs
		HttpResponse<byte[]> first = this.client.post("alice", "/payments", payment, "Idempotency-Key", "order-1001");
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(first.headers().firstValue("Idempotency-Expires")).isPresent();

		// 2. a retry replays it byte for byte, without charging again
		HttpResponse<byte[]> retry = this.client.post("alice", "/payments", payment, "Idempotency-Key", "order-1001");
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
		assertThat(retry.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));

		// 3. a duplicate while the first is still running gets 409 with Retry-After
		String slow = paymentJson(account, 1000, "Order 1002");
		CompletableFuture<HttpResponse<byte[]>> inFlight = CompletableFuture.supplyAsync(() -> this.client.post("alice",
				"/payments", slow, "Idempotency-Key", "order-1002", "Demo-Gateway-Delay-Ms", "4000"));
		// no fixed head start, which a busy machine can outrun: the duplicate goes out
		// once the operator's endpoint shows the key in progress
		awaitProcessing("order-1002", "principal:alice", inFlight);
		HttpResponse<byte[]> busy = this.client.post("alice", "/payments", slow, "Idempotency-Key", "order-1002");
		assertThat(busy.statusCode()).isEqualTo(409);
		assertThat(busy.headers().firstValue("Retry-After")).isPresent();
		assertThat(busy.headers().firstValue("Content-Type")).contains("application/problem+json");
		assertThat(SampleClient.text(busy)).contains("request-in-progress");
		assertThat(inFlight.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(201);

		// 4. the same key with another body is refused
		HttpResponse<byte[]> reused = this.client.post("alice", "/payments", paymentJson(account, 9999, "Order 1001"),
				"Idempotency-Key", "order-1001");
		assertThat(reused.statusCode()).isEqualTo(422);
		assertThat(SampleClient.text(reused)).contains("idempotency-key-reused");

		// 5. a business rejection is deterministic: stored and replayed
		String tooMuch = paymentJson(account, 1_000_000, "Yacht");
		HttpResponse<byte[]> refused = this.client.post("alice", "/payments", tooMuch, "Idempotency-Key", "yacht");
		assertThat(refused.statusCode()).isEqualTo(402);
		assertThat(SampleClient.text(refused)).contains("insufficient-funds");
		HttpResponse<byte[]> refusedAgain = this.client.post("alice", "/payments", tooMuch, "Idempotency-Key", "yacht");
		assertThat(refusedAgain.statusCode()).isEqualTo(402);
		assertThat(refusedAgain.body()).isEqualTo(refused.body());
		assertThat(refusedAgain.headers().firstValue("Idempotent-Replayed")).contains("true");

		// 6. a gateway failure is transient:
		// not stored, the retry runs again and succeeds
		String flaky = paymentJson(account, 500, "Order 1003");
		HttpResponse<byte[]> failed = this.client.post("alice", "/payments", flaky, "Idempotency-Key", "order-1003",
				"Demo-Gateway-Fault", "503");
		assertThat(failed.statusCode()).isEqualTo(503);
		HttpResponse<byte[]> recovered = this.client.post("alice", "/payments", flaky, "Idempotency-Key", "order-1003");
		assertThat(recovered.statusCode()).isEqualTo(201);
		assertThat(recovered.headers().firstValue("Idempotent-Replayed")).isEmpty();

		// 7. another user who picks the same key gets a payment of their own
		String bobAccount = openAccount("bob", 5_000);
		HttpResponse<byte[]> bob = this.client.post("bob", "/payments", paymentJson(bobAccount, 3000, "Order 1001"),
				"Idempotency-Key", "order-1001");
		assertThat(bob.statusCode()).isEqualTo(201);
		assertThat(bob.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(id(bob)).isNotEqualTo(id(first));

		// the database: one payment and one charge per key, the balance debited once each
		for (String key : List.of("order-1001", "order-1002", "order-1003")) {
			assertThat(paymentsWithKey("alice", key)).as(key).isEqualTo(1);
			assertThat(chargesWithKey("alice", key)).as(key).isEqualTo(1);
		}
		assertThat(paymentsWithKey("alice", "yacht")).isZero();
		assertThat(balance(account)).isEqualTo(10_000 - 3000 - 1000 - 500);
		assertThat(balance(bobAccount)).isEqualTo(5_000 - 3000);
	}

	@Test
	void fiftyConcurrentDuplicatesChargeOnce() throws Exception {
		String account = openAccount("alice", 100_000);
		String payment = paymentJson(account, 2500, "Double click");
		Request pay = (i) -> this.client.post("alice", "/payments", payment, "Idempotency-Key", "double-click",
				"Demo-Gateway-Delay-Ms", "300");
		List<HttpResponse<byte[]>> responses = race(50, pay);
		List<HttpResponse<byte[]>> created = responses.stream().filter((r) -> r.statusCode() == 201).toList();
		assertThat(created).isNotEmpty();
		assertThat(created).allSatisfy((r) -> assertThat(r.body()).isEqualTo(created.get(0).body()));
		// 503 only when a busy machine makes a store
		// or the database time out (nothing stored)
		assertThat(responses).allSatisfy((r) -> assertThat(r.statusCode()).isIn(201, 409, 503));
		// every client that retries with the key ends with the one payment
		List<HttpResponse<byte[]>> settled = settle(pay, responses);
		assertThat(settled).allSatisfy((r) -> {
			assertThat(r.statusCode()).isEqualTo(201);
			assertThat(r.body()).isEqualTo(created.get(0).body());
		});
		assertThat(paymentsWithKey("alice", "double-click")).isEqualTo(1);
		assertThat(chargesWithKey("alice", "double-click")).isEqualTo(1);
		assertThat(balance(account)).isEqualTo(100_000 - 2500);
	}

	@Test
	void fiftyPaymentsOnAnAccountThatAffordsTenNeverOverdraw() throws Exception {
		String account = openAccount("alice", 10 * 1000);
		Request pay = (i) -> this.client.post("alice", "/payments", paymentJson(account, 1000, "Item " + i),
				"Idempotency-Key", "item-" + account + "-" + i);
		List<HttpResponse<byte[]>> responses = race(50, pay);
		// 503 only when a busy machine makes a store
		// or the database time out (nothing stored)
		assertThat(responses).allSatisfy((r) -> assertThat(r.statusCode()).isIn(201, 402, 503));
		// once every client has retried its 503
		// with its key: ten payments, forty refusals
		List<HttpResponse<byte[]>> settled = settle(pay, responses);
		assertThat(settled.stream().filter((r) -> r.statusCode() == 201)).hasSize(10);
		assertThat(settled.stream().filter((r) -> r.statusCode() == 402)).hasSize(40);
		assertThat(balance(account)).isZero();
		for (int i = 0; i < 50; i++) {
			assertThat(paymentsWithKey("alice", "item-" + account + "-" + i)).as("item %d", i)
				.isEqualTo((settled.get(i).statusCode() == 201) ? 1 : 0);
		}
	}

	@Test
	void aGatewayEventDeliveredManyTimesAtOnceAndLaterIsSettledOnce() throws Exception {
		String eventId = "evt_" + UUID.randomUUID().toString().replace("-", "");
		String event = gatewayEvent(eventId, 4200);
		Request deliver = (i) -> this.client.post("gateway", "/webhooks/gateway", event);
		List<HttpResponse<byte[]>> responses = race(20, deliver);
		assertThat(responses).allSatisfy((r) -> assertThat(r.statusCode()).isIn(200, 409, 503));
		// the provider redelivers every delivery it got no 2xx for
		List<HttpResponse<byte[]>> settled = settle(deliver, responses);
		assertThat(settled).allSatisfy((r) -> {
			assertThat(r.statusCode()).isEqualTo(200);
			assertThat(r.body()).isEqualTo(settled.get(0).body());
		});
		assertThat(settled.stream().filter((r) -> r.headers().firstValue("Idempotent-Replayed").isEmpty()))
			.as("deliveries that ran the handler")
			.hasSize(1);
		assertThat(SampleClient.text(settled.get(0))).contains("\"event\":\"" + eventId + "\"",
				"\"outcome\":\"settled\"");
		// a day-later redelivery, with its members in another order: replayed
		String reordered = "{\"data\":{\"currency\":\"EUR\",\"amount\":4200,\"id\":\"ch_" + eventId
				+ "\"},\"type\":\"charge.succeeded\",\"id\":\"" + eventId + "\"}";
		HttpResponse<byte[]> late = this.client.post("gateway", "/webhooks/gateway", reordered);
		assertThat(late.body()).isEqualTo(settled.get(0).body());
		assertThat(late.headers().firstValue("Idempotent-Replayed")).contains("true");
		assertThat(settlements(eventId)).isOne();

		// another event under an id already used: refused, nothing settled
		HttpResponse<byte[]> clash = this.client.post("gateway", "/webhooks/gateway", gatewayEvent(eventId, 9900));
		assertThat(clash.statusCode()).isEqualTo(422);
		assertThat(SampleClient.text(clash)).contains("idempotency-key-reused");
		// an event without an id: refused before the handler
		HttpResponse<byte[]> anonymous = this.client.post("gateway", "/webhooks/gateway",
				"{\"type\":\"charge.succeeded\",\"data\":{\"id\":\"ch_1\",\"amount\":1,\"currency\":\"EUR\"}}");
		assertThat(anonymous.statusCode()).isEqualTo(400);
		assertThat(SampleClient.text(anonymous)).contains("idempotency-key-missing", "at '/id'");
		assertThat(settlements(eventId)).isOne();
		// only the provider delivers events
		assertThat(this.client.post("alice", "/webhooks/gateway", gatewayEvent("evt_forged", 1)).statusCode())
			.isEqualTo(403);
		assertThat(settlements("evt_forged")).isZero();
	}

	// What clients that retry do: send each answer that asks for a retry (409, 503) again
	// with its key, one at a time, until it is final.
	private List<HttpResponse<byte[]>> settle(Request request, List<HttpResponse<byte[]>> responses) throws Exception {
		List<HttpResponse<byte[]>> settled = new ArrayList<>();
		for (int i = 0; i < responses.size(); i++) {
			HttpResponse<byte[]> response = responses.get(i);
			for (int attempt = 0; attempt < 30
					&& (response.statusCode() == 409 || response.statusCode() == 503); attempt++) {
				Thread.sleep(200);
				response = request.send(i);
			}
			settled.add(response);
		}
		return settled;
	}

	private List<HttpResponse<byte[]>> race(int count, Request request) throws Exception {
		return Race.of(count, request::send);
	}

	private static String gatewayEvent(String id, long amount) {
		return "{\"id\":\"" + id + "\",\"type\":\"charge.succeeded\",\"data\":{\"id\":\"ch_" + id + "\",\"amount\":"
				+ amount + ",\"currency\":\"EUR\"}}";
	}

	private long settlements(String eventId) {
		return this.jdbc.sql("SELECT count(*) FROM gateway_settlements WHERE event_id = ?")
			.param(eventId)
			.query(Long.class)
			.single();
	}

	private String openAccount(String user, long balance) {
		HttpResponse<byte[]> response = this.client.post(user, "/accounts",
				"{\"currency\":\"EUR\",\"initialBalance\":" + balance + "}", "Idempotency-Key",
				"account-" + UUID.randomUUID());
		assertThat(response.statusCode()).isEqualTo(201);
		return id(response);
	}

	private void awaitProcessing(String key, String scope, CompletableFuture<?> request) throws InterruptedException {
		String path = "/actuator/idempotency?key=" + key + "&scope=" + URLEncoder.encode(scope, StandardCharsets.UTF_8);
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		while (!SampleClient.text(this.client.get("admin", path)).contains("\"state\":\"PROCESSING\"")) {
			assertThat(request).as("the request holding %s", key).isNotDone();
			assertThat(System.nanoTime() - deadline).as("%s in progress within 30 s", key).isNegative();
			Thread.sleep(20);
		}
	}

	private static String paymentJson(String account, long amount, String description) {
		return "{\"accountId\":\"" + account + "\",\"amount\":" + amount + ",\"currency\":\"EUR\",\"description\":\""
				+ description + "\"}";
	}

	private static String id(HttpResponse<byte[]> response) {
		Matcher matcher = ID.matcher(SampleClient.text(response));
		assertThat(matcher.find()).as("id in %s", SampleClient.text(response)).isTrue();
		return matcher.group(1);
	}

	private long paymentsWithKey(String owner, String key) {
		return this.jdbc.sql("SELECT count(*) FROM payments WHERE owner = ? AND idempotency_key = ?")
			.params(owner, key)
			.query(Long.class)
			.single();
	}

	private long chargesWithKey(String owner, String key) {
		return this.jdbc.sql("SELECT count(*) FROM gateway_charges WHERE charge_key = ?")
			.param(PaymentService.chargeKey(owner, key))
			.query(Long.class)
			.single();
	}

	private long balance(String account) {
		return this.jdbc.sql("SELECT balance FROM accounts WHERE id = ?")
			.param(UUID.fromString(account))
			.query(Long.class)
			.single();
	}

	@FunctionalInterface
	interface Request {

		HttpResponse<byte[]> send(int index);

	}

}
