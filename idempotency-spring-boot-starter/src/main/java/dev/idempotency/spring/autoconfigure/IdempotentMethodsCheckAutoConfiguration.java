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

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

import dev.idempotency.spring.Idempotent;
import dev.idempotency.spring.method.IdempotentMethodAdvisor;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Fails start-up when beans have methods annotated with {@code @Idempotent} and a key but
 * nothing applies the annotation: no {@link IdempotentMethodAdvisor}, because no engine
 * is configured (a reactive application that turned the WebFlux filter off has none).
 * Such methods would otherwise run unprotected, silently.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
@AutoConfiguration(after = { IdempotencyAutoConfiguration.class, IdempotencyMethodAutoConfiguration.class })
@ConditionalOnMissingBean(IdempotentMethodAdvisor.class)
@ConditionalOnBooleanProperty(name = "idempotency.enabled", matchIfMissing = true)
public final class IdempotentMethodsCheckAutoConfiguration {

	@Bean
	SmartInitializingSingleton idempotentMethodsCheck(ListableBeanFactory beanFactory) {
		return () -> check(beanFactory);
	}

	private static void check(ListableBeanFactory beanFactory) {
		TreeSet<String> unprotected = new TreeSet<>();
		for (String name : beanFactory.getBeanDefinitionNames()) {
			Class<?> type = beanFactory.getType(name, false);
			if (type != null) {
				unprotected.addAll(keyedMethods(ClassUtils.getUserClass(type)));
			}
		}
		if (!unprotected.isEmpty()) {
			throw new IllegalStateException(unprotected.size() + " method(s) are annotated with @Idempotent and a key,"
					+ " but this application has no idempotency engine: a reactive (WebFlux) application with"
					+ " idempotency.reactive.enabled=false has none. Nothing would protect "
					+ String.join(", ", unprotected)
					+ ". Remove the annotations, or set idempotency.enabled=false to start anyway");
		}
	}

	private static List<String> keyedMethods(Class<?> type) {
		List<String> methods = new ArrayList<>();
		ReflectionUtils.doWithMethods(type, (method) -> {
			Idempotent idempotent = AnnotatedElementUtils.findMergedAnnotation(method, Idempotent.class);
			if (idempotent != null && !idempotent.key().isEmpty()) {
				methods.add(ClassUtils.getQualifiedMethodName(method, type));
			}
		}, ReflectionUtils.USER_DECLARED_METHODS);
		return methods;
	}

}
