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

import dev.idempotency.spring.NamedPolicies;
import dev.idempotency.spring.web.EndpointResolutionInterceptor;
import dev.idempotency.spring.web.HandlerMappingEndpointResolver;
import dev.idempotency.spring.web.IdempotencyProblemRenderer;
import dev.idempotency.spring.web.IdempotentEndpointResolver;
import org.jspecify.annotations.Nullable;

import org.springframework.core.Ordered;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * Registers an {@link EndpointResolutionInterceptor} ahead of every other interceptor,
 * when the filter's resolver is a {@link HandlerMappingEndpointResolver}: a resolver of
 * the application's own decides by rules this check does not know.
 *
 * @author Idempotency contributors
 */
final class EndpointResolutionCheckConfigurer implements WebMvcConfigurer {

	private final IdempotentEndpointResolver resolver;

	private final IdempotencyProperties properties;

	private final @Nullable IdempotencyProblemRenderer problemRenderer;

	private final @Nullable NamedPolicies policies;

	EndpointResolutionCheckConfigurer(IdempotentEndpointResolver resolver, IdempotencyProperties properties,
			@Nullable IdempotencyProblemRenderer problemRenderer, @Nullable NamedPolicies policies) {
		this.resolver = resolver;
		this.properties = properties;
		this.problemRenderer = problemRenderer;
		this.policies = policies;
	}

	@Override
	public void addInterceptors(InterceptorRegistry registry) {
		if (this.resolver instanceof HandlerMappingEndpointResolver handlerMappingResolver) {
			EndpointResolutionInterceptor interceptor = new EndpointResolutionInterceptor(handlerMappingResolver);
			interceptor.setKeyHeader(this.properties.getKeyHeader());
			interceptor.setPolicies(this.policies);
			interceptor.setProblemTypeBase(this.properties.getProblemTypeBase());
			interceptor.setProblemRenderer(this.problemRenderer);
			registry.addInterceptor(interceptor).order(Ordered.HIGHEST_PRECEDENCE);
		}
	}

}
