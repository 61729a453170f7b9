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

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.engine.CompletionOutcome;
import dev.idempotency.core.engine.Decision;
import dev.idempotency.core.engine.IdempotencyEngine;
import dev.idempotency.core.engine.IdempotencyListener;
import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.InMemoryIdempotencyStore;
import dev.idempotency.spring.actuate.IdempotencyEndpoint;
import dev.idempotency.spring.actuate.IdempotencyHealthIndicator;
import dev.idempotency.spring.metrics.IdempotencyMetrics;
import dev.idempotency.spring.metrics.MeteredIdempotencyStore;
import dev.idempotency.spring.store.tiered.CircuitBreakerState;
import dev.idempotency.spring.store.tiered.TieredIdempotencyStore;
import dev.idempotency.spring.store.tiered.TieredStoreListener;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link IdempotencyMetricsAutoConfiguration},
 * {@link IdempotencyEndpointAutoConfiguration} and
 * {@link IdempotencyHealthContributorAutoConfiguration}.
 *
 * @author Idempotency contributors
 */
class IdempotencyActuatorAutoConfigurationTests {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(IdempotencyAutoConfiguration.class, IdempotencyMetricsAutoConfiguration.class,
					IdempotencyEndpointAutoConfiguration.class, IdempotencyHealthContributorAutoConfiguration.class));

	@Test
	void withoutMeterRegistryNoMetrics() {
		this.runner.run((context) -> {
			assertThat(context).doesNotHaveBean(IdempotencyMetrics.class);
			assertThat(context.getBean(IdempotencyEngine.class).store()).isInstanceOf(InMemoryIdempotencyStore.class);
		});
	}

	@Test
	void withoutMicrometerOnTheClassPathNoMetrics() {
		this.runner.withUserConfiguration(Registry.class)
			.withClassLoader(new FilteredClassLoader(MeterRegistry.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(IdempotencyMetrics.class));
	}

	@Test
	void withMeterRegistryTheEngineStoreIsMeteredAndTheStoreBeanIsNot() {
		this.runner.withUserConfiguration(Registry.class).run((context) -> {
			assertThat(context).hasSingleBean(IdempotencyMetrics.class);
			assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(InMemoryIdempotencyStore.class);
			IdempotencyStore engineStore = context.getBean(IdempotencyEngine.class).store();
			assertThat(engineStore).isInstanceOf(MeteredIdempotencyStore.class);
			assertThat(((MeteredIdempotencyStore) engineStore).getDelegate())
				.isSameAs(context.getBean(IdempotencyStore.class));
		});
	}

	@Test
	void userListenerAndMetricsBothHearTheEngine() {
		this.runner.withUserConfiguration(Registry.class, UserListener.class).run((context) -> {
			IdempotencyPolicy policy = IdempotencyPolicy.builder()
				.name("p")
				.lockTimeout(IdempotencyPolicy.MIN_LOCK_TIMEOUT)
				.build();
			IdempotencyKey key = IdempotencyKey.global("k");
			Decision decision = context.getBean(IdempotencyEngine.class)
				.begin(key, RequestFingerprint.of(new byte[32]), policy);
			assertThat(decision).isInstanceOf(Decision.Execute.class);
			// the key vanishes under the running execution: its next heartbeat is refused
			assertThat(context.getBean(IdempotencyStore.class).evict(key)).isTrue();
			UserListener user = context.getBean(UserListener.class);
			// the counter is registered by the heartbeat's thread, after the listener
			// heard
			// of the loss: until then the meter search throws, and is asked again
			await().atMost(Duration.ofSeconds(10)).ignoreExceptions().untilAsserted(() -> {
				assertThat(user.events).contains("ownership-lost");
				assertThat(context.getBean(MeterRegistry.class)
					.get(IdempotencyMetrics.FENCING_REJECTIONS)
					.tags("phase", "heartbeat", "policy", "p")
					.counter()
					.count()).isEqualTo(1);
			});
			((Decision.Execute) decision).execution().close();
			assertThat(user.events).containsExactly("decision:Execute", "ownership-lost", "completion:FENCED");
		});
	}

	@Test
	void tieredStoreListenerIsExtendedNotReplaced() {
		this.runner.withUserConfiguration(Registry.class, TieredStore.class).run((context) -> {
			TieredIdempotencyStore store = context.getBean(TieredIdempotencyStore.class);
			store.getListener().onBreakerStateChange(CircuitBreakerState.CLOSED, CircuitBreakerState.OPEN);
			assertThat(TieredStore.transitions).hasSize(1);
			assertThat(context.getBean(MeterRegistry.class)
				.get(IdempotencyMetrics.TIER_BREAKER_TRANSITIONS)
				.tags("from", "closed", "to", "open")
				.counter()
				.count()).isEqualTo(1);
			assertThat(context.getBean(MeterRegistry.class)
				.get(IdempotencyMetrics.TIER_BREAKER_STATE)
				.tag("state", "closed")
				.gauge()
				.value()).isEqualTo(1.0);
		});
	}

	@Test
	void endpointIsNotConfiguredUnlessExposed() {
		this.runner.run((context) -> assertThat(context).doesNotHaveBean(IdempotencyEndpoint.class));
	}

	@Test
	void endpointIsConfiguredWhenExposedAndUsesTheEngineStore() {
		this.runner.withUserConfiguration(Registry.class)
			.withPropertyValues("management.endpoints.web.exposure.include=idempotency")
			.run((context) -> {
				assertThat(context).hasSingleBean(IdempotencyEndpoint.class);
				assertThat(context.getBean(IdempotencyEndpoint.class).key("absent", null)).isNull();
				assertThat(context.getBean(IdempotencyEndpoint.class).evict("absent", "").evicted()).isFalse();
			});
	}

	@Test
	void endpointIsNotConfiguredWithoutActuator() {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=idempotency")
			.withClassLoader(new FilteredClassLoader(Endpoint.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(IdempotencyEndpoint.class));
	}

	@Test
	void healthIndicatorIsConfiguredByDefault() {
		this.runner.run((context) -> assertThat(context).hasBean("idempotencyHealthIndicator")
			.hasSingleBean(IdempotencyHealthIndicator.class));
	}

	@Test
	void healthIndicatorCanBeDisabled() {
		this.runner.withPropertyValues("management.health.idempotency.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(IdempotencyHealthIndicator.class));
	}

	@Test
	void healthIndicatorIsNotConfiguredWithoutHealthSupport() {
		this.runner.withClassLoader(new FilteredClassLoader(HealthIndicator.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(IdempotencyHealthIndicator.class));
	}

	@Test
	void nothingWithoutAStore() {
		new WebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(IdempotencyMetricsAutoConfiguration.class,
					IdempotencyEndpointAutoConfiguration.class, IdempotencyHealthContributorAutoConfiguration.class))
			.withPropertyValues("management.endpoints.web.exposure.include=idempotency")
			.run((context) -> assertThat(context).doesNotHaveBean(IdempotencyEndpoint.class)
				.doesNotHaveBean(IdempotencyHealthIndicator.class));
	}

	@Configuration(proxyBeanMethods = false)
	static class Registry {

		@Bean
		SimpleMeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserListener implements IdempotencyListener {

		final List<String> events = new CopyOnWriteArrayList<>();

		@Override
		public void onDecision(IdempotencyKey key, IdempotencyPolicy policy, Decision decision) {
			this.events.add("decision:" + decision.getClass().getSimpleName());
		}

		@Override
		public void onOwnershipLost(IdempotencyKey key, IdempotencyPolicy policy) {
			this.events.add("ownership-lost");
		}

		@Override
		public void onCompletion(IdempotencyKey key, IdempotencyPolicy policy, CompletionOutcome outcome) {
			this.events.add("completion:" + outcome);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class TieredStore {

		static final List<CircuitBreakerState> transitions = new ArrayList<>();

		@Bean
		TieredIdempotencyStore idempotencyStore() {
			TieredIdempotencyStore store = new TieredIdempotencyStore(new InMemoryIdempotencyStore(),
					new InMemoryIdempotencyStore());
			store.setListener(new TieredStoreListener() {

				@Override
				public void onBreakerStateChange(CircuitBreakerState from, CircuitBreakerState to) {
					transitions.add(to);
				}

			});
			return store;
		}

	}

}
