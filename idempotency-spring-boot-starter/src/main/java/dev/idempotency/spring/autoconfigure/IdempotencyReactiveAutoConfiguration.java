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

import dev.idempotency.spring.Idempotent;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.result.method.RequestMappingInfo;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;

/**
 * Auto-configuration for reactive (WebFlux) applications, which the library does not
 * protect: its filter is a servlet filter. Rather than leave {@code @Idempotent} handlers
 * silently unprotected, start-up fails naming them (or, with
 * {@code idempotency.reactive.fail-on-unprotected-handlers=false}, a warning does).
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
@AutoConfiguration
@ConditionalOnWebApplication(type = Type.REACTIVE)
@ConditionalOnClass(RequestMappingHandlerMapping.class)
@EnableConfigurationProperties(IdempotencyReactiveProperties.class)
public final class IdempotencyReactiveAutoConfiguration {

	private static final Log logger = LogFactory.getLog(IdempotencyReactiveAutoConfiguration.class);

	@Bean
	SmartInitializingSingleton idempotencyReactiveHandlersCheck(ListableBeanFactory beanFactory) {
		return () -> check(beanFactory);
	}

	private static void check(ListableBeanFactory beanFactory) {
		List<String> unprotected = beanFactory.getBeansOfType(RequestMappingHandlerMapping.class)
			.values()
			.stream()
			.flatMap((mapping) -> mapping.getHandlerMethods().entrySet().stream())
			.filter(IdempotencyReactiveAutoConfiguration::isIdempotent)
			.map((entry) -> entry.getKey() + " " + entry.getValue().getShortLogMessage())
			.sorted()
			.toList();
		if (unprotected.isEmpty()) {
			return;
		}
		String message = unprotected.size() + " handler(s) of this reactive (WebFlux) application are annotated"
				+ " with @Idempotent, but the idempotency starter protects Spring MVC (servlet) handlers only:"
				+ " nothing protects " + String.join("; ", unprotected);
		if (beanFactory.getBean(IdempotencyReactiveProperties.class).isFailOnUnprotectedHandlers()) {
			throw new IllegalStateException(message + ". Run them on Spring MVC, or remove @Idempotent (set"
					+ " idempotency.reactive.fail-on-unprotected-handlers=false to start anyway)");
		}
		logger.warn(message);
	}

	private static boolean isIdempotent(Map.Entry<RequestMappingInfo, HandlerMethod> entry) {
		HandlerMethod handler = entry.getValue();
		return AnnotatedElementUtils.hasAnnotation(handler.getMethod(), Idempotent.class)
				|| AnnotatedElementUtils.hasAnnotation(handler.getBeanType(), Idempotent.class);
	}

}
