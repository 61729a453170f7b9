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
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.idempotency.test.servers.TestServers;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The demo request headers with {@code payments.demo.enabled=true}, as the sample's
 * {@code application.yml} sets it: they slow down or fail the gateway, or hold the
 * response after the commit, only when a payment is taken, and a malformed one is refused
 * before anything is paid.
 *
 * @author Idempotency contributors
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class DemoHeadersIT {

	private static final String SCHEMA = "demo_it_" + Long.toHexString(System.nanoTime());

	private static final Pattern ID = Pattern.compile("\"id\":\"([0-9a-f-]{36})\"");

	@LocalServerPort
	private int port;

	@Autowired
	private JdbcClient jdbc;

	private SampleClient client;

	private String account;

	@DynamicPropertySource
	static void servers(DynamicPropertyRegistry registry) {
		TestServers.springProperties().forEach((name, value) -> registry.add(name, () -> value));
		registry.add("spring.datasource.hikari.schema", () -> SCHEMA);
		registry.add("spring.flyway.schemas", () -> SCHEMA);
		registry.add("spring.flyway.default-schema", () -> SCHEMA);
		registry.add("idempotency.redis.key-prefix", () -> SCHEMA + ":");
	}

	@BeforeEach
	void openAccount() {
		this.client = new SampleClient(this.port);
		HttpResponse<byte[]> response = this.client.post("alice", "/accounts",
				"{\"currency\":\"EUR\",\"initialBalance\":10000}", "Idempotency-Key", "account-" + UUID.randomUUID());
		assertThat(response.statusCode()).isEqualTo(201);
		Matcher matcher = ID.matcher(SampleClient.text(response));
		assertThat(matcher.find()).isTrue();
		this.account = matcher.group(1);
	}

	@Test
	void gatewayFaultFailsThePaymentWithThatStatusAndTheRetryPays() {
		HttpResponse<byte[]> failed = pay("fault", "Demo-Gateway-Fault", "502");
		assertThat(failed.statusCode()).isEqualTo(502);
		assertThat(SampleClient.text(failed)).contains("gateway-failure");
		assertThat(payments("fault")).isZero();
		assertThat(balance()).isEqualTo(10_000);
		HttpResponse<byte[]> retried = pay("fault");
		assertThat(retried.statusCode()).isEqualTo(201);
		assertThat(retried.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(balance()).isEqualTo(10_000 - 700);
	}

	@Test
	void gatewayDelayHoldsThePaymentAtLeastThatLong() {
		long start = System.nanoTime();
		HttpResponse<byte[]> response = pay("delay", "Demo-Gateway-Delay-Ms", "1500");
		assertThat(response.statusCode()).isEqualTo(201);
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(1500));
	}

	@Test
	void delayAfterCommitHoldsTheResponseAtLeastThatLong() {
		long start = System.nanoTime();
		HttpResponse<byte[]> response = pay("after-commit", "Demo-Delay-After-Commit-Ms", "1500");
		assertThat(response.statusCode()).isEqualTo(201);
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(1500));
		assertThat(payments("after-commit")).isOne();
	}

	@Test
	void faultThatIsNotA5xxIsRefusedBeforeAnythingIsPaid() {
		HttpResponse<byte[]> refused = pay("not-5xx", "Demo-Gateway-Fault", "404");
		assertThat(refused.statusCode()).isEqualTo(400);
		assertThat(refused.headers().firstValue("Content-Type")).contains("application/problem+json");
		assertThat(SampleClient.text(refused)).isEqualTo("{\"detail\":\"Demo-Gateway-Fault must be a 5xx status\","
				+ "\"instance\":\"/payments\",\"status\":400,\"title\":\"Bad Request\","
				+ "\"type\":\"https://payments.example/problems/invalid-request\"}");
		assertThat(payments("not-5xx")).isZero();
		assertThat(balance()).isEqualTo(10_000);
	}

	@Test
	void malformedDemoHeaderIsABadRequest() {
		HttpResponse<byte[]> refused = pay("malformed", "Demo-Gateway-Delay-Ms", "soon");
		assertThat(refused.statusCode()).isEqualTo(400);
		assertThat(refused.headers().firstValue("Content-Type")).contains("application/problem+json");
		assertThat(SampleClient.text(refused))
			.isEqualTo("{\"detail\":\"Failed to convert 'Demo-Gateway-Delay-Ms' with value: 'soon'\","
					+ "\"instance\":\"/payments\",\"status\":400,\"title\":\"Bad Request\"}");
		assertThat(payments("malformed")).isZero();
	}

	@Test
	void headersAreIgnoredByEveryOtherEndpoint() {
		HttpResponse<byte[]> opened = this.client.post("alice", "/accounts",
				"{\"currency\":\"EUR\",\"initialBalance\":100}", "Idempotency-Key", "account-" + UUID.randomUUID(),
				"Demo-Gateway-Fault", "404");
		assertThat(opened.statusCode()).isEqualTo(201);
		assertThat(this.client.get("alice", "/payments?accountId=" + this.account, "Demo-Gateway-Fault", "404")
			.statusCode()).isEqualTo(200);
	}

	private HttpResponse<byte[]> pay(String key, String... demoHeaders) {
		String json = "{\"accountId\":\"" + this.account + "\",\"amount\":700,\"currency\":\"EUR\",\"description\":\""
				+ key + "\"}";
		String[] headers = new String[demoHeaders.length + 2];
		headers[0] = "Idempotency-Key";
		headers[1] = key + "-" + this.account;
		System.arraycopy(demoHeaders, 0, headers, 2, demoHeaders.length);
		return this.client.post("alice", "/payments", json, headers);
	}

	private long payments(String key) {
		return this.jdbc.sql("SELECT count(*) FROM payments WHERE owner = 'alice' AND idempotency_key = ?")
			.param(key + "-" + this.account)
			.query(Long.class)
			.single();
	}

	private long balance() {
		return this.jdbc.sql("SELECT balance FROM accounts WHERE id = ?")
			.param(UUID.fromString(this.account))
			.query(Long.class)
			.single();
	}

}
