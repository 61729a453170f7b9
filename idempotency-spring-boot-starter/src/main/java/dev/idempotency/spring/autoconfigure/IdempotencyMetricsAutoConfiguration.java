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

import java.util.List;

import dev.idempotency.spring.metrics.IdempotencyMetrics;
import dev.idempotency.spring.metrics.IdempotencyRequestCounter;
import dev.idempotency.spring.metrics.MeteredIdempotencyStore;
import dev.idempotency.spring.store.tiered.TieredIdempotencyStore;
import dev.idempotency.spring.store.tiered.TieredStoreListener;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the Micrometer meters that no observation provides, when a
 * {@link MeterRegistry} bean exists:
 * <ul>
 * <li>an {@link IdempotencyRequestCounter} bean, an observation handler that counts each
 * request's {@code idempotency.request} observation by outcome;
 * <li>an {@link IdempotencyMetrics} bean, told when a write is refused because the key
 * was taken over (as a listener bean, it joins any listener beans of the application's
 * own);
 * <li>the auto-configured engine's store wrapped in a {@link MeteredIdempotencyStore}
 * (the store bean itself is left as it is);
 * <li>each {@link TieredIdempotencyStore} bean's listener extended (not replaced) with
 * the metrics, and its circuit breaker state exposed as a gauge.
 * </ul>
 * Requests are measured once, by the filter's {@code idempotency.request} observation:
 * Spring Boot's metrics auto-configuration registers Micrometer's
 * {@code DefaultMeterObservationHandler}, which turns it into the
 * {@code idempotency.request} timer and the {@code idempotency.request.active} long task
 * timer, tagged with the observation's low-cardinality keys, and Spring Boot's
 * observation auto-configuration registers the {@link IdempotencyRequestCounter} bean
 * with the observation registry.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class, afterName = {
		"org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
		"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
		"org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration" })
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean(MeterRegistry.class)
public final class IdempotencyMetricsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	IdempotencyMetrics idempotencyMetrics(MeterRegistry registry) {
		return new IdempotencyMetrics(registry);
	}

	@Bean
	@ConditionalOnMissingBean
	IdempotencyRequestCounter idempotencyRequestCounter(MeterRegistry registry) {
		return new IdempotencyRequestCounter(registry);
	}

	@Bean
	EngineStoreDecorator idempotencyMeteredStore(MeterRegistry registry) {
		return (store) -> new MeteredIdempotencyStore(store, registry, MeteredIdempotencyStore.storeName(store));
	}

	@Bean
	static SmartInitializingSingleton idempotencyTieredStoreMetrics(ObjectProvider<TieredIdempotencyStore> stores,
			ObjectProvider<IdempotencyMetrics> metrics) {
		return () -> {
			IdempotencyMetrics listener = metrics.getIfUnique();
			if (listener == null) {
				return;
			}
			stores.orderedStream().forEach((store) -> {
				TieredStoreListener current = store.getListener();
				if (current == TieredStoreListener.NONE) {
					store.setListener(listener);
				}
				else if (current != listener) {
					store.setListener(CompositeListener.of(TieredStoreListener.class, List.of(current, listener)));
				}
				listener.bindTo(store);
			});
		};
	}

}
