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

import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.spring.actuate.IdempotencyHealthIndicator;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the {@link IdempotencyHealthIndicator}, contributed as
 * {@code idempotency}, when Spring Boot's health support is on the class path, an
 * {@link IdempotencyStore} bean exists and {@code management.health.idempotency.enabled}
 * is not {@code false}. It checks the store bean directly, so that health checks do not
 * show in the store operation metrics.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class,
		afterName = "org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration")
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(IdempotencyStore.class)
@ConditionalOnEnabledHealthIndicator("idempotency")
public final class IdempotencyHealthContributorAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "idempotencyHealthIndicator")
	IdempotencyHealthIndicator idempotencyHealthIndicator(IdempotencyStore store) {
		return new IdempotencyHealthIndicator(store);
	}

}
