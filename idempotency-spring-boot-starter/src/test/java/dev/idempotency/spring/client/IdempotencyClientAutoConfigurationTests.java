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

import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.idempotency.spring.client.RetryTestServer.Received;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.restclient.RestClientCustomizer;
import org.springframework.boot.restclient.autoconfigure.RestClientAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.webclient.WebClientCustomizer;
import org.springframework.boot.webclient.autoconfigure.WebClientAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.client.RestClient;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link IdempotencyClientAutoConfiguration}.
 *
 * @author Idempotency contributors
 */
class IdempotencyClientAutoConfigurationTests {

	private static final String CUSTOMIZER = IdempotencyClientAutoConfiguration.CUSTOMIZER_BEAN_NAME;

	private static final String WEB_CLIENT_CUSTOMIZER = IdempotencyClientAutoConfiguration.WEB_CLIENT_CUSTOMIZER_BEAN_NAME;

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(IdempotencyClientAutoConfiguration.class));

	@Test
	void isOffByDefault() {
		this.contextRunner.run((context) -> assertThat(context).hasNotFailed()
			.doesNotHaveBean(IdempotentRetryInterceptor.class)
			.doesNotHaveBean(CUSTOMIZER)
			.doesNotHaveBean(IdempotentRetryFilter.class)
			.doesNotHaveBean(WEB_CLIENT_CUSTOMIZER)
			.doesNotHaveBean(IdempotencyClientProperties.class));
	}

	@Test
	void isOffWhenDisabled() {
		this.contextRunner.withPropertyValues("idempotency.client.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(IdempotentRetryInterceptor.class)
				.doesNotHaveBean(CUSTOMIZER)
				.doesNotHaveBean(IdempotentRetryFilter.class)
				.doesNotHaveBean(WEB_CLIENT_CUSTOMIZER));
	}

	@Test
	void providesInterceptorAndCustomizerWhenEnabled() {
		this.contextRunner.withPropertyValues("idempotency.client.enabled=true").run((context) -> {
			assertThat(context).hasSingleBean(IdempotentRetryInterceptor.class)
				.hasSingleBean(RestClientCustomizer.class)
				.hasBean(CUSTOMIZER);
			IdempotentRetryInterceptor interceptor = context.getBean(IdempotentRetryInterceptor.class);
			assertThat(interceptor.getKeyHeader()).isEqualTo("Idempotency-Key");
			assertThat(interceptor.getMethods()).containsExactlyInAnyOrder(HttpMethod.POST, HttpMethod.PATCH);
			assertThat(interceptor.getRetryStatuses()).containsExactlyInAnyOrder(409, 429, 502, 503, 504);
			assertThat(interceptor.getMaxAttempts()).isEqualTo(5);
			assertThat(interceptor.getInitialBackoff()).isEqualTo(Duration.ofMillis(100));
			assertThat(interceptor.getMaxBackoff()).isEqualTo(Duration.ofSeconds(5));
			assertThat(interceptor.getMaxElapsed()).isEqualTo(Duration.ofSeconds(30));
		});
	}

	@Test
	void providesFilterAndWebClientCustomizerWhenEnabled() {
		this.contextRunner.withPropertyValues("idempotency.client.enabled=true").run((context) -> {
			assertThat(context).hasSingleBean(IdempotentRetryFilter.class)
				.hasSingleBean(WebClientCustomizer.class)
				.hasBean(WEB_CLIENT_CUSTOMIZER);
			IdempotentRetryFilter filter = context.getBean(IdempotentRetryFilter.class);
			assertThat(filter.getKeyHeader()).isEqualTo("Idempotency-Key");
			assertThat(filter.getMethods()).containsExactlyInAnyOrder(HttpMethod.POST, HttpMethod.PATCH);
			assertThat(filter.getRetryStatuses()).containsExactlyInAnyOrder(409, 429, 502, 503, 504);
			assertThat(filter.getMaxAttempts()).isEqualTo(5);
			assertThat(filter.getInitialBackoff()).isEqualTo(Duration.ofMillis(100));
			assertThat(filter.getMaxBackoff()).isEqualTo(Duration.ofSeconds(5));
			assertThat(filter.getMaxElapsed()).isEqualTo(Duration.ofSeconds(30));
			assertThat(filtersOf(context.getBean(WEB_CLIENT_CUSTOMIZER, WebClientCustomizer.class)))
				.containsExactly(filter);
		});
	}

	@Test
	void bindsProperties() {
		this.contextRunner
			.withPropertyValues("idempotency.client.enabled=true", "idempotency.client.key-header=X-Request-Key",
					"idempotency.client.methods=post, put", "idempotency.client.max-attempts=3",
					"idempotency.client.initial-backoff=50ms", "idempotency.client.max-backoff=2s",
					"idempotency.client.max-elapsed=10s", "idempotency.client.retry-statuses=500,503")
			.run((context) -> {
				IdempotencyClientProperties properties = context.getBean(IdempotencyClientProperties.class);
				assertThat(properties.isEnabled()).isTrue();
				assertThat(properties.getMethods()).containsExactly("post", "put");
				assertThat(properties.getRetryStatuses()).containsExactly(500, 503);
				IdempotentRetryInterceptor interceptor = context.getBean(IdempotentRetryInterceptor.class);
				assertThat(interceptor.getKeyHeader()).isEqualTo("X-Request-Key");
				assertThat(interceptor.getMethods()).containsExactlyInAnyOrder(HttpMethod.POST, HttpMethod.PUT);
				assertThat(interceptor.getMaxAttempts()).isEqualTo(3);
				assertThat(interceptor.getInitialBackoff()).isEqualTo(Duration.ofMillis(50));
				assertThat(interceptor.getMaxBackoff()).isEqualTo(Duration.ofSeconds(2));
				assertThat(interceptor.getMaxElapsed()).isEqualTo(Duration.ofSeconds(10));
				assertThat(interceptor.getRetryStatuses()).containsExactlyInAnyOrder(500, 503);
				IdempotentRetryFilter filter = context.getBean(IdempotentRetryFilter.class);
				assertThat(filter.getKeyHeader()).isEqualTo("X-Request-Key");
				assertThat(filter.getMethods()).containsExactlyInAnyOrder(HttpMethod.POST, HttpMethod.PUT);
				assertThat(filter.getMaxAttempts()).isEqualTo(3);
				assertThat(filter.getInitialBackoff()).isEqualTo(Duration.ofMillis(50));
				assertThat(filter.getMaxBackoff()).isEqualTo(Duration.ofSeconds(2));
				assertThat(filter.getMaxElapsed()).isEqualTo(Duration.ofSeconds(10));
				assertThat(filter.getRetryStatuses()).containsExactlyInAnyOrder(500, 503);
			});
	}

	@Test
	void rejectsInvalidProperties() {
		this.contextRunner.withPropertyValues("idempotency.client.enabled=true", "idempotency.client.max-attempts=0")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("maxAttempts"));
	}

	@Test
	void backsOffFromUserInterceptor() {
		this.contextRunner.withPropertyValues("idempotency.client.enabled=true", "idempotency.client.max-attempts=2")
			.withUserConfiguration(UserInterceptorConfiguration.class)
			.run((context) -> {
				assertThat(context).hasSingleBean(IdempotentRetryInterceptor.class).hasBean(CUSTOMIZER);
				IdempotentRetryInterceptor interceptor = context.getBean(IdempotentRetryInterceptor.class);
				assertThat(interceptor).isSameAs(context.getBean("userInterceptor"));
				assertThat(interceptor.getMaxAttempts()).isEqualTo(7);
				assertThat(interceptorsOf(context.getBean(CUSTOMIZER, RestClientCustomizer.class)))
					.containsExactly(interceptor);
			});
	}

	@Test
	void backsOffFromUserCustomizerOfTheSameName() {
		this.contextRunner.withPropertyValues("idempotency.client.enabled=true")
			.withUserConfiguration(UserCustomizerConfiguration.class)
			.run((context) -> {
				assertThat(context).hasSingleBean(IdempotentRetryInterceptor.class);
				assertThat(interceptorsOf(context.getBean(CUSTOMIZER, RestClientCustomizer.class))).isEmpty();
			});
	}

	@Test
	void backsOffFromUserFilter() {
		this.contextRunner.withPropertyValues("idempotency.client.enabled=true", "idempotency.client.max-attempts=2")
			.withUserConfiguration(UserFilterConfiguration.class)
			.run((context) -> {
				assertThat(context).hasSingleBean(IdempotentRetryFilter.class).hasBean(WEB_CLIENT_CUSTOMIZER);
				IdempotentRetryFilter filter = context.getBean(IdempotentRetryFilter.class);
				assertThat(filter).isSameAs(context.getBean("userFilter"));
				assertThat(filter.getMaxAttempts()).isEqualTo(7);
				assertThat(filtersOf(context.getBean(WEB_CLIENT_CUSTOMIZER, WebClientCustomizer.class)))
					.containsExactly(filter);
				assertThat(context.getBean(IdempotentRetryInterceptor.class).getMaxAttempts()).isEqualTo(2);
			});
	}

	@Test
	void backsOffFromUserWebClientCustomizerOfTheSameName() {
		this.contextRunner.withPropertyValues("idempotency.client.enabled=true")
			.withUserConfiguration(UserWebClientCustomizerConfiguration.class)
			.run((context) -> {
				assertThat(context).hasSingleBean(IdempotentRetryFilter.class);
				assertThat(filtersOf(context.getBean(WEB_CLIENT_CUSTOMIZER, WebClientCustomizer.class))).isEmpty();
			});
	}

	@Test
	void providesOnlyFilterWithoutBootWebClientSupport() {
		this.contextRunner.withPropertyValues("idempotency.client.enabled=true")
			.withClassLoader(new FilteredClassLoader(WebClientCustomizer.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(IdempotentRetryFilter.class)
				.doesNotHaveBean(WEB_CLIENT_CUSTOMIZER)
				.hasBean(CUSTOMIZER));
	}

	@Test
	void providesNoFilterWithoutWebFlux() {
		this.contextRunner.withPropertyValues("idempotency.client.enabled=true")
			.withClassLoader(new FilteredClassLoader(WebClient.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(IdempotentRetryFilter.class)
				.doesNotHaveBean(WEB_CLIENT_CUSTOMIZER)
				.hasSingleBean(IdempotentRetryInterceptor.class)
				.hasBean(CUSTOMIZER));
	}

	@Test
	void providesOnlyInterceptorWithoutBootRestClientSupport() {
		this.contextRunner.withPropertyValues("idempotency.client.enabled=true")
			.withClassLoader(new FilteredClassLoader(RestClientCustomizer.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(IdempotentRetryInterceptor.class)
				.doesNotHaveBean(CUSTOMIZER));
	}

	@Test
	void isOffWithoutRestClient() {
		this.contextRunner.withPropertyValues("idempotency.client.enabled=true")
			.withClassLoader(new FilteredClassLoader(RestClient.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(IdempotentRetryInterceptor.class));
	}

	@Test
	void autoConfiguredRestClientBuilderRetriesWithOneKey() {
		try (RetryTestServer server = RetryTestServer.start()) {
			this.contextRunner.withConfiguration(AutoConfigurations.of(RestClientAutoConfiguration.class))
				.withPropertyValues("idempotency.client.enabled=true", "idempotency.client.initial-backoff=1ms")
				.run((context) -> {
					RestClient.Builder builder = context.getBean(RestClient.Builder.class);
					assertThat(interceptorsOf(builder))
						.containsExactly(context.getBean(IdempotentRetryInterceptor.class));
					RestClient client = builder
						.requestFactory(new JdkClientHttpRequestFactory(
								HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()))
						.build();
					server.replyInOrder(RetryTestServer.status(503), RetryTestServer.reset());
					String body = client.post().uri(server.uri("/payments")).body("{}").retrieve().body(String.class);
					assertThat(body).isEqualTo("created 1");
					List<Received> received = server.received();
					assertThat(received).hasSize(3).allSatisfy((request) -> assertThat(request.keys()).hasSize(1));
					assertThat(received).extracting(Received::key)
						.doesNotContainNull()
						.containsOnly(received.get(0).key());
					assertThat(server.executions()).isOne();
				});
		}
	}

	@Test
	void autoConfiguredWebClientBuilderRetriesWithOneKey() {
		try (RetryTestServer server = RetryTestServer.start()) {
			this.contextRunner.withConfiguration(AutoConfigurations.of(WebClientAutoConfiguration.class))
				.withPropertyValues("idempotency.client.enabled=true", "idempotency.client.initial-backoff=1ms")
				.run((context) -> {
					WebClient.Builder builder = context.getBean(WebClient.Builder.class);
					assertThat(filtersOf(builder)).containsExactly(context.getBean(IdempotentRetryFilter.class));
					WebClient client = builder.clientConnector(new ReactorClientHttpConnector()).build();
					server.replyInOrder(RetryTestServer.status(503), RetryTestServer.reset());
					String body = client.post()
						.uri(server.uri("/payments"))
						.bodyValue("{}")
						.retrieve()
						.bodyToMono(String.class)
						.block(Duration.ofSeconds(30));
					assertThat(body).isEqualTo("created 1");
					List<Received> received = server.received();
					assertThat(received).hasSize(3).allSatisfy((request) -> assertThat(request.keys()).hasSize(1));
					assertThat(received).extracting(Received::key)
						.doesNotContainNull()
						.containsOnly(received.get(0).key());
					assertThat(server.executions()).isOne();
				});
		}
	}

	@Test
	void comesBeforeTheApplicationsCustomizersSoThatTheirFiltersAndInterceptorsRunOnEveryAttempt() {
		this.contextRunner
			.withConfiguration(
					AutoConfigurations.of(WebClientAutoConfiguration.class, RestClientAutoConfiguration.class))
			.withUserConfiguration(ApplicationCustomizersConfiguration.class)
			.withPropertyValues("idempotency.client.enabled=true")
			.run((context) -> {
				assertThat(filtersOf(context.getBean(WebClient.Builder.class))).containsExactly(
						context.getBean(IdempotentRetryFilter.class), ApplicationCustomizersConfiguration.FILTER);
				assertThat(interceptorsOf(context.getBean(RestClient.Builder.class))).containsExactly(
						context.getBean(IdempotentRetryInterceptor.class),
						ApplicationCustomizersConfiguration.INTERCEPTOR);
			});
	}

	@Test
	void isListedInAutoConfigurationImports() {
		List<String> candidates = new ArrayList<>();
		ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader()).forEach(candidates::add);
		assertThat(candidates).contains(IdempotencyClientAutoConfiguration.class.getName());
		ClassLoader classLoader = getClass().getClassLoader();
		assertThat(candidates).filteredOn((name) -> name.startsWith("dev.idempotency.")).allSatisfy((name) -> {
			Class<?> type = Class.forName(name, false, classLoader);
			assertThat(type.isAnnotationPresent(AutoConfiguration.class)).as(name).isTrue();
		});
	}

	private static List<ClientHttpRequestInterceptor> interceptorsOf(RestClientCustomizer customizer) {
		RestClient.Builder builder = RestClient.builder();
		customizer.customize(builder);
		return interceptorsOf(builder);
	}

	private static List<ClientHttpRequestInterceptor> interceptorsOf(RestClient.Builder builder) {
		List<ClientHttpRequestInterceptor> interceptors = new ArrayList<>();
		builder.requestInterceptors(interceptors::addAll);
		return interceptors;
	}

	private static List<ExchangeFilterFunction> filtersOf(WebClientCustomizer customizer) {
		WebClient.Builder builder = WebClient.builder();
		customizer.customize(builder);
		return filtersOf(builder);
	}

	private static List<ExchangeFilterFunction> filtersOf(WebClient.Builder builder) {
		List<ExchangeFilterFunction> filters = new ArrayList<>();
		builder.filters(filters::addAll);
		return filters;
	}

	@Configuration(proxyBeanMethods = false)
	static class UserInterceptorConfiguration {

		@Bean
		IdempotentRetryInterceptor userInterceptor() {
			IdempotentRetryInterceptor interceptor = new IdempotentRetryInterceptor();
			interceptor.setMaxAttempts(7);
			return interceptor;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserCustomizerConfiguration {

		@Bean(name = IdempotencyClientAutoConfiguration.CUSTOMIZER_BEAN_NAME)
		RestClientCustomizer userCustomizer() {
			return (builder) -> {
			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserFilterConfiguration {

		@Bean
		IdempotentRetryFilter userFilter() {
			IdempotentRetryFilter filter = new IdempotentRetryFilter();
			filter.setMaxAttempts(7);
			return filter;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ApplicationCustomizersConfiguration {

		static final ExchangeFilterFunction FILTER = (request, next) -> next
			.exchange(ClientRequest.from(request).header("Authorization", "Bearer fresh").build());

		static final ClientHttpRequestInterceptor INTERCEPTOR = (request, body, execution) -> execution.execute(request,
				body);

		@Bean
		WebClientCustomizer applicationWebClientCustomizer() {
			return (builder) -> builder.filter(FILTER);
		}

		@Bean
		RestClientCustomizer applicationRestClientCustomizer() {
			return (builder) -> builder.requestInterceptor(INTERCEPTOR);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserWebClientCustomizerConfiguration {

		@Bean(name = IdempotencyClientAutoConfiguration.WEB_CLIENT_CUSTOMIZER_BEAN_NAME)
		WebClientCustomizer userWebClientCustomizer() {
			return (builder) -> {
			};
		}

	}

}
