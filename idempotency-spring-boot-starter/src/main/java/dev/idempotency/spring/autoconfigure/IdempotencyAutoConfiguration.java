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

import java.util.EnumSet;
import java.util.List;

import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.engine.IdempotencyEngine;
import dev.idempotency.core.engine.IdempotencyListener;
import dev.idempotency.core.fingerprint.RequestFingerprinter;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.ReplayCachingStore;
import dev.idempotency.spring.NamedPolicies;
import dev.idempotency.spring.observation.IdempotencyObservationConvention;
import dev.idempotency.spring.web.DefaultIdempotencyScopeResolver;
import dev.idempotency.spring.web.HandlerMappingEndpointResolver;
import dev.idempotency.spring.web.IdempotencyFilter;
import dev.idempotency.spring.web.IdempotencyProblemRenderer;
import dev.idempotency.spring.web.IdempotencyScopeResolver;
import dev.idempotency.spring.web.IdempotentEndpointResolver;
import dev.idempotency.spring.web.StoredResponseCustomizer;
import io.micrometer.observation.ObservationRegistry;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.ServletRequestListener;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.boot.context.properties.ConfigurationPropertiesBinding;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.boot.web.servlet.ServletListenerRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportRuntimeHints;
import org.springframework.util.ClassUtils;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;
import org.springframework.web.servlet.mvc.method.RequestMappingInfoHandlerMapping;

