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

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.MemberCategory;
import org.springframework.beans.factory.aot.BeanFactoryInitializationAotContribution;
import org.springframework.beans.factory.aot.BeanFactoryInitializationAotProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Registers, when Spring's AOT processing runs, the exception types that the
 * {@code deterministic-exceptions} of the build's properties name (globally and per
 * policy): an idempotent method's stored exception is created again on replay by its
 * class name and its public constructor, reflectively. Types set in code
 * ({@code IdempotencyTemplate.setDeterministicExceptions}) or only in properties given at
 * run time need a hint of the application's
 * ({@code @RegisterReflection(classes = ..., memberCategories = INVOKE_PUBLIC_CONSTRUCTORS)}).
 *
 * @author Idempotency contributors
 */
class DeterministicExceptionsAotProcessor implements BeanFactoryInitializationAotProcessor {

	@Override
	public @Nullable BeanFactoryInitializationAotContribution processAheadOfTime(
			ConfigurableListableBeanFactory beanFactory) {
		if (!beanFactory.containsBean(ConfigurableApplicationContext.ENVIRONMENT_BEAN_NAME)) {
			return null;
		}
		Environment environment = beanFactory.getBean(ConfigurableApplicationContext.ENVIRONMENT_BEAN_NAME,
				Environment.class);
		Set<Class<?>> types = new LinkedHashSet<>();
		for (String name : declared(environment)) {
			ClassLoader classLoader = beanFactory.getBeanClassLoader();
			if (ClassUtils.isPresent(name, classLoader)) {
				types.add(ClassUtils.resolveClassName(name, classLoader));
			}
		}
		if (types.isEmpty()) {
			return null;
		}
		return (generationContext,
				code) -> types.forEach((type) -> generationContext.getRuntimeHints()
					.reflection()
					.registerType(type, MemberCategory.INVOKE_PUBLIC_CONSTRUCTORS));
	}

	/**
	 * Return the class names of the deterministic exceptions that an environment sets.
	 * @param environment the environment
	 * @return the names, the global setting's first
	 */
	static Set<String> declared(Environment environment) {
		Set<String> names = new LinkedHashSet<>();
		Binder binder = Binder.get(environment);
		Bindable<List<String>> list = Bindable.listOf(String.class);
		binder.bind("idempotency.deterministic-exceptions", list).ifBound(names::addAll);
		// each policy's other settings are left unbound
		binder.bind("idempotency.policies", Bindable.mapOf(String.class, Policy.class))
			.ifBound((policies) -> policies.values().forEach((policy) -> {
				if (policy != null && policy.deterministicExceptions() != null) {
					names.addAll(policy.deterministicExceptions());
				}
			}));
		names.removeIf(String::isBlank);
		return names;
	}

	/**
	 * The one setting of a policy that this reads.
	 *
	 * @param deterministicExceptions the class names, or {@code null}
	 */
	record Policy(@Nullable List<String> deterministicExceptions) {

	}

}
