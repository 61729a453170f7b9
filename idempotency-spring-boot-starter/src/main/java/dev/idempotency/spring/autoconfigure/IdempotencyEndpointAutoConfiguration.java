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

import dev.idempotency.core.engine.IdempotencyEngine;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.spring.actuate.IdempotencyEndpoint;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the {@link IdempotencyEndpoint} ({@code idempotency}), when
 * Actuator is on the class path, an {@link IdempotencyStore} bean exists and the endpoint
 * is available (enabled and exposed). It reads and evicts through the engine's store when
 * there is an engine (so that its operations are timed with the others), else through the
 * store bean.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
@AutoConfiguration(after = { IdempotencyAutoConfiguration.class, IdempotencyMetricsAutoConfiguration.class })
@ConditionalOnClass(Endpoint.class)
@ConditionalOnBean(IdempotencyStore.class)
@ConditionalOnAvailableEndpoint(IdempotencyEndpoint.class)
public final class IdempotencyEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	IdempotencyEndpoint idempotencyEndpoint(IdempotencyStore store, ObjectProvider<IdempotencyEngine> engine) {
		IdempotencyEngine unique = engine.getIfUnique();
		return new IdempotencyEndpoint((unique != null) ? unique.store() : store);
	}

}
