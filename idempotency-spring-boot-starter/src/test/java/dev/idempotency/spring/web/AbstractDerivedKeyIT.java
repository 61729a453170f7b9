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

package dev.idempotency.spring.web;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keys the server takes from the request, as a webhook receiver does: another header
 * ({@code webhook-id}) or a member of the JSON body ({@code /data/id}). Subclasses choose
 * the web stack and the store.
 *
 * @author Idempotency contributors
 */
abstract class AbstractDerivedKeyIT extends AbstractWebIT {

	private static final String WEBHOOK_ID = "webhook-id";

	private static String event(String id, String type) {
		return "{\"type\":\"" + type + "\",\"data\":{\"id\":\"" + id + "\",\"object\":\"charge\",\"amount\":4200}}";
	}

	private HttpResponse<byte[]> deliver(String event, String... headers) throws Exception {
		String[] all = new String[headers.length + 2];
		all[0] = "Content-Type";
		all[1] = "application/json";
		System.arraycopy(headers, 0, all, 2, headers.length);
		return post("/webhooks/body", null, event, all);
	}

	@Test
	void deliveryHeaderKeysTheRequestInsteadOfTheKeyHeader() throws Exception {
		String id = "msg_" + UUID.randomUUID();
		HttpResponse<byte[]> first = post("/webhooks/header", null, "{\"n\":1}", WEBHOOK_ID, id);
		HttpResponse<byte[]> second = post("/webhooks/header", newKey(), "{\"n\":1}", WEBHOOK_ID, id);
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(text(first)).isEqualTo("delivery 1 of 7 bytes");
		assertThat(second.statusCode()).isEqualTo(200);
		assertThat(second.body()).isEqualTo(first.body());
		assertThat(second.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(this.counter.count("webhook-header", id)).isEqualTo(1);
		// another delivery id is another request, even with the same body
		String other = "msg_" + UUID.randomUUID();
		assertThat(text(post("/webhooks/header", null, "{\"n\":1}", WEBHOOK_ID, other)))
			.isEqualTo("delivery 1 of 7 bytes");
		// the same delivery id with another body is a misuse, as for a client's key
		HttpResponse<byte[]> changed = post("/webhooks/header", null, "{\"n\":2}", WEBHOOK_ID, id);
		assertThat(changed.statusCode()).isEqualTo(422);
		assertThat(this.counter.count("webhook-header", id)).isEqualTo(1);
	}

	@Test
	void missingOrMalformedDeliveryHeaderIsRefusedNamingIt() throws Exception {
		HttpResponse<byte[]> missing = post("/webhooks/header", newKey(), "{}");
		assertThat(missing.statusCode()).isEqualTo(400);
		assertThat(text(missing)).isEqualTo(problem("idempotency-key-missing", 400, "Idempotency key missing",
				"This endpoint requires an 'webhook-id' header.", "/webhooks/header", null));
		HttpResponse<byte[]> malformed = post("/webhooks/header", null, "{}", WEBHOOK_ID, "two words");
		assertThat(malformed.statusCode()).isEqualTo(400);
		assertThat(text(malformed)).isEqualTo(problem("idempotency-key-invalid", 400, "Invalid idempotency key",
				"The 'webhook-id' header must be sent once and hold one key of 1 to 255 visible ASCII characters"
						+ " (0x21-0x7E), as a token or a quoted string.",
				"/webhooks/header", null));
		assertThat(this.counter.count("webhook-header", "two words")).isZero();
	}

	@Test
	void eventIdInTheBodyKeysTheRequest() throws Exception {
		String id = "evt_" + UUID.randomUUID();
		String event = event(id, "charge.succeeded");
		HttpResponse<byte[]> first = deliver(event);
		HttpResponse<byte[]> redelivery = deliver(event);
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(text(first)).startsWith("event 1 ");
		assertThat(redelivery.body()).isEqualTo(first.body());
		assertThat(redelivery.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		// member order and whitespace do not make another event
		String reordered = "{ \"data\": {\"amount\":4200, \"object\":\"charge\", \"id\":\"" + id
				+ "\"}, \"type\":\"charge.succeeded\" }";
		assertThat(deliver(reordered).body()).isEqualTo(first.body());
		assertThat(this.counter.count("webhook-body", event)).isEqualTo(1);
		assertThat(this.counter.count("webhook-body", reordered)).isZero();
		// another event under the same id: refused, not applied
		HttpResponse<byte[]> clash = deliver(event(id, "charge.refunded"));
		assertThat(clash.statusCode()).isEqualTo(422);
		assertThat(this.counter.count("webhook-body", event(id, "charge.refunded"))).isZero();
	}

	@Test
	void concurrentDeliveriesOfOneEventApplyItOnce() throws Exception {
		String event = event("evt_" + UUID.randomUUID(), "charge.succeeded");
		int deliveries = 12;
		ExecutorService executor = Executors.newFixedThreadPool(deliveries);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<HttpResponse<byte[]>>> responses = new ArrayList<>();
			for (int i = 0; i < deliveries; i++) {
				responses.add(executor.submit(() -> {
					start.await();
					return deliver(event);
				}));
			}
			start.countDown();
			List<HttpResponse<byte[]>> answers = new ArrayList<>();
			for (Future<HttpResponse<byte[]>> response : responses) {
				HttpResponse<byte[]> answer = response.get();
				// the first delivery, replays of it, "in progress"
				// for the sender to retry, or 503 when a busy
				// machine makes a store time out (nothing stored)
				assertThat(answer.statusCode()).isIn(200, 409, 503);
				// as a sender does: redeliver until answered 2xx
				for (int attempt = 0; attempt < 50 && answer.statusCode() != 200; attempt++) {
					Thread.sleep(100);
					answer = deliver(event);
				}
				answers.add(answer);
			}
			assertThat(answers).allSatisfy((answer) -> {
				assertThat(answer.statusCode()).isEqualTo(200);
				assertThat(answer.body()).isEqualTo(answers.get(0).body());
			});
			assertThat(answers.stream()
				.filter((answer) -> answer.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER).isEmpty()))
				.as("deliveries that ran the handler")
				.hasSize(1);
			assertThat(this.counter.count("webhook-body", event)).isEqualTo(1);
			// once the first is done, every redelivery is a replay
			HttpResponse<byte[]> late = deliver(event);
			assertThat(late.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
			assertThat(late.body()).isEqualTo(answers.get(0).body());
			assertThat(this.counter.count("webhook-body", event)).isEqualTo(1);
		}
		finally {
			executor.shutdownNow();
		}
	}

	@Test
	void eventWithoutAUsableIdIsRefusedWithoutRunningTheHandler() throws Exception {
		String missing = problem("idempotency-key-missing", 400, "Idempotency key missing",
				"This endpoint requires the request's key in its JSON body at '/data/id'.", "/webhooks/body", null);
		String invalid = problem("idempotency-key-invalid", 400, "Invalid idempotency key",
				"The request body must be JSON whose value at '/data/id' is a string of 1 to 255 visible ASCII"
						+ " characters (0x21-0x7E) or an integer, with no duplicate member on its path.",
				"/webhooks/body", null);
		Map<String, String> refusals = new LinkedHashMap<>();
		for (String body : List.of("{\"type\":\"ping\"}", "{\"data\":{\"id\":null}}", "[]")) {
			refusals.put(body, missing);
		}
		for (String body : List.of("{\"data\":{\"id\":\"a b\"}}", "{\"data\":{\"id\":{}}}", "{\"data\":{\"id\":\"k\"}",
				"{\"data\":{\"id\":\"k\",\"id\":\"j\"}}", "")) {
			refusals.put(body, invalid);
		}
		for (Map.Entry<String, String> refusal : refusals.entrySet()) {
			// an Idempotency-Key changes nothing: this policy's key is in the body
			HttpResponse<byte[]> response = deliver(refusal.getKey(), KEY, newKey());
			assertThat(response.statusCode()).as(refusal.getKey()).isEqualTo(400);
			assertThat(text(response)).as(refusal.getKey()).isEqualTo(refusal.getValue());
			assertThat(this.counter.count("webhook-body", refusal.getKey())).isZero();
		}
	}

}
