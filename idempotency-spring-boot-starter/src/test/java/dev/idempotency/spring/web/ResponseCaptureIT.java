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

import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * What the handler writes reaches the client unchanged, and its replay is identical.
 *
 * @author Idempotency contributors
 */
class ResponseCaptureIT extends AbstractWebIT {

	@Test
	void writerWithEncodingAndFlushIsCapturedWhole() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/writer", key, "");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.headers().firstValue("Content-Type")).hasValue("text/plain;charset=UTF-8");
		assertThat(text(first)).matches("grüße 1 [-0-9a-f]{36} – after flush");
		assertThat(first.headers().firstValueAsLong("Content-Length")).hasValue(first.body().length);
		HttpResponse<byte[]> retry = post("/writer", key, "");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(retry.headers().firstValue("Content-Type")).hasValue("text/plain;charset=UTF-8");
		assertThat(this.counter.count("writer", key)).isEqualTo(1);
	}

	@Test
	void responseUnderTheLimitIsReplayed() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/large?size=1024", key, "");
		HttpResponse<byte[]> retry = post("/large?size=1024", key, "");
		assertThat(first.body()).hasSize(1024);
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(retry.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(this.counter.count("large", key)).isEqualTo(1);
	}

	@Test
	void responseOverTheLimitIsDeliveredButNotReplayable() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/large?size=5000", key, "");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.body()).hasSize(5000);
		for (int i = 0; i < 5000; i++) {
			assertThat(first.body()[i]).isEqualTo((byte) ('a' + (i / 100) % 26));
		}
		assertThat(first.headers().firstValue(IdempotencyFilter.EXPIRES_HEADER)).isPresent();
		HttpResponse<byte[]> retry = post("/large?size=5000", key, "");
		assertThat(retry.statusCode()).isEqualTo(410);
		assertThat(retry.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(text(retry)).isEqualTo("{\"type\":\"https://idempotency.dev/problems/response-not-replayable\","
				+ "\"title\":\"Response not replayable\",\"status\":410,\"detail\":\"The request with this key "
				+ "completed with status 200, but its response was too large to keep, so it cannot be replayed.\","
				+ "\"instance\":\"/large\",\"idempotencyKey\":\"" + key + "\",\"originalStatus\":200}");
		assertThat(this.counter.count("large", key)).isEqualTo(1);
	}

	@Test
	void clientMayAskForATtlWithinTheConfiguredBounds() throws Exception {
		Instant now = Instant.now();
		assertThat(AbstractHttpContractIT.expiry(post("/payments", newKey(), "{}", "X-TTL", "120")))
			.isCloseTo(now.plusSeconds(120), within(Duration.ofSeconds(5)));
		// below min-ttl (1m) and above max-ttl (7d) are clamped
		assertThat(AbstractHttpContractIT.expiry(post("/payments", newKey(), "{}", "X-TTL", "5")))
			.isCloseTo(now.plusSeconds(60), within(Duration.ofSeconds(5)));
		assertThat(AbstractHttpContractIT.expiry(post("/payments", newKey(), "{}", "X-TTL", "99999999")))
			.isCloseTo(now.plus(Duration.ofDays(7)), within(Duration.ofSeconds(5)));
		// a value that is not a number of seconds is ignored: the policy's TTL applies
		assertThat(AbstractHttpContractIT.expiry(post("/payments", newKey(), "{}", "X-TTL", "1h")))
			.isCloseTo(now.plus(Duration.ofHours(24)), within(Duration.ofSeconds(5)));
		String key = newKey();
		HttpResponse<byte[]> first = post("/payments", key, "{}", "X-TTL", "120");
		HttpResponse<byte[]> replay = post("/payments", key, "{}", "X-TTL", "120");
		assertThat(AbstractHttpContractIT.expiry(replay)).isCloseTo(AbstractHttpContractIT.expiry(first),
				within(Duration.ofSeconds(5)));
	}

	@Test
	void formParametersAreReadFromTheBufferedBody() throws Exception {
		String key = newKey();
		HttpRequest request = HttpRequest.newBuilder(uri("/form?q=query"))
			.POST(BodyPublishers.ofString("name=J%C3%BCrgen&q=body", StandardCharsets.US_ASCII))
			.header(KEY, key)
			.header("Content-Type", "application/x-www-form-urlencoded")
			.build();
		HttpResponse<byte[]> first = send(request);
		HttpResponse<byte[]> retry = send(request);
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(text(first)).isEqualTo("form Jürgen query,body 1");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(this.counter.count("form", key)).isEqualTo(1);
	}

}
