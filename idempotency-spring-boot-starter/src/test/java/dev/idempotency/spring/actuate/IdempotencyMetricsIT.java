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

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.idempotency.spring.metrics.IdempotencyMetrics;
import dev.idempotency.spring.metrics.IdempotencyRequestCounter;
import dev.idempotency.spring.metrics.MeteredIdempotencyStore;
import dev.idempotency.spring.observation.DefaultIdempotencyObservationConvention;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Timer;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The metrics of a scripted mix of requests, counted exactly, over the tiered store on
 * real Redis and PostgreSQL: requests through the {@code idempotency.request} timer that
 * Spring Boot's meter observation handler makes of the filter's observation, store
 * operations through their own timer.
 *
 * @author Idempotency contributors
 */
@Import(AbstractOpsIT.RealServers.class)
// a context of its own: the test counts every request its registry has seen, and a class
// with the same configuration (IdempotencyEndpointExposureIT) that ran before it in the
// same JVM would otherwise share its context, and its requests, with it
@TestPropertySource(properties = "idempotency.test.context=metrics")
class IdempotencyMetricsIT extends AbstractOpsIT {

	private static final String REQUEST = DefaultIdempotencyObservationConvention.DEFAULT_NAME;

	@Autowired
	MeterRegistry registry;

	@Test
	void countsEveryOutcomeAndTimesStoreOperations() throws Exception {
		String first = newKey();
		String slow = newKey();
		assertThat(post("/ops/pay", first, "a").statusCode()).isEqualTo(201);
		assertThat(post("/ops/pay", first, "a").statusCode()).isEqualTo(201);
		assertThat(post("/ops/pay", first, "b").statusCode()).isEqualTo(422);
		assertThat(post("/ops/pay", null, "a").statusCode()).isEqualTo(400);
		assertThat(post("/ops/pay", "two words", "a").statusCode()).isEqualTo(400);
		assertThat(post("/ops/pay", newKey(), "x".repeat(2048)).statusCode()).isEqualTo(413);
		this.controller.entered = new CountDownLatch(1);
		this.controller.gate = new CountDownLatch(1);
		CompletableFuture<HttpResponse<String>> running = CompletableFuture.supplyAsync(() -> {
			try {
				return post("/ops/slow", slow, "s");
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		});
		assertThat(this.controller.entered.await(10, TimeUnit.SECONDS)).isTrue();
		assertThat(post("/ops/slow", slow, "s").statusCode()).isEqualTo(409);
		this.controller.gate.countDown();
		assertThat(running.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);

		// a request's observation ends after its response is written: wait for the last
		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(requests()).isEqualTo(8));
		assertThat(requests("executed", "stored")).isEqualTo(2);
		assertThat(requests("replayed", "none")).isEqualTo(1);
		assertThat(requests("mismatch", "none")).isEqualTo(1);
		assertThat(requests("in_progress", "none")).isEqualTo(1);
		assertThat(requests("missing_key", "none")).isEqualTo(1);
		assertThat(requests("invalid_key", "none")).isEqualTo(1);
		assertThat(requests("too_large", "none")).isEqualTo(1);
		assertThat(this.registry.find(REQUEST).tag("outcome", "store_unavailable").timers()).isEmpty();
		assertThat(this.registry.find(REQUEST).tag("outcome", "fail_open").timers()).isEmpty();
		assertThat(this.registry.find(REQUEST).tag("outcome", "executed").timers())
			.allSatisfy((timer) -> assertThat(timer.getId().getTag("completion")).isEqualTo("stored"));
		assertThat(this.registry.get(REQUEST).tags("outcome", "executed").timer().totalTime(TimeUnit.NANOSECONDS))
			.isPositive();
		assertThat(this.registry.get(REQUEST + ".active").longTaskTimer().activeTasks()).isZero();
		// the counter by outcome, fed by the same observations (told after the timer)
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(this.registry.find(IdempotencyRequestCounter.REQUESTS)
				.counters()
				.stream()
				.mapToDouble(Counter::count)
				.sum()).isEqualTo(8));
		assertThat(this.registry.get(IdempotencyRequestCounter.REQUESTS)
			.tags("outcome", "executed", "policy", "metered")
			.counter()
			.count()).isEqualTo(2);
		assertThat(this.registry.get(IdempotencyRequestCounter.REQUESTS)
			.tags("outcome", "in_progress", "policy", "metered")
			.counter()
			.count()).isEqualTo(1);
		assertThat(this.registry.find("idempotency.completions").meters()).isEmpty();
		assertThat(this.registry.find(IdempotencyMetrics.FENCING_REJECTIONS).counters())
			.allSatisfy((counter) -> assertThat(counter.count()).isZero());

		assertThat(storeOperations("acquire", "acquired")).isEqualTo(2);
		assertThat(storeOperations("acquire", "replay")).isEqualTo(1);
		assertThat(storeOperations("acquire", "mismatch")).isEqualTo(1);
		assertThat(storeOperations("acquire", "in_progress")).isEqualTo(1);
		assertThat(storeOperations("acquire", "error")).isZero();
		assertThat(storeOperations("complete", "ok")).isEqualTo(2);
		assertThat(storeOperations("complete", "fenced")).isZero();
		assertThat(this.registry.get(MeteredIdempotencyStore.OPERATIONS)
			.tags("store", "tiered", "operation", "acquire", "result", "acquired")
			.timer()
			.totalTime(TimeUnit.NANOSECONDS)).isPositive();

		assertThat(this.registry.get(IdempotencyMetrics.TIER_BREAKER_STATE).tag("state", "closed").gauge().value())
			.isEqualTo(1.0);
		assertThat(this.registry.get(IdempotencyMetrics.TIER_BREAKER_STATE).tag("state", "open").gauge().value())
			.isZero();
		assertThat(this.registry.find(IdempotencyMetrics.TIER_FALLBACKS).counters())
			.allSatisfy((counter) -> assertThat(counter.count()).isZero());

		List<String> keys = List.of(first, slow);
		for (Meter meter : this.registry.getMeters()) {
			if (meter.getId().getName().startsWith("idempotency.")) {
				assertThat(meter.getId().getTags()).extracting(Tag::getValue).doesNotContainAnyElementsOf(keys);
			}
		}
	}

	private long requests() {
		return this.registry.find(REQUEST).timers().stream().mapToLong(Timer::count).sum();
	}

	private long requests(String outcome, String completion) {
		return this.registry.get(REQUEST)
			.tags("outcome", outcome, "policy", "metered", "completion", completion)
			.timers()
			.stream()
			.mapToLong(Timer::count)
			.sum();
	}

	private long storeOperations(String operation, String result) {
		return this.registry.get(MeteredIdempotencyStore.OPERATIONS)
			.tags("store", "tiered", "operation", operation, "result", result)
			.timer()
			.count();
	}

}
