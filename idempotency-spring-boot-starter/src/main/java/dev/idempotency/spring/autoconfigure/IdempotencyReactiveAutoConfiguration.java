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

import java.util.List;
import java.util.Map;

import dev.idempotency.core.engine.IdempotencyEngine;
import dev.idempotency.spring.Idempotent;
import dev.idempotency.spring.NamedPolicies;
import dev.idempotency.spring.observation.IdempotencyObservationConvention;
import dev.idempotency.spring.webflux.IdempotencyWebFilter;
import dev.idempotency.spring.webflux.WebFluxEndpointResolver;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.http.codec.ServerCodecConfigurer;
import org.springframework.util.ClassUtils;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.result.method.RequestMappingInfo;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.server.WebExceptionHandler;

/**
 * Auto-configuration for reactive (WebFlux) applications: the
 * {@link IdempotencyWebFilter}, over the engine, store and policies that
 * {@link IdempotencyAutoConfiguration} configures for every application.
 * <p>
 * With {@code idempotency.reactive.enabled=false} the application opts out: it gets no
 * engine, no store and no filter, and rather than leave {@code @Idempotent} handlers
 * silently unprotected, start-up fails naming them (or, with
 * {@code idempotency.reactive.fail-on-unprotected-handlers=false}, a warning does).
 * <p>
 * What the WebFlux filter does not apply yet fails start-up rather than be ignored where
 * ignoring it could weaken a guarantee: a custom {@code IdempotencyScopeResolver} (keys
 * of different callers could share a scope) and a {@code StoredResponseCustomizer} (a
 * response meant to be redacted would be stored whole). Transactional policies are
 * refused on WebFlux handlers by {@link WebFluxEndpointResolver}.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class)
@ConditionalOnWebApplication(type = Type.REACTIVE)
@ConditionalOnClass(RequestMappingHandlerMapping.class)
@EnableConfigurationProperties(IdempotencyReactiveProperties.class)
@Import(ProcessedConditionsCheck.Registrar.class)
public final class IdempotencyReactiveAutoConfiguration {

	private static final Log logger = LogFactory.getLog(IdempotencyReactiveAutoConfiguration.class);

	// where a request without a principal is likely one that should have had one
	private static final String REACTIVE_SECURITY_CONTEXT = "org.springframework.security.core.context.ReactiveSecurityContextHolder";

	// the servlet adapter's extension points, which the WebFlux filter does not apply
	private static final List<String> REFUSED_EXTENSIONS = List.of(
			"dev.idempotency.spring.web.IdempotencyScopeResolver",
			"dev.idempotency.spring.web.StoredResponseCustomizer");

	private static final String PROBLEM_RENDERER = "dev.idempotency.spring.web.IdempotencyProblemRenderer";

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBooleanProperty(name = "idempotency.reactive.enabled", matchIfMissing = true)
	@ConditionalOnBooleanProperty(name = "idempotency.enabled", matchIfMissing = true)
	@ConditionalOnBean(IdempotencyEngine.class)
	static class WebFilterConfiguration {

		@Bean
		@ConditionalOnMissingBean
		WebFluxEndpointResolver idempotencyWebFluxEndpointResolver(IdempotencyProperties properties,
				NamedPolicies policies) {
			return new WebFluxEndpointResolver(policies, new PolicyMapper(properties).endpointRules(policies));
		}

		@Bean
		@ConditionalOnMissingBean
		IdempotencyWebFilter idempotencyWebFilter(IdempotencyEngine engine, WebFluxEndpointResolver endpointResolver,
				NamedPolicies policies, IdempotencyProperties properties, ObjectProvider<ServerCodecConfigurer> codecs,
				ObjectProvider<WebExceptionHandler> exceptionHandlers,
				ObjectProvider<ObservationRegistry> observationRegistry,
				ObjectProvider<IdempotencyObservationConvention> observationConvention,
				ListableBeanFactory beanFactory) {
			refuseServletExtensions(beanFactory);
			IdempotencyWebFilter filter = new IdempotencyWebFilter(engine, endpointResolver, policies);
			filter.setKeyHeader(properties.getKeyHeader());
			filter.setScopeHeader(properties.getScopeHeader());
			filter.setAnonymousRequests(
					HttpFilterSettings.anonymousRequests(properties, beanFactory, REACTIVE_SECURITY_CONTEXT));
			filter.setProblemTypeBase(properties.getProblemTypeBase());
			filter.setExpiresHeader(properties.isExpiresHeader());
			filter.setClientTtlHeader(properties.getClientTtlHeader());
			filter.setStoredHeaders(properties.getResponseHeaders().getInclude(),
					HttpFilterSettings.excludedResponseHeaders(properties));
			filter.setCodecs(codecs.getIfUnique());
			filter.setExceptionHandlers(exceptionHandlers.orderedStream().toList());
			filter.setOrder(properties.getFilter().getOrder());
			observationRegistry.ifUnique(filter::setObservationRegistry);
			observationConvention.ifUnique(filter::setObservationConvention);
			return filter;
		}

		private static void refuseServletExtensions(ListableBeanFactory beanFactory) {
			ClassLoader classLoader = (beanFactory instanceof ConfigurableBeanFactory configurable)
					? configurable.getBeanClassLoader() : null;
			for (String extension : REFUSED_EXTENSIONS) {
				if (ClassUtils.isPresent(extension, classLoader) && beanFactory
					.getBeanNamesForType(ClassUtils.resolveClassName(extension, classLoader)).length > 0) {
					throw new IllegalStateException("A bean of type " + extension + " is defined, but the WebFlux"
							+ " idempotency filter does not apply it (it takes servlet requests): remove it, or run the"
							+ " application on Spring MVC");
				}
			}
			if (ClassUtils.isPresent(PROBLEM_RENDERER, classLoader) && beanFactory
				.getBeanNamesForType(ClassUtils.resolveClassName(PROBLEM_RENDERER, classLoader)).length > 0) {
				logger.warn("A bean of type " + PROBLEM_RENDERER + " is defined, but the WebFlux idempotency filter"
						+ " does not apply it: its problems are rendered as RFC 9457 problem details");
			}
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBooleanProperty(name = "idempotency.reactive.enabled", havingValue = false)
	static class OptedOutConfiguration {

		@Bean
		SmartInitializingSingleton idempotencyReactiveHandlersCheck(ListableBeanFactory beanFactory) {
			return () -> check(beanFactory);
		}

		private static void check(ListableBeanFactory beanFactory) {
			List<String> unprotected = beanFactory.getBeansOfType(RequestMappingHandlerMapping.class)
				.values()
				.stream()
				.flatMap((mapping) -> mapping.getHandlerMethods().entrySet().stream())
				.filter(OptedOutConfiguration::isIdempotent)
				.map((entry) -> entry.getKey() + " " + entry.getValue().getShortLogMessage())
				.sorted()
				.toList();
			if (unprotected.isEmpty()) {
				return;
			}
			String message = unprotected.size() + " handler(s) of this reactive (WebFlux) application are annotated"
					+ " with @Idempotent, but idempotency.reactive.enabled=false turns the WebFlux filter off:"
					+ " nothing protects " + String.join("; ", unprotected);
			if (beanFactory.getBean(IdempotencyReactiveProperties.class).isFailOnUnprotectedHandlers()) {
				throw new IllegalStateException(message + ". Remove idempotency.reactive.enabled=false, or remove"
						+ " @Idempotent (set idempotency.reactive.fail-on-unprotected-handlers=false to start anyway)");
			}
			logger.warn(message);
		}

		private static boolean isIdempotent(Map.Entry<RequestMappingInfo, HandlerMethod> entry) {
			HandlerMethod handler = entry.getValue();
			return AnnotatedElementUtils.hasAnnotation(handler.getMethod(), Idempotent.class)
					|| AnnotatedElementUtils.hasAnnotation(handler.getBeanType(), Idempotent.class);
		}

	}

}
