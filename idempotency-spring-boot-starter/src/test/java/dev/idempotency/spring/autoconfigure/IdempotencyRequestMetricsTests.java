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

package dev.idempotency.spring.autoconfigure;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.IdempotencyStoreException;
import dev.idempotency.core.store.InMemoryIdempotencyStore;
import dev.idempotency.spring.metrics.IdempotencyMetrics;
import dev.idempotency.spring.metrics.IdempotencyRequestCounter;
import dev.idempotency.spring.web.IdempotencyFilter;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The request metrics as an application gets them: Spring Boot's observation and metrics
 * auto-configurations turn the filter's {@code idempotency.request} observation into the
 * {@code idempotency.request} timer, in a {@code SimpleMeterRegistry}.
 *
 * @author Idempotency contributors
 */
class IdempotencyRequestMetricsTests {

	private static final String TIMER = "idempotency.request";

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(ObservationAutoConfiguration.class, MetricsAutoConfiguration.class,
				SimpleMetricsExportAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class,
				IdempotencyAutoConfiguration.class, IdempotencyMetricsAutoConfiguration.class))
		.withUserConfiguration(FlakyStoreConfiguration.class)
		.withPropertyValues("idempotency.endpoints[0].path=/pay", "idempotency.endpoints[0].policy=payments",
				"idempotency.endpoints[1].path=/open", "idempotency.endpoints[1].policy=open",
				"idempotency.policies.payments.max-request-body=1KB",
				"idempotency.policies.open.on-store-failure=fail-open");

	@Test
	void eachRequestIsTimedOnceUnderItsOutcomeAndCompletion() {
		this.runner.run((context) -> {
			IdempotencyFilter filter = context.getBean(IdempotencyFilter.class);
			IdempotencyStore store = context.getBean(IdempotencyStore.class);
			assertThat(post(filter, "/pay", "k-1", "a", created())).isEqualTo(201);
			assertThat(post(filter, "/pay", "k-1", "a", created())).isEqualTo(201);
			assertThat(post(filter, "/pay", "k-1", "b", created())).isEqualTo(422);
			assertThat(post(filter, "/pay", null, "a", created())).isEqualTo(400);
			assertThat(post(filter, "/pay", "two words", "a", created())).isEqualTo(400);
			assertThat(post(filter, "/pay", "k-2", "x".repeat(2048), created())).isEqualTo(413);
			// a duplicate that arrives while the first request's handler runs
			int[] duplicate = new int[1];
			assertThat(post(filter, "/pay", "k-3", "a", (request, response) -> {
				duplicate[0] = post(filter, "/pay", "k-3", "a", created());
				created().handle(request, response);
			})).isEqualTo(201);
			assertThat(duplicate[0]).isEqualTo(409);
			assertThat(post(filter, "/pay", "k-4", "a", status(503))).isEqualTo(503);
			// the key is evicted while the handler runs: the completion is fenced
			assertThat(post(filter, "/pay", "k-5", "a", (request, response) -> {
				store.evict((IdempotencyKey) request.getAttribute(IdempotencyFilter.KEY_ATTRIBUTE));
				created().handle(request, response);
			})).isEqualTo(201);
			assertThat(post(filter, "/pay", "down-1", "a", created())).isEqualTo(503);
			assertThat(post(filter, "/open", "down-2", "a", status(200))).isEqualTo(200);
			assertThatIllegalStateException().isThrownBy(() -> post(filter, "/pay", "k-6", "a", (request, response) -> {
				throw new IllegalStateException("boom");
			}));

			MeterRegistry registry = context.getBean(MeterRegistry.class);
			assertThat(count(registry, "executed", "payments", "stored")).isEqualTo(2);
			assertThat(count(registry, "executed", "payments", "released")).isEqualTo(2);
			assertThat(count(registry, "executed", "payments", "fenced")).isEqualTo(1);
			assertThat(count(registry, "replayed", "payments", "none")).isEqualTo(1);
			assertThat(count(registry, "mismatch", "payments", "none")).isEqualTo(1);
			assertThat(count(registry, "in_progress", "payments", "none")).isEqualTo(1);
			assertThat(count(registry, "missing_key", "payments", "none")).isEqualTo(1);
			assertThat(count(registry, "invalid_key", "payments", "none")).isEqualTo(1);
			assertThat(count(registry, "too_large", "payments", "none")).isEqualTo(1);
			assertThat(count(registry, "store_unavailable", "payments", "none")).isEqualTo(1);
			assertThat(count(registry, "fail_open", "open", "none")).isEqualTo(1);
			assertThat(total(registry.get(TIMER).timers())).isEqualTo(13);
			assertThat(registry.get(TIMER).tags("replayed", "true").timer().count()).isEqualTo(1);
			assertThat(registry.get(TIMER)
				.tags("completion", "released", "error", "IllegalStateException")
				.timer()
				.count()).isEqualTo(1);
			assertThat(registry.get(TIMER + ".active").longTaskTimers()).isNotEmpty()
				.allSatisfy((active) -> assertThat(active.activeTasks()).isZero());
			assertThat(registry.get(TIMER + ".active")
				.tags("outcome", "unknown", "policy", "payments", "replayed", "false", "completion", "none")
				.longTaskTimer()
				.activeTasks()).isZero();
			assertThat(registry.get(TIMER).timers())
				.allSatisfy((timer) -> assertThat(timer.getId().getTags()).extracting((tag) -> tag.getKey())
					.containsExactlyInAnyOrder("outcome", "policy", "replayed", "completion", "error"));
			// the idempotency.requests counter is the same observation, counted by
			// outcome: every request that reached an outcome, the one that threw included
			assertThat(requests(registry, "executed", "payments")).isEqualTo(5);
			assertThat(requests(registry, "replayed", "payments")).isEqualTo(1);
			assertThat(requests(registry, "mismatch", "payments")).isEqualTo(1);
			assertThat(requests(registry, "in_progress", "payments")).isEqualTo(1);
			assertThat(requests(registry, "missing_key", "payments")).isEqualTo(1);
			assertThat(requests(registry, "invalid_key", "payments")).isEqualTo(1);
			assertThat(requests(registry, "too_large", "payments")).isEqualTo(1);
			assertThat(requests(registry, "store_unavailable", "payments")).isEqualTo(1);
			assertThat(requests(registry, "fail_open", "open")).isEqualTo(1);
			assertThat(registry.get(IdempotencyRequestCounter.REQUESTS).counters())
				.allSatisfy((counter) -> assertThat(counter.getId().getTags()).extracting((tag) -> tag.getKey())
					.containsExactlyInAnyOrder("outcome", "policy"));
			assertThat(registry.get(IdempotencyMetrics.FENCING_REJECTIONS)
				.tags("phase", "completion", "policy", "payments")
				.counter()
				.count()).isEqualTo(1);
		});
	}

	@Test
	void requestsAreCountedOnlyFromTheObservation() {
		this.runner.run((context) -> {
			IdempotencyFilter filter = context.getBean(IdempotencyFilter.class);
			assertThat(post(filter, "/pay", "k-1", "a", created())).isEqualTo(201);
			assertThat(post(filter, "/pay", "k-1", "a", created())).isEqualTo(201);
			assertThat(post(filter, "/pay", null, "a", created())).isEqualTo(400);
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			assertThat(registry.getMeters()).extracting((meter) -> meter.getId().getName())
				.filteredOn((name) -> name.startsWith("idempotency."))
				.doesNotContain("idempotency.completions")
				.allMatch((name) -> name.equals(TIMER) || name.equals(TIMER + ".active")
						|| name.equals(IdempotencyRequestCounter.REQUESTS) || name.startsWith("idempotency.store.")
						|| name.equals(IdempotencyMetrics.FENCING_REJECTIONS) || name.startsWith("idempotency.tier."));
			assertThat(total(registry.get(IdempotencyRequestCounter.REQUESTS).counters()))
				.isEqualTo(total(registry.get(TIMER).timers()))
				.isEqualTo(3);
			assertThat(registry.find(IdempotencyMetrics.FENCING_REJECTIONS).counters()).isEmpty();
		});
	}

	@Test
	void switchingTheObservationOffSwitchesTheRequestMetricsOff() {
		this.runner.withPropertyValues("management.observations.enable.idempotency=false").run((context) -> {
			IdempotencyFilter filter = context.getBean(IdempotencyFilter.class);
			assertThat(post(filter, "/pay", "k-1", "a", created())).isEqualTo(201);
			assertThat(post(filter, "/pay", "k-1", "a", created())).isEqualTo(201);
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			assertThat(registry.find(TIMER).meters()).isEmpty();
			assertThat(registry.find(TIMER + ".active").meters()).isEmpty();
			assertThat(registry.find(IdempotencyRequestCounter.REQUESTS).meters()).isEmpty();
			assertThat(total(registry.get("idempotency.store.operations").tags("operation", "acquire").timers()))
				.isEqualTo(2);
		});
	}

	@Test
	void withoutObservationsThereAreNoRequestMetrics() {
		new WebApplicationContextRunner()
			.withConfiguration(
					AutoConfigurations.of(MetricsAutoConfiguration.class, SimpleMetricsExportAutoConfiguration.class,
							IdempotencyAutoConfiguration.class, IdempotencyMetricsAutoConfiguration.class))
			.withPropertyValues("idempotency.endpoints[0].path=/pay")
			.run((context) -> {
				assertThat(post(context.getBean(IdempotencyFilter.class), "/pay", "k-1", "a", created()))
					.isEqualTo(201);
				assertThat(context.getBean(MeterRegistry.class).find(TIMER).meters()).isEmpty();
				assertThat(context.getBean(MeterRegistry.class).find(IdempotencyRequestCounter.REQUESTS).meters())
					.isEmpty();
				assertThat(context).hasSingleBean(IdempotencyMetrics.class);
			});
	}

	private static long count(MeterRegistry registry, String outcome, String policy, String completion) {
		return total(registry.get(TIMER).tags("outcome", outcome, "policy", policy, "completion", completion).timers());
	}

	private static long total(Collection<? extends Meter> meters) {
		return meters.stream()
			.mapToLong((meter) -> (meter instanceof Timer timer) ? timer.count() : (long) ((Counter) meter).count())
			.sum();
	}

	private static long requests(MeterRegistry registry, String outcome, String policy) {
		return (long) registry.get(IdempotencyRequestCounter.REQUESTS)
			.tags("outcome", outcome, "policy", policy)
			.counter()
			.count();
	}

	private static int post(IdempotencyFilter filter, String path, @Nullable String key, String body, Handler handler)
			throws ServletException, IOException {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", path);
		if (key != null) {
			request.addHeader("Idempotency-Key", key);
		}
		request.setContentType("text/plain");
		request.setContent(body.getBytes(StandardCharsets.UTF_8));
		MockHttpServletResponse response = new MockHttpServletResponse();
		filter.doFilter(request, response, new MockFilterChain(new HttpServlet() {

			@Override
			protected void service(HttpServletRequest req, HttpServletResponse res)
					throws ServletException, IOException {
				handler.handle(req, res);
			}

		}));
		return response.getStatus();
	}

	private static Handler created() {
		return status(201);
	}

	private static Handler status(int status) {
		return (request, response) -> {
			response.setStatus(status);
			response.getOutputStream().write("done".getBytes(StandardCharsets.UTF_8));
		};
	}

	@FunctionalInterface
	private interface Handler {

		void handle(HttpServletRequest request, HttpServletResponse response) throws ServletException, IOException;

	}

	@Configuration(proxyBeanMethods = false)
	static class FlakyStoreConfiguration {

		// keys starting with "down-" find the store unavailable
		@Bean
		IdempotencyStore idempotencyStore() {
			return new InMemoryIdempotencyStore() {

				@Override
				public AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
						Duration lease, Duration ttl) {
					if (key.key().startsWith("down-")) {
						throw new IdempotencyStoreException("simulated outage");
					}
					return super.acquire(key, fingerprint, token, lease, ttl);
				}

			};
		}

	}

}
