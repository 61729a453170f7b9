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

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import dev.idempotency.core.engine.IdempotencyEngine;
import dev.idempotency.core.engine.StatusSet;
import dev.idempotency.core.engine.StoreFailureMode;
import dev.idempotency.core.fingerprint.RequestFingerprinter;
import dev.idempotency.core.fingerprint.Sha256RequestFingerprinter;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.InMemoryIdempotencyStore;
import dev.idempotency.spring.IdempotencyKeySource;
import dev.idempotency.spring.Idempotent;
import dev.idempotency.spring.NamedPolicies;
import dev.idempotency.spring.NamedPolicy;
import dev.idempotency.spring.http.AnonymousRequests;
import dev.idempotency.spring.http.IdempotentEndpoint;
import dev.idempotency.spring.observation.DefaultIdempotencyObservationConvention;
import dev.idempotency.spring.observation.IdempotencyObservationConvention;
import dev.idempotency.spring.web.DefaultIdempotencyScopeResolver;
import dev.idempotency.spring.web.HandlerMappingEndpointResolver;
import dev.idempotency.spring.web.IdempotencyFilter;
import dev.idempotency.spring.web.IdempotencyScopeResolver;
import dev.idempotency.spring.web.IdempotentEndpointResolver;
import io.micrometer.observation.tck.TestObservationRegistry;
import jakarta.servlet.DispatcherType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.boot.web.servlet.ServletListenerRegistrationBean;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.mvc.method.RequestMappingInfoHandlerMapping;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.mock;

/**
 * Tests for {@link IdempotencyAutoConfiguration}.
 *
 * @author Idempotency contributors
 */
