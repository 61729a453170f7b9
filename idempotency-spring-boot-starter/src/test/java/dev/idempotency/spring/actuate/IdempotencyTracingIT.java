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

package dev.idempotency.spring.actuate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.idempotency.test.servers.TestServers;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.test.simple.SimpleSpan;
import io.micrometer.tracing.test.simple.SimpleTracer;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Spans of idempotent requests over real HTTP, with a tracing bridge (Micrometer
 * Tracing's {@link SimpleTracer}) behind the application's observation registry and the
 * Redis store on a real server.
 *
 * @author Idempotency contributors
 */
@Import(IdempotencyTracingIT.Tracing.class)
@TestPropertySource(
		properties = { "idempotency.store.type=redis", "idempotency.redis.key-prefix=it-tracing-${random.uuid}:" })
class IdempotencyTracingIT extends AbstractOpsIT {

	private static final String SPAN_NAME = "idempotency metered";

	@Autowired
	SimpleTracer tracer;

	private final List<SimpleSpan> finished = new ArrayList<>();

	@Test
	void eachIdempotentRequestHasOneSpanWithItsOutcomeUnderTheHttpServerSpan() throws Exception {
		String key = newKey();
		String other = newKey();
		assertThat(post("/ops/pay", key, "a").statusCode()).isEqualTo(201);
		assertOneIdempotencySpan("executed", "false", "stored");
		assertThat(post("/ops/pay", key, "a").statusCode()).isEqualTo(201);
		assertOneIdempotencySpan("replayed", "true", "none");
		assertThat(post("/ops/pay", key, "b").statusCode()).isEqualTo(422);
		assertOneIdempotencySpan("mismatch", "false", "none");
		assertThat(post("/ops/pay", null, "a").statusCode()).isEqualTo(400);
		assertOneIdempotencySpan("missing_key", "false", "none");
		assertThat(post("/ops/pay", other, "x".repeat(2048)).statusCode()).isEqualTo(413);
		assertOneIdempotencySpan("too_large", "false", "none");

		assertThat(post("/ops/plain", newKey(), "p").statusCode()).isEqualTo(200);
		List<SimpleSpan> plain = awaitRequestSpans();
		assertThat(plain).extracting(SimpleSpan::getName).doesNotContain(SPAN_NAME);

		assertThat(this.finished).isNotEmpty().allSatisfy((span) -> {
			assertThat(span.getTags().keySet()).noneMatch((name) -> name.contains(key) || name.contains(other));
			assertThat(span.getTags().values()).noneMatch((value) -> value.contains(key) || value.contains(other));
			assertThat(span.getName()).doesNotContain(key).doesNotContain(other);
		});
	}

	private void assertOneIdempotencySpan(String outcome, String replayed, String completion) {
		List<SimpleSpan> spans = awaitRequestSpans();
		SimpleSpan http = spans.stream().filter((span) -> span.getName().startsWith("http ")).findFirst().orElseThrow();
		List<SimpleSpan> idempotency = spans.stream().filter((span) -> span.getName().equals(SPAN_NAME)).toList();
		assertThat(idempotency).hasSize(1);
		SimpleSpan span = idempotency.get(0);
		assertThat(span.getTags()).containsAllEntriesOf(
				Map.of("outcome", outcome, "policy", "metered", "replayed", replayed, "completion", completion));
		assertThat(span.getTraceId()).isEqualTo(http.getTraceId());
		assertThat(span.getParentId()).isEqualTo(http.getSpanId());
	}

	// the spans of one request, once its HTTP server span has ended; clears the tracer
	private List<SimpleSpan> awaitRequestSpans() {
		await().atMost(Duration.ofSeconds(10))
			.until(() -> this.tracer.getSpans()
				.stream()
				.anyMatch((span) -> span.getName().startsWith("http ") && span.getEndTimestamp().toEpochMilli() > 0));
		List<SimpleSpan> spans = List.copyOf(this.tracer.getSpans());
		this.tracer.getSpans().clear();
		this.finished.addAll(spans);
		assertThat(spans).allSatisfy((span) -> assertThat(span.getEndTimestamp().toEpochMilli()).isPositive());
		return spans;
	}

	/**
	 * A tracing bridge and a real Redis.
	 */
	@TestConfiguration(proxyBeanMethods = false)
	static class Tracing {

		@Bean
		SimpleTracer tracer() {
			return new SimpleTracer();
		}

		@Bean
		DefaultTracingObservationHandler tracingObservationHandler(SimpleTracer tracer) {
			return new DefaultTracingObservationHandler(tracer);
		}

		@Bean(destroyMethod = "destroy")
		LettuceConnectionFactory redisConnectionFactory() {
			return TestServers.redis().connectionFactory();
		}

	}

}
