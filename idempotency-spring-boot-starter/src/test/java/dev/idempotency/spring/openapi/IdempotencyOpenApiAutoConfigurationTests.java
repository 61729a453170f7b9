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

import java.util.Arrays;

import dev.idempotency.spring.NamedPolicies;
import dev.idempotency.spring.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.spring.web.HandlerMappingEndpointResolver;
import dev.idempotency.spring.web.IdempotencyFilter;
import dev.idempotency.spring.web.IdempotentEndpointResolver;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link IdempotencyOpenApiAutoConfiguration}.
 *
 * @author Idempotency contributors
 */
class IdempotencyOpenApiAutoConfigurationTests {

	private final WebApplicationContextRunner contextRunner = new WebApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(IdempotencyAutoConfiguration.class, IdempotencyOpenApiAutoConfiguration.class))
		.withPropertyValues("idempotency.store.type=memory");

	@Test
	void providesCustomizerWithSpringdoc() {
		this.contextRunner.run((context) -> assertThat(context).hasNotFailed()
			.hasSingleBean(IdempotencyOperationCustomizer.class)
			.hasSingleBean(IdempotencyFilter.class));
	}

	@Test
	void backsOffWithoutSpringdocAndChangesNothingElse() {
		this.contextRunner
			.run((withSpringdoc) -> this.contextRunner.withClassLoader(new FilteredClassLoader("org.springdoc"))
				.run((context) -> {
					assertThat(context).hasNotFailed().doesNotHaveBean(IdempotencyOperationCustomizer.class);
					assertThat(context.getBeanDefinitionNames())
						.containsExactlyInAnyOrder(withoutCustomizer(withSpringdoc.getBeanDefinitionNames()));
				}));
	}

	@Test
	void backsOffWhenIdempotencyIsDisabled() {
		this.contextRunner.withPropertyValues("idempotency.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(IdempotencyOperationCustomizer.class));
	}

	@Test
	void backsOffWithCustomEndpointResolver() {
		this.contextRunner.withUserConfiguration(CustomResolverConfiguration.class)
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(HandlerMappingEndpointResolver.class)
				.doesNotHaveBean(IdempotencyOperationCustomizer.class));
	}

	@Test
	void backsOffWhenUserDefinesCustomizer() {
		this.contextRunner.withUserConfiguration(CustomCustomizerConfiguration.class)
			.run((context) -> assertThat(context).hasSingleBean(IdempotencyOperationCustomizer.class)
				.hasBean("myCustomizer"));
	}

	@Test
	void isListedInAutoConfigurationImports() {
		assertThat(ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader()).getCandidates())
			.contains(IdempotencyOpenApiAutoConfiguration.class.getName(),
					IdempotencyAutoConfiguration.class.getName());
	}

	private static String[] withoutCustomizer(String[] names) {
		return Arrays.stream(names)
			.filter((name) -> !name.equals("idempotencyOperationCustomizer")
					&& !name.equals(IdempotencyOpenApiAutoConfiguration.class.getName()))
			.toArray(String[]::new);
	}

	@Configuration(proxyBeanMethods = false)
	static class CustomResolverConfiguration {

		@Bean
		IdempotentEndpointResolver customResolver() {
			return (request) -> null;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class CustomCustomizerConfiguration {

		@Bean
		IdempotencyOperationCustomizer myCustomizer(HandlerMappingEndpointResolver resolver, NamedPolicies policies) {
			return new IdempotencyOperationCustomizer(resolver, policies, "K", "urn:", true);
		}

	}

}
