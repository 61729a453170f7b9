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

package dev.idempotency.spring.client;

import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Set;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.PropertyMapper;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpMethod;
import org.springframework.web.client.RestClient;

/**
 * Auto-configuration of the client side: an {@link IdempotentRetryInterceptor} and a
 * {@link RestClientCustomizer} that adds it to every auto-configured
 * {@link RestClient.Builder}. Off unless {@code idempotency.client.enabled=true}.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
@AutoConfiguration
@ConditionalOnClass(RestClient.class)
@ConditionalOnBooleanProperty("idempotency.client.enabled")
@EnableConfigurationProperties(IdempotencyClientProperties.class)
public final class IdempotencyClientAutoConfiguration {

	/**
	 * Name of the {@link RestClientCustomizer} bean.
	 */
	static final String CUSTOMIZER_BEAN_NAME = "idempotentRetryRestClientCustomizer";

	@Bean
	@ConditionalOnMissingBean
	IdempotentRetryInterceptor idempotentRetryInterceptor(IdempotencyClientProperties properties) {
		IdempotentRetryInterceptor interceptor = new IdempotentRetryInterceptor();
		PropertyMapper map = PropertyMapper.get();
		map.from(properties::getKeyHeader).to(interceptor::setKeyHeader);
		map.from(properties::getMethods)
			.as(IdempotencyClientAutoConfiguration::httpMethods)
			.to(interceptor::setMethods);
		map.from(properties::getMaxAttempts).to(interceptor::setMaxAttempts);
		map.from(properties::getInitialBackoff).to(interceptor::setInitialBackoff);
		map.from(properties::getMaxBackoff).to(interceptor::setMaxBackoff);
		map.from(properties::getMaxElapsed).to(interceptor::setMaxElapsed);
		map.from(properties::getRetryStatuses)
			.as(IdempotencyClientAutoConfiguration::statuses)
			.to(interceptor::setRetryStatuses);
		return interceptor;
	}

	private static Set<HttpMethod> httpMethods(String[] names) {
		Set<HttpMethod> methods = new LinkedHashSet<>();
		for (String name : names) {
			methods.add(HttpMethod.valueOf(name.trim().toUpperCase(Locale.ROOT)));
		}
		return methods;
	}

	private static Set<Integer> statuses(int[] statuses) {
		Set<Integer> set = new LinkedHashSet<>();
		for (int status : statuses) {
			set.add(status);
		}
		return set;
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(RestClientCustomizer.class)
	static class RestClientCustomizerConfiguration {

		@Bean(name = CUSTOMIZER_BEAN_NAME)
		@ConditionalOnMissingBean(name = CUSTOMIZER_BEAN_NAME)
		RestClientCustomizer idempotentRetryRestClientCustomizer(IdempotentRetryInterceptor interceptor) {
			return (builder) -> builder.requestInterceptor(interceptor);
		}

	}

}
