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
import dev.idempotency.spring.NamedPolicies;
import dev.idempotency.spring.method.CurrentRequestScope;
import dev.idempotency.spring.method.IdempotencyTemplate;
import dev.idempotency.spring.method.IdempotentMethodAdvisor;
import dev.idempotency.spring.method.IdempotentMethodInterceptor;
import dev.idempotency.spring.method.IdempotentResultCodec;
import dev.idempotency.spring.web.IdempotencyScopeResolver;
import io.micrometer.observation.ObservationRegistry;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.util.ClassUtils;
import org.springframework.util.function.SingletonSupplier;

/**
 * Auto-configuration of idempotent method calls: an {@link IdempotencyTemplate} over the
 * engine and policies of {@link IdempotencyAutoConfiguration}, and the
 * {@link IdempotentMethodAdvisor} that applies {@code @Idempotent(key = ...)} to the
 * methods of any bean. Results are written and read with the application's
 * {@link JsonMapper}, else a default one, except those of the types that an
 * {@link IdempotentResultCodec} bean supports. A call made while an HTTP request is
 * handled has the request's scope by default (its principal, say). It applies to a Spring
 * MVC application and to an application that is not a web application (a message
 * consumer, say), wherever {@link IdempotencyAutoConfiguration} configured the engine.
 * With a unique {@code ObservationRegistry} bean, each call (of the template, of a
 * method, of a Kafka listener) is observed as {@code idempotency.call}.
 * <p>
 * The advisor is an infrastructure bean, created before the other beans are, so it
 * reaches the template (and through it the engine and the store) only when the first
 * annotated method is met: the store and its connections are post-processed as usual.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class)
@ConditionalOnClass({ JsonMapper.class, IdempotentMethodAdvisor.class })
@ConditionalOnBean({ IdempotencyEngine.class, NamedPolicies.class })
@ConditionalOnBooleanProperty(name = "idempotency.enabled", matchIfMissing = true)
@Import(IdempotencyMethodAutoConfiguration.AutoProxyRegistrar.class)
public final class IdempotencyMethodAutoConfiguration {

	private static final boolean SERVLET_PRESENT = ClassUtils.isPresent("jakarta.servlet.http.HttpServletRequest",
			IdempotencyMethodAutoConfiguration.class.getClassLoader())
			&& ClassUtils.isPresent("org.springframework.web.context.request.RequestContextHolder",
					IdempotencyMethodAutoConfiguration.class.getClassLoader());

	@Bean
	@ConditionalOnMissingBean
	IdempotencyTemplate idempotencyTemplate(IdempotencyEngine engine, NamedPolicies policies,
			ObjectProvider<JsonMapper> jsonMapper, IdempotencyProperties properties, ListableBeanFactory beanFactory,
			ObjectProvider<IdempotentResultCodec> resultCodecs,
			ObjectProvider<ObservationRegistry> observationRegistry) {
		IdempotencyTemplate template = new IdempotencyTemplate(engine, policies,
				jsonMapper.getIfUnique(() -> JsonMapper.builder().build()));
		template.setResultCodecs(resultCodecs.orderedStream().toList());
		observationRegistry.ifUnique(template::setObservationRegistry);
		PolicyMapper mapper = new PolicyMapper(properties);
		Map<String, List<Class<? extends Throwable>>> deterministic = mapper.deterministicExceptions(policies);
		// each policy alone first, so that a type that cannot be used names its property
		deterministic.forEach((name, types) -> {
			try {
				template.setDeterministicExceptions(Map.of(name, types));
			}
			catch (IllegalArgumentException ex) {
				throw new InvalidConfigurationPropertyValueException(mapper.deterministicExceptionsProperty(name),
						types, ex.getMessage());
			}
		});
		template.setDeterministicExceptions(deterministic);
		if (SERVLET_PRESENT) {
			RequestScopes.apply(template, beanFactory);
		}
		return template;
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	@ConditionalOnMissingBean
	static IdempotentMethodAdvisor idempotentMethodAdvisor(ObjectProvider<IdempotencyTemplate> template,
			BeanFactory beanFactory) {
		SingletonSupplier<IdempotencyTemplate> lazyTemplate = SingletonSupplier.of(template::getObject);
		return new IdempotentMethodAdvisor(new IdempotentMethodInterceptor(lazyTemplate, beanFactory),
				(policy) -> lazyTemplate.obtain().withPolicy(policy));
	}

	/**
	 * Gives calls made while a servlet request is handled the request's scope; loaded
	 * only when the servlet API and spring-web are present.
	 */
	private static final class RequestScopes {

		static void apply(IdempotencyTemplate template, ListableBeanFactory beanFactory) {
			IdempotencyScopeResolver resolver = beanFactory.getBeanProvider(IdempotencyScopeResolver.class)
				.getIfUnique();
			if (resolver != null) {
				template.setDefaultScope(new CurrentRequestScope(resolver));
			}
		}

	}

	/**
	 * Makes sure an auto-proxy creator exists, as {@code @EnableCaching} does; Spring
	 * Boot's own (class proxies by default) is kept when it registers one.
	 */
	static class AutoProxyRegistrar implements ImportBeanDefinitionRegistrar {

		@Override
		public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
			AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
		}

	}

}
