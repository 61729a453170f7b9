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
import org.springframework.boot.webclient.WebClientCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpMethod;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Auto-configuration of the client side: an {@link IdempotentRetryInterceptor} and a
 * {@link RestClientCustomizer} that adds it to every auto-configured
 * {@link RestClient.Builder}; with WebFlux, an {@link IdempotentRetryFilter} and a
 * {@link WebClientCustomizer} that adds it to every auto-configured
 * {@link WebClient.Builder}. Both follow the same {@code idempotency.client.*}
 * properties. Off unless {@code idempotency.client.enabled=true}.
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

	/**
	 * Name of the {@link WebClientCustomizer} bean.
	 */
	static final String WEB_CLIENT_CUSTOMIZER_BEAN_NAME = "idempotentRetryWebClientCustomizer";

	/**
	 * Order of the two customizers: before the application's own (unordered ones
	 * included), so that the interceptor and the filter are the outermost of the
	 * customizers' and every interceptor or filter that another customizer adds runs on
	 * every attempt (an OAuth2 filter puts a fresh token on each).
	 */
	public static final int CUSTOMIZER_ORDER = Ordered.HIGHEST_PRECEDENCE + 100;

	@Bean
	@ConditionalOnMissingBean
	IdempotentRetryInterceptor idempotentRetryInterceptor(IdempotencyClientProperties properties) {
		IdempotentRetryInterceptor interceptor = new IdempotentRetryInterceptor();
		configure(interceptor.rules(), properties);
		return interceptor;
	}

	private static void configure(RetryRules rules, IdempotencyClientProperties properties) {
		PropertyMapper map = PropertyMapper.get();
		map.from(properties::getKeyHeader).to(rules::setKeyHeader);
		map.from(properties::getMethods).as(IdempotencyClientAutoConfiguration::httpMethods).to(rules::setMethods);
		map.from(properties::getMaxAttempts).to(rules::setMaxAttempts);
		map.from(properties::getInitialBackoff).to(rules::setInitialBackoff);
		map.from(properties::getMaxBackoff).to(rules::setMaxBackoff);
		map.from(properties::getMaxElapsed).to(rules::setMaxElapsed);
		map.from(properties::getRetryStatuses)
			.as(IdempotencyClientAutoConfiguration::statuses)
			.to(rules::setRetryStatuses);
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
		@Order(CUSTOMIZER_ORDER)
		RestClientCustomizer idempotentRetryRestClientCustomizer(IdempotentRetryInterceptor interceptor) {
			return (builder) -> builder.requestInterceptor(interceptor);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(WebClient.class)
	static class WebClientFilterConfiguration {

		@Bean
		@ConditionalOnMissingBean
		IdempotentRetryFilter idempotentRetryFilter(IdempotencyClientProperties properties) {
			IdempotentRetryFilter filter = new IdempotentRetryFilter();
			configure(filter.rules(), properties);
			return filter;
		}

		@Configuration(proxyBeanMethods = false)
		@ConditionalOnClass(WebClientCustomizer.class)
		static class WebClientCustomizerConfiguration {

			@Bean(name = WEB_CLIENT_CUSTOMIZER_BEAN_NAME)
			@ConditionalOnMissingBean(name = WEB_CLIENT_CUSTOMIZER_BEAN_NAME)
			@Order(CUSTOMIZER_ORDER)
			WebClientCustomizer idempotentRetryWebClientCustomizer(IdempotentRetryFilter filter) {
				return (builder) -> builder.filter(filter);
			}

		}

	}

}
