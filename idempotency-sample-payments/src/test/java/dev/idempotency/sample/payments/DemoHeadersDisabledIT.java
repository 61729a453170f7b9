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
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.idempotency.test.servers.TestServers;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The demo request headers with {@code payments.demo.enabled=false}: a payment or an
 * account opening that sends them is taken as if it did not.
 *
 * @author Idempotency contributors
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "payments.demo.enabled=false")
class DemoHeadersDisabledIT {

	private static final String SCHEMA = "demo_off_it_" + Long.toHexString(System.nanoTime());

	private static final Pattern ID = Pattern.compile("\"id\":\"([0-9a-f-]{36})\"");

	@LocalServerPort
	private int port;

	@DynamicPropertySource
	static void servers(DynamicPropertyRegistry registry) {
		TestServers.springProperties().forEach((name, value) -> registry.add(name, () -> value));
		registry.add("spring.datasource.hikari.schema", () -> SCHEMA);
		registry.add("spring.flyway.schemas", () -> SCHEMA);
		registry.add("spring.flyway.default-schema", () -> SCHEMA);
		registry.add("idempotency.redis.key-prefix", () -> SCHEMA + ":");
	}

	@Test
	void demoHeadersDoNothing() {
		SampleClient client = new SampleClient(this.port);
		// honoured, any pause would outlast the client's 60 s time-out
		HttpResponse<byte[]> opened = client.post("alice", "/accounts",
				"{\"currency\":\"EUR\",\"initialBalance\":10000}", "Idempotency-Key", "account-" + UUID.randomUUID(),
				"Demo-Pause-Before-Handler-Ms", "60000", "Demo-Pause-Before-Commit-Ms", "60000",
				"Demo-Pause-After-Commit-Ms", "60000");
		assertThat(opened.statusCode()).isEqualTo(201);
		Matcher account = ID.matcher(SampleClient.text(opened));
		assertThat(account.find()).isTrue();
		String payment = "{\"accountId\":\"" + account.group(1)
				+ "\",\"amount\":700,\"currency\":\"EUR\",\"description\":\"Demo off\"}";
		// honoured, either delay would outlast the client's 60 s time-out
		assertThat(client
			.post("alice", "/payments", payment, "Idempotency-Key", "fault-" + UUID.randomUUID(), "Demo-Gateway-Fault",
					"503", "Demo-Gateway-Delay-Ms", "60000", "Demo-Delay-After-Commit-Ms", "60000")
			.statusCode()).isEqualTo(201);
		assertThat(client
			.post("alice", "/payments", payment, "Idempotency-Key", "invalid-" + UUID.randomUUID(),
					"Demo-Gateway-Fault", "404", "Demo-Gateway-Delay-Ms", "soon")
			.statusCode()).isEqualTo(201);
	}

}
