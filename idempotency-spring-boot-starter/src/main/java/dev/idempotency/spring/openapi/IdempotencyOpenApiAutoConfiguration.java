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

package dev.idempotency.spring.openapi;

import dev.idempotency.spring.NamedPolicies;
import dev.idempotency.spring.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.spring.autoconfigure.IdempotencyProperties;
import dev.idempotency.spring.web.HandlerMappingEndpointResolver;
import org.springdoc.core.customizers.OperationCustomizer;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the OpenAPI documentation of idempotent endpoints: an
 * {@link IdempotencyOperationCustomizer} when springdoc-openapi is on the class path and
 * the starter's own {@link HandlerMappingEndpointResolver} decides which endpoints are
 * idempotent (an application with its own resolver documents its endpoints itself). Off
 * when {@code idempotency.enabled=false}, since the filter does not run then.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class)
@ConditionalOnClass(OperationCustomizer.class)
@ConditionalOnBooleanProperty(name = "idempotency.enabled", matchIfMissing = true)
@ConditionalOnBean({ HandlerMappingEndpointResolver.class, NamedPolicies.class })
public final class IdempotencyOpenApiAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	IdempotencyOperationCustomizer idempotencyOperationCustomizer(HandlerMappingEndpointResolver resolver,
			NamedPolicies policies, IdempotencyProperties properties) {
		return new IdempotencyOperationCustomizer(resolver, policies, properties.getKeyHeader(),
				properties.getProblemTypeBase(), properties.isExpiresHeader());
	}

}