@ExtendWith(OutputCaptureExtension.class)
class IdempotencyAutoConfigurationTests {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class));

	@Test
	void defaultBeans(CapturedOutput output) {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(IdempotencyEngine.class);
			assertThat(context).hasSingleBean(IdempotencyFilter.class);
			assertThat(context).hasSingleBean(HandlerMappingEndpointResolver.class);
			assertThat(context.getBean(IdempotencyScopeResolver.class))
				.isInstanceOf(DefaultIdempotencyScopeResolver.class);
			assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(InMemoryIdempotencyStore.class);
			assertThat(context.getBean(IdempotencyEngine.class).store())
				.isSameAs(context.getBean(IdempotencyStore.class));
			FilterRegistrationBean<?> registration = context.getBean(FilterRegistrationBean.class);
			assertThat(registration.getFilter()).isSameAs(context.getBean(IdempotencyFilter.class));
			assertThat(registration.getOrder()).isEqualTo(IdempotencyFilter.DEFAULT_ORDER);
			assertThat(registration.determineDispatcherTypes()).containsExactlyInAnyOrder(DispatcherType.REQUEST,
					DispatcherType.ASYNC, DispatcherType.ERROR);
			assertThat(context).hasSingleBean(ServletListenerRegistrationBean.class);
			NamedPolicy policy = context.getBean(NamedPolicies.class).getDefault();
			assertThat(policy.engine().ttl()).isEqualTo(Duration.ofHours(24));
			assertThat(policy.engine().lockTimeout()).isEqualTo(Duration.ofSeconds(30));
			assertThat(policy.engine().inFlightWait()).isZero();
			assertThat(policy.engine().inProgressRetryAfter()).isEqualTo(Duration.ofSeconds(1));
			assertThat(policy.engine().onStoreFailure()).isEqualTo(StoreFailureMode.FAIL_CLOSED);
			assertThat(policy.engine().nonStorableStatuses()).isEqualTo(StatusSet.DEFAULT_NON_STORABLE);
			assertThat(policy.maxRequestBody()).isEqualTo(1024 * 1024);
			assertThat(policy.maxResponseBody()).isEqualTo(1024 * 1024);
			assertThat(policy.fingerprinter()).isInstanceOf(Sha256RequestFingerprinter.class);
			assertThat(((Sha256RequestFingerprinter) policy.fingerprinter()).isCanonicalizeJson()).isTrue();
		});
		assertThat(output).contains("Idempotency records are kept in memory (idempotency.store.type=auto)")
			.contains("Idempotency store: in-memory (idempotency.store.type=auto: no Redis, no DataSource)");
	}

	@Test
	void policiesOverrideGlobalSettings() {
		this.runner
			.withPropertyValues("idempotency.ttl=2h", "idempotency.policies.payments.ttl=48h",
					"idempotency.policies.payments.in-flight-wait=2s",
					"idempotency.policies.payments.in-progress-retry-after=3s",
					"idempotency.policies.payments.max-request-body=64KB",
					"idempotency.policies.payments.on-store-failure=fail-open",
					"idempotency.policies.payments.non-storable-statuses=5xx",
					"idempotency.policies.payments.fingerprint.json=raw",
					"idempotency.policies.payments.fingerprint.excluded-json-pointers=/sentAt,/items/0/ref",
					"idempotency.fingerprint.headers=X-Account", "idempotency.policies.events.key.json-pointer=/id",
					"idempotency.policies.deliveries.key.header=webhook-id")
			.run((context) -> {
				NamedPolicies policies = context.getBean(NamedPolicies.class);
				assertThat(policies.names()).containsExactly("default", "payments", "events", "deliveries");
				assertThat(policies.getDefault().keySource()).isEqualTo(IdempotencyKeySource.keyHeader());
				assertThat(policies.get("events").keySource()).isEqualTo(IdempotencyKeySource.jsonPointer("/id"));
				assertThat(policies.get("deliveries").keySource()).isEqualTo(IdempotencyKeySource.header("webhook-id"));
				assertThat(policies.getDefault().engine().ttl()).isEqualTo(Duration.ofHours(2));
				NamedPolicy payments = policies.get("payments");
				assertThat(payments).isNotNull();
				assertThat(payments.engine().ttl()).isEqualTo(Duration.ofHours(48));
				assertThat(payments.engine().lockTimeout()).isEqualTo(Duration.ofSeconds(30));
				assertThat(payments.engine().inFlightWait()).isEqualTo(Duration.ofSeconds(2));
				assertThat(payments.engine().inProgressRetryAfter()).isEqualTo(Duration.ofSeconds(3));
				assertThat(payments.engine().onStoreFailure()).isEqualTo(StoreFailureMode.FAIL_OPEN);
				assertThat(payments.engine().nonStorableStatuses().contains(503)).isTrue();
				assertThat(payments.engine().nonStorableStatuses().contains(429)).isFalse();
				assertThat(payments.maxRequestBody()).isEqualTo(64 * 1024);
				assertThat(payments.fingerprintHeaders()).containsExactly("X-Account");
				Sha256RequestFingerprinter fingerprinter = (Sha256RequestFingerprinter) payments.fingerprinter();
				assertThat(fingerprinter.isCanonicalizeJson()).isFalse();
				assertThat(fingerprinter.getExcludedJsonPointers()).containsExactly("/sentAt", "/items/0/ref");
			});
	}

	@Test
	void anonymousRequestsAreWarnedAboutWithSpringSecurityAndLeftAloneWithout() {
		this.runner.run((context) -> assertThat(context.getBean(IdempotencyFilter.class).getAnonymousRequests())
			.isEqualTo(AnonymousRequests.WARN));
		this.runner.withPropertyValues("idempotency.anonymous-requests=reject")
			.run((context) -> assertThat(context.getBean(IdempotencyFilter.class).getAnonymousRequests())
				.isEqualTo(AnonymousRequests.REJECT));
		this.runner.withClassLoader(new FilteredClassLoader("org.springframework.security"))
			.withPropertyValues("idempotency.anonymous-requests=reject")
			.run((context) -> assertThat(context.getBean(IdempotencyFilter.class).getAnonymousRequests())
				.isEqualTo(AnonymousRequests.ALLOW));
	}

	@Test
	void filterOrderComesFromProperty() {
		this.runner.withPropertyValues("idempotency.filter.order=7")
			.run((context) -> assertThat(context.getBean(FilterRegistrationBean.class).getOrder()).isEqualTo(7));
	}

	@Test
	void disabledRemovesTheFilter() {
		this.runner.withPropertyValues("idempotency.enabled=false").run((context) -> {
			assertThat(context).doesNotHaveBean(IdempotencyFilter.class);
			assertThat(context).doesNotHaveBean(FilterRegistrationBean.class);
			assertThat(context).doesNotHaveBean(ServletListenerRegistrationBean.class);
			assertThat(context).hasSingleBean(IdempotencyEngine.class);
		});
	}

	@Test
	void userStoreMakesTheStoreConfigurationBackOff(CapturedOutput output) {
		this.runner.withUserConfiguration(UserStoreConfiguration.class).run((context) -> {
			assertThat(context).hasSingleBean(IdempotencyStore.class);
			assertThat(context.getBean(IdempotencyStore.class)).isSameAs(UserStoreConfiguration.STORE);
			assertThat(context.getBean(IdempotencyEngine.class).store()).isSameAs(UserStoreConfiguration.STORE);
		});
		assertThat(output).doesNotContain("Idempotency records are kept in memory");
	}

	@Test
	void userStoreWinsOverAnExplicitStoreType() {
		this.runner.withUserConfiguration(UserStoreConfiguration.class)
			.withPropertyValues("idempotency.store.type=redis")
			.run((context) -> assertThat(context.getBean(IdempotencyStore.class))
				.isSameAs(UserStoreConfiguration.STORE));
	}

	@Test
	void userBeansMakeTheirAutoConfiguredBeansBackOff() {
		this.runner.withUserConfiguration(UserBeansConfiguration.class).run((context) -> {
			assertThat(context).hasSingleBean(IdempotencyEngine.class);
			assertThat(context).hasSingleBean(IdempotencyFilter.class);
			assertThat(context.getBean(IdempotencyFilter.class)).isSameAs(context.getBean("userFilter"));
			assertThat(context.getBean(FilterRegistrationBean.class).getFilter())
				.isSameAs(context.getBean("userFilter"));
			assertThat(context.getBean(IdempotencyScopeResolver.class)).isSameAs(context.getBean("userScope"));
			assertThat(context.getBean(IdempotentEndpointResolver.class)).isSameAs(context.getBean("userResolver"));
			assertThat(context).doesNotHaveBean(HandlerMappingEndpointResolver.class);
		});
	}

	@Test
	void userFingerprinterIsUsedByEveryPolicy() {
		this.runner.withUserConfiguration(UserFingerprinterConfiguration.class)
			.withPropertyValues("idempotency.policies.payments.ttl=1h")
			.run((context) -> {
				NamedPolicies policies = context.getBean(NamedPolicies.class);
				RequestFingerprinter user = context.getBean(RequestFingerprinter.class);
				assertThat(policies.getDefault().fingerprinter()).isSameAs(user);
				assertThat(policies.get("payments").fingerprinter()).isSameAs(user);
			});
	}

	@Test
	void memoryStoreType() {
		this.runner.withPropertyValues("idempotency.store.type=memory")
			.run((context) -> assertThat(context.getBean(IdempotencyStore.class))
				.isInstanceOf(InMemoryIdempotencyStore.class));
	}

	@Test
	void redisStoreTypeWithoutConnectionFactoryFails() {
		this.runner.withPropertyValues("idempotency.store.type=redis")
			.run((context) -> assertFailure(context.getStartupFailure(), "idempotency.store.type",
					"RedisConnectionFactory"));
	}

	@Test
	void jdbcStoreTypeWithoutDataSourceFails() {
		this.runner.withPropertyValues("idempotency.store.type=jdbc")
			.run((context) -> assertFailure(context.getStartupFailure(), "idempotency.store.type", "DataSource"));
	}

	@Test
	void tieredStoreTypeWithoutServersFails() {
		this.runner.withPropertyValues("idempotency.store.type=tiered")
			.run((context) -> assertFailure(context.getStartupFailure(), "idempotency.store.type",
					"RedisConnectionFactory and a DataSource"));
	}

	@Test
	void invalidSettingsFailWithTheirPropertyName() {
		assertInvalid("idempotency.ttl", "must not be shorter than the lock timeout", "idempotency.ttl=10s");
		assertInvalid("idempotency.policies.p.ttl", "must not be shorter than the lock timeout",
				"idempotency.policies.p.ttl=1s");
		assertInvalid("idempotency.lock-timeout", "at least 300ms", "idempotency.lock-timeout=100ms");
		assertInvalid("idempotency.min-ttl", "must not be longer than max-ttl", "idempotency.min-ttl=2h",
				"idempotency.max-ttl=1h");
		assertInvalid("idempotency.max-ttl", "must not be shorter than the lock timeout", "idempotency.min-ttl=5s",
				"idempotency.max-ttl=10s");
		assertInvalid("idempotency.non-storable-statuses", "neither an HTTP status code",
				"idempotency.non-storable-statuses=5xx,abc");
		assertInvalid("idempotency.policies.p.non-storable-statuses", "not an HTTP status code",
				"idempotency.policies.p.non-storable-statuses=1000");
		assertInvalid("idempotency.fingerprint.excluded-json-pointers", "must start with '/'",
				"idempotency.fingerprint.excluded-json-pointers=sentAt");
		assertInvalid("idempotency.policies.p.fingerprint.excluded-json-pointers", "'~' must be followed",
				"idempotency.policies.p.fingerprint.excluded-json-pointers=/a~2");
		assertInvalid("idempotency.key-header", "not a valid HTTP token", "idempotency.key-header=Bad Header");
		assertInvalid("idempotency.policies.p.key.header", "not a valid HTTP token",
				"idempotency.policies.p.key.header=webhook id");
		assertInvalid("idempotency.policies.p.key.json-pointer", "must start with '/'",
				"idempotency.policies.p.key.json-pointer=id");
		assertInvalid("idempotency.policies.p.key.json-pointer", "not at the whole body",
				"idempotency.policies.p.key.json-pointer=");
		assertInvalid("idempotency.policies.p.key.json-pointer", "one place",
				"idempotency.policies.p.key.json-pointer=/id", "idempotency.policies.p.key.header=webhook-id");
		// the header of every policy without a source of its own has a setting already
		assertInvalid("idempotency.key.header", "idempotency.key-header", "idempotency.key.header=webhook-id");
		assertInvalid("idempotency.fingerprint.headers", "not a valid HTTP token",
				"idempotency.fingerprint.headers=X:Y");
		assertInvalid("idempotency.problem-type-base", "absolute URI", "idempotency.problem-type-base=/problems/");
		assertInvalid("idempotency.max-request-body", "between 0 and", "idempotency.max-request-body=3GB");
		// a stored body beyond the codec's limit (64MB) could never be read back
		assertInvalid("idempotency.max-response-body", "between 0 and 67108864 bytes",
				"idempotency.max-response-body=65MB");
		assertInvalid("idempotency.policies.p.max-response-body", "between 0 and 67108864 bytes",
				"idempotency.policies.p.max-response-body=100MB");
		assertInvalid("idempotency.in-flight-wait", "must not be negative", "idempotency.in-flight-wait=-1s");
		assertInvalid("idempotency.policies.p.in-progress-retry-after", "must not be negative",
				"idempotency.policies.p.in-progress-retry-after=-1s");
		assertInvalid("idempotency.endpoints[0].policy", "not configured", "idempotency.endpoints[0].path=/x",
				"idempotency.endpoints[0].policy=nope");
		assertInvalid("idempotency.endpoints[0].path", "must be set", "idempotency.endpoints[0].methods=POST");
		assertInvalid("idempotency.endpoints[0].path", "not a valid path pattern",
				"idempotency.endpoints[0].path=/a/**/b");
	}

	@Test
	void endpointRulesMakeRequestsIdempotent() {
		this.runner
			.withPropertyValues("idempotency.policies.legacy.ttl=1h", "idempotency.endpoints[0].path=/legacy/{id}",
					"idempotency.endpoints[0].policy=legacy", "idempotency.endpoints[0].required=false",
					"idempotency.endpoints[1].path=/other", "idempotency.endpoints[1].methods=PUT")
			.run((context) -> {
				IdempotentEndpointResolver resolver = context.getBean(IdempotentEndpointResolver.class);
				assertThat(resolver.resolve(new MockHttpServletRequest("POST", "/legacy/7")))
					.isEqualTo(new IdempotentEndpoint("legacy", false));
				assertThat(resolver.resolve(new MockHttpServletRequest("PATCH", "/legacy/7")))
					.isEqualTo(new IdempotentEndpoint("legacy", false));
				assertThat(resolver.resolve(new MockHttpServletRequest("GET", "/legacy/7"))).isNull();
				assertThat(resolver.resolve(new MockHttpServletRequest("PUT", "/other")))
					.isEqualTo(new IdempotentEndpoint("default", true));
				assertThat(resolver.resolve(new MockHttpServletRequest("POST", "/other"))).isNull();
			});
	}

	@Test
	void idempotentHandlerWithUnknownPolicyFailsStartUp() {
		this.runner
			.withConfiguration(
					AutoConfigurations.of(WebMvcAutoConfiguration.class, DispatcherServletAutoConfiguration.class))
			.withUserConfiguration(UnknownPolicyController.class)
			.run((context) -> assertFailure(context.getStartupFailure(), "UnknownPolicyController#pay",
					"names the policy 'payments', which is not configured", "idempotency.policies.payments"));
	}

	@Test
	void idempotentStreamingHandlerFailsStartUp() {
		this.runner
			.withConfiguration(
					AutoConfigurations.of(WebMvcAutoConfiguration.class, DispatcherServletAutoConfiguration.class))
			.withUserConfiguration(StreamingController.class)
			.run((context) -> assertFailure(context.getStartupFailure(), "StreamingController#events",
					"streams its response"));
		this.runner
			.withConfiguration(
					AutoConfigurations.of(WebMvcAutoConfiguration.class, DispatcherServletAutoConfiguration.class))
			.withUserConfiguration(NestedStreamingController.class)
			.run((context) -> assertFailure(context.getStartupFailure(), "NestedStreamingController#events",
					"streams its response"));
	}

	@Test
	void annotatedHandlersAreResolvedFromTheHandlerMappings() {
		this.runner
			.withConfiguration(
					AutoConfigurations.of(WebMvcAutoConfiguration.class, DispatcherServletAutoConfiguration.class))
			.withUserConfiguration(AnnotatedController.class)
			.withPropertyValues("idempotency.policies.payments.ttl=1h")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				IdempotentEndpointResolver resolver = context.getBean(IdempotentEndpointResolver.class);
				assertThat(resolver.resolve(new MockHttpServletRequest("POST", "/pay")))
					.isEqualTo(new IdempotentEndpoint("payments", true));
				assertThat(resolver.resolve(new MockHttpServletRequest("POST", "/other"))).isNull();
				assertThat(context.getBeansOfType(RequestMappingInfoHandlerMapping.class)).isNotEmpty();
			});
	}

	@Test
	void filterObservesRequestsWithTheObservationRegistryAndConventionBeans() {
		this.runner.withUserConfiguration(ObservationConfiguration.class)
			.withPropertyValues("idempotency.store.type=memory", "idempotency.endpoints[0].path=/pay")
			.run((context) -> {
				MockHttpServletRequest request = new MockHttpServletRequest("POST", "/pay");
				request.addHeader("Idempotency-Key", "k-1");
				context.getBean(IdempotencyFilter.class)
					.doFilter(request, new MockHttpServletResponse(), new MockFilterChain());
				assertThat(context.getBean(TestObservationRegistry.class)).hasSingleObservationThat()
					.hasNameEqualTo("custom.idempotency")
					.hasLowCardinalityKeyValue("outcome", "executed")
					.hasBeenStopped();
			});
	}

	@Test
	void nonWebApplicationGetsTheEngineForIdempotentMethodsButNoFilter() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
			.run((context) -> {
				assertThat(context).hasSingleBean(IdempotencyEngine.class);
				assertThat(context).hasSingleBean(NamedPolicies.class);
				assertThat(context).doesNotHaveBean(IdempotencyFilter.class);
				assertThat(context).doesNotHaveBean(IdempotentEndpointResolver.class);
				assertThat(context).doesNotHaveBean(IdempotencyScopeResolver.class);
			});
	}

	@Test
	void reactiveApplicationGetsTheEngineButNoServletFilter() {
		new ReactiveWebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
			.run((context) -> assertThat(context).hasSingleBean(IdempotencyEngine.class)
				.hasSingleBean(IdempotencyProperties.class)
				.doesNotHaveBean(IdempotencyFilter.class));
	}

	@Test
	void reactiveApplicationThatOptedOutGetsNothing() {
		new ReactiveWebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
			.withPropertyValues("idempotency.reactive.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(IdempotencyEngine.class)
				.doesNotHaveBean(IdempotencyProperties.class));
	}

	@Test
	void withoutSpringMvcNoFilterIsConfigured() {
		this.runner.withClassLoader(new FilteredClassLoader(RequestMappingInfoHandlerMapping.class))
			.run((context) -> assertThat(context).hasSingleBean(IdempotencyEngine.class)
				.doesNotHaveBean(IdempotencyFilter.class));
	}

	@Test
	void withoutTheServletApiAndSpringWebTheEngineIsConfigured() {
		new ApplicationContextRunner()
			.withClassLoader(new FilteredClassLoader("jakarta.servlet", "org.springframework.web"))
			.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
			.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(IdempotencyEngine.class));
	}

	@Test
	void everyListedAutoConfigurationLoads() throws IOException, ClassNotFoundException {
		List<String> names = new ArrayList<>();
		try (InputStream in = getClass().getClassLoader()
			.getResourceAsStream("META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports")) {
			assertThat(in).isNotNull();
			for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
				if (!line.isBlank() && !line.startsWith("#")) {
					names.add(line.strip());
				}
			}
		}
		assertThat(names).contains(IdempotencyAutoConfiguration.class.getName());
		for (String name : names) {
			Class<?> type = Class.forName(name);
			assertThat(type).hasAnnotation(AutoConfiguration.class);
		}
	}

	private void assertInvalid(String property, String reason, String... properties) {
		this.runner.withPropertyValues(properties)
			.run((context) -> assertFailure(context.getStartupFailure(), property, reason));
	}

	private static void assertFailure(Throwable failure, String... fragments) {
		assertThat(failure).as("start-up failure").isNotNull();
		StringBuilder messages = new StringBuilder();
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			messages.append(cause.getMessage()).append('\n');
		}
		assertThat(messages.toString()).contains(fragments);
	}

	@Configuration(proxyBeanMethods = false)
	static class UserStoreConfiguration {

		static final IdempotencyStore STORE = new InMemoryIdempotencyStore();

		@Bean
		IdempotencyStore userStore() {
			return STORE;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserBeansConfiguration {

		@Bean
		IdempotentEndpointResolver userResolver() {
			return (request) -> null;
		}

		@Bean
		IdempotencyScopeResolver userScope() {
			return (request) -> "tenant";
		}

		@Bean
		IdempotencyFilter userFilter(IdempotencyEngine engine, NamedPolicies policies) {
			return new IdempotencyFilter(engine, (request) -> null, policies);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ObservationConfiguration {

		@Bean
		TestObservationRegistry observationRegistry() {
			return TestObservationRegistry.create();
		}

		@Bean
		IdempotencyObservationConvention idempotencyObservationConvention() {
			return new DefaultIdempotencyObservationConvention("custom.idempotency");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserFingerprinterConfiguration {

		@Bean
		RequestFingerprinter userFingerprinter() {
			return mock(RequestFingerprinter.class);
		}

	}

	@RestController
	static class UnknownPolicyController {

		@PostMapping("/pay")
		@Idempotent("payments")
		String pay() {
			return "paid";
		}

	}

	@RestController
	static class StreamingController {

		@PostMapping("/events")
		@Idempotent
		SseEmitter events() {
			return new SseEmitter();
		}

	}

	@RestController
	static class NestedStreamingController {

		@PostMapping("/events")
		@Idempotent
		Callable<org.springframework.http.ResponseEntity<SseEmitter>> events() {
			return () -> org.springframework.http.ResponseEntity.ok(new SseEmitter());
		}

	}

	@RestController
	static class AnnotatedController {

		@PostMapping("/pay")
		@Idempotent(policy = "payments")
		String pay() {
			return "paid";
		}

		@PostMapping("/other")
		String other() {
			return "other";
		}

	}

}