/**
 * Auto-configuration of idempotent Spring MVC endpoints: the {@link IdempotencyEngine}
 * over an {@link IdempotencyStore}, the policies from {@link IdempotencyProperties}, and
 * the {@link IdempotencyFilter} with its registration, and an
 * {@code EndpointResolutionInterceptor} that checks the filter's decisions against the
 * handlers Spring MVC chooses ({@code idempotency.filter.check-handler}).
 * <p>
 * The store is chosen by the configurations imported below, in this order of precedence,
 * each only if no {@link IdempotencyStore} bean exists yet (so a user's own store bean
 * always wins):
 * <ol>
 * <li>tiered (Redis in front of PostgreSQL) for {@code tiered}, PostgreSQL for
 * {@code jdbc}, each needing a PostgreSQL {@code DataSource};
 * <li>for {@code auto} with a {@code DataSource}: on PostgreSQL tiered with a
 * {@code RedisConnectionFactory}, else PostgreSQL; on another database, Redis with a
 * {@code RedisConnectionFactory}, else in-memory;
 * <li>Redis: {@code redis}, or {@code auto} with a {@code RedisConnectionFactory} only;
 * <li>in-memory: {@code memory}, or {@code auto} when nothing else could be configured
 * (with a warning that it protects one instance only);
 * <li>a configuration that fails start-up when the requested type could not be
 * configured, saying what it needs.
 * </ol>
 * Every {@link IdempotencyListener} bean is told about the engine's events (in
 * {@code @Order}). With a unique {@code ObservationRegistry} bean the filter observes
 * each request to an idempotent endpoint, with a unique
 * {@code IdempotencyObservationConvention} bean as its convention; that observation is
 * also the source of the request metrics (see
 * {@link IdempotencyMetricsAutoConfiguration}). The convention is the filter's only:
 * calls of methods, of the template and of Kafka listeners are observed with the default
 * one (see {@link IdempotencyMethodAutoConfiguration}).
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
@AutoConfiguration(afterName = { "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
		"org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
		"org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration" })
@Conditional(ReactiveOptOutCondition.class)
@EnableConfigurationProperties(IdempotencyProperties.class)
@ImportRuntimeHints(IdempotencyRuntimeHints.class)
@Import({ TieredStoreConfiguration.class, JdbcStoreConfiguration.class, AutoStoreSelection.class,
		RedisStoreConfiguration.class, InMemoryStoreConfiguration.class, UnavailableStoreConfiguration.class,
		EncryptionConfiguration.class, ProcessedConditionsCheck.Registrar.class })
public final class IdempotencyAutoConfiguration {

	// static: the binder looks converters up before this configuration is created
	@Bean
	@ConfigurationPropertiesBinding
	static StatusSetConverter idempotencyStatusSetConverter() {
		return new StatusSetConverter();
	}

	@Bean
	@ConditionalOnMissingBean
	IdempotencyEngine idempotencyEngine(IdempotencyStore store, ObjectProvider<IdempotencyListener> listeners,
			ObjectProvider<EngineStoreDecorator> decorators, IdempotencyProperties properties) {
		IdempotencyStore engineStore = store;
		for (EngineStoreDecorator decorator : decorators.orderedStream().toList()) {
			engineStore = decorator.decorate(engineStore);
		}
		IdempotencyProperties.ReplayCache replayCache = properties.getReplayCache();
		if (replayCache.isEnabled()) {
			// outermost: a replay answered from memory
			// reaches no store, and is timed as none
			ReplayCachingStore cache = new ReplayCachingStore(engineStore);
			cache.setTimeToLive(replayCache.getTimeToLive());
			cache.setMaxBytes(replayCache.getMaxSize().toBytes());
			engineStore = cache;
		}
		IdempotencyEngine engine = new IdempotencyEngine(engineStore);
		List<IdempotencyListener> all = listeners.orderedStream().toList();
		if (!all.isEmpty()) {
			engine.setListener(CompositeListener.of(IdempotencyListener.class, all));
		}
		return engine;
	}

	@Bean
	@ConditionalOnMissingBean
	NamedPolicies idempotencyPolicies(IdempotencyProperties properties,
			ObjectProvider<RequestFingerprinter> fingerprinter) {
		PolicyMapper mapper = new PolicyMapper(properties);
		mapper.validateGlobalSettings();
		RequestFingerprinter custom = fingerprinter.getIfAvailable();
		return mapper.policies((settings) -> (custom != null) ? custom : Fingerprinters.create(settings));
	}

	@Bean
	ClientTimeoutWarnings idempotencyClientTimeoutWarnings(ListableBeanFactory beanFactory,
			IdempotencyProperties properties) {
		return new ClientTimeoutWarnings(beanFactory, properties);
	}

	/**
	 * What a Spring MVC application adds: the endpoint resolver, the scope resolver and
	 * the filter.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = Type.SERVLET)
	@ConditionalOnClass({ DispatcherType.class, RequestMappingInfoHandlerMapping.class })
	static class ServletConfiguration {

		@Bean
		@ConditionalOnMissingBean(IdempotentEndpointResolver.class)
		HandlerMappingEndpointResolver idempotentEndpointResolver(IdempotencyProperties properties,
				NamedPolicies policies) {
			return new HandlerMappingEndpointResolver(policies, new PolicyMapper(properties).endpointRules(policies));
		}

		@Bean
		@ConditionalOnMissingBean
		IdempotencyScopeResolver idempotencyScopeResolver(IdempotencyProperties properties) {
			return new DefaultIdempotencyScopeResolver(properties.getScopeHeader());
		}

		@Configuration(proxyBeanMethods = false)
		@ConditionalOnBooleanProperty(name = "idempotency.enabled", matchIfMissing = true)
		static class FilterConfiguration {

			private static final boolean TRANSACTIONS_PRESENT = ClassUtils.isPresent(
					"org.springframework.transaction.PlatformTransactionManager",
					FilterConfiguration.class.getClassLoader());

			// where a request without a principal is likely one that should have had one
			private static final String SECURITY_CONTEXT = "org.springframework.security.core.context.SecurityContextHolder";

			@Bean
			@ConditionalOnMissingBean
			IdempotencyFilter idempotencyFilter(IdempotencyEngine engine, IdempotentEndpointResolver endpointResolver,
					NamedPolicies policies, IdempotencyScopeResolver scopeResolver, IdempotencyProperties properties,
					ObjectProvider<ObservationRegistry> observationRegistry,
					ObjectProvider<IdempotencyObservationConvention> observationConvention,
					ObjectProvider<IdempotencyStore> stores, ObjectProvider<IdempotencyProblemRenderer> problemRenderer,
					ObjectProvider<StoredResponseCustomizer> storedResponseCustomizers,
					ListableBeanFactory beanFactory) {
				IdempotencyFilter filter = new IdempotencyFilter(engine, endpointResolver, policies);
				if (!policies.transactionalNames().isEmpty()) {
					if (!TRANSACTIONS_PRESENT) {
						throw new IllegalStateException("Transactional idempotency policies "
								+ policies.transactionalNames() + " need spring-tx and a transaction manager");
					}
					TransactionalMode.configure(filter, policies, stores.getIfUnique(engine::store), beanFactory);
				}
				filter.setKeyHeader(properties.getKeyHeader());
				filter.setScopeResolver(scopeResolver);
				filter.setAnonymousRequests(
						HttpFilterSettings.anonymousRequests(properties, beanFactory, SECURITY_CONTEXT));
				filter.setProblemTypeBase(properties.getProblemTypeBase());
				filter.setProblemRenderer(problemRenderer.getIfUnique());
				filter.setExpiresHeader(properties.isExpiresHeader());
				filter.setClientTtlHeader(properties.getClientTtlHeader());
				filter.setStoredHeaders(properties.getResponseHeaders().getInclude(),
						HttpFilterSettings.excludedResponseHeaders(properties));
				List<StoredResponseCustomizer> customizers = storedResponseCustomizers.orderedStream().toList();
				if (!customizers.isEmpty()) {
					filter.setStoredResponseCustomizer(
							(customizers.size() == 1) ? customizers.get(0) : (request, policy, response) -> {
								StoredResponse customized = response;
								for (StoredResponseCustomizer customizer : customizers) {
									customized = customizer.customize(request, policy, customized);
								}
								return customized;
							});
				}
				observationRegistry.ifUnique(filter::setObservationRegistry);
				observationConvention.ifUnique(filter::setObservationConvention);
				return filter;
			}

			@Bean
			@ConditionalOnMissingBean(name = "idempotencyFilterRegistration")
			FilterRegistrationBean<IdempotencyFilter> idempotencyFilterRegistration(IdempotencyFilter filter,
					IdempotencyProperties properties) {
				FilterRegistrationBean<IdempotencyFilter> registration = new FilterRegistrationBean<>(filter);
				registration.setOrder(properties.getFilter().getOrder());
				registration
					.setDispatcherTypes(EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC, DispatcherType.ERROR));
				return registration;
			}

			@Bean
			@ConditionalOnMissingBean(name = "idempotencyEndpointResolutionCheck")
			@ConditionalOnBooleanProperty(name = "idempotency.filter.check-handler", matchIfMissing = true)
			WebMvcConfigurer idempotencyEndpointResolutionCheck(IdempotentEndpointResolver endpointResolver,
					IdempotencyProperties properties, ObjectProvider<IdempotencyProblemRenderer> problemRenderer,
					ObjectProvider<NamedPolicies> policies) {
				return new EndpointResolutionCheckConfigurer(endpointResolver, properties,
						problemRenderer.getIfUnique(), policies.getIfUnique());
			}

			@Bean
			@ConditionalOnMissingBean(name = "idempotencyRequestCleanupListener")
			ServletListenerRegistrationBean<ServletRequestListener> idempotencyRequestCleanupListener(
					IdempotencyFilter filter) {
				return new ServletListenerRegistrationBean<>(filter.requestCleanupListener());
			}

		}

	}

}
