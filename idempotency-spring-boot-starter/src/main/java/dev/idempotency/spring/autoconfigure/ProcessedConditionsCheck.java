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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.BooleanSupplier;

import org.springframework.aot.AotDetector;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.Ordered;
import org.springframework.core.PriorityOrdered;
import org.springframework.core.env.Environment;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Fails the start-up of an application that runs from the code of Spring's AOT processing
 * ({@code -Dspring.aot.enabled=true}, or a native image) when one of the properties that
 * decide which of the starter's beans exist has another value than when the application
 * was processed. AOT processing evaluates the conditions of the auto-configurations at
 * build time, and the beans it found are the beans the processed application has,
 * whatever its environment says at run time: an application processed with
 * {@code idempotency.store.type=auto} keeps the store {@code auto} chose, an application
 * processed without {@code idempotency.encryption.enabled} stores records in the clear.
 * Starting anyway would run with settings other than the ones the application was given;
 * this check names the property and both values instead.
 * <p>
 * The values are recorded in the bean definition of this check by {@link Registrar},
 * which runs where the configuration classes are parsed: at start-up without AOT (where
 * the check does nothing), at build time with it. Only the starter's own properties are
 * checked, not what the conditions find in the application (a {@code DataSource}, a Redis
 * connection factory, a store bean of its own) nor Spring Boot's own conditions
 * (docs/aot.md).
 *
 * @author Idempotency contributors
 */
final class ProcessedConditionsCheck implements BeanFactoryPostProcessor, EnvironmentAware, PriorityOrdered {

	/**
	 * The name of the check's bean.
	 */
	static final String BEAN_NAME = "idempotencyProcessedConditionsCheck";

	private final Map<String, String> processed;

	private BooleanSupplier aheadOfTime = AotDetector::useGeneratedArtifacts;

	private Environment environment = new StandardEnvironment();

	/**
	 * Create a check of the values the properties had when the bean definitions were
	 * registered.
	 * @param processed the values, by property name
	 */
	ProcessedConditionsCheck(Map<String, String> processed) {
		this.processed = Map.copyOf(processed);
	}

	/**
	 * Set what tells whether the application runs from the code of AOT processing.
	 * @param aheadOfTime {@link AotDetector#useGeneratedArtifacts()} by default
	 */
	void setAheadOfTime(BooleanSupplier aheadOfTime) {
		this.aheadOfTime = aheadOfTime;
	}

	@Override
	public void setEnvironment(Environment environment) {
		this.environment = environment;
	}

	@Override
	public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {
		if (!this.aheadOfTime.getAsBoolean()) {
			return;
		}
		Map<String, String> now = ConditionProperty.valuesIn(this.environment);
		List<String> changed = new ArrayList<>();
		for (ConditionProperty property : ConditionProperty.values()) {
			String then = this.processed.get(property.propertyName);
			String current = now.get(property.propertyName);
			if (then != null && !property.sameOutcome(then, current)) {
				changed.add(property.propertyName + " is " + current + " here, and was " + then + " at build time");
			}
		}
		if (!changed.isEmpty()) {
			throw new IllegalStateException("The idempotency starter's conditions were evaluated when Spring's AOT"
					+ " processing built this application, and the beans they chose are the ones it runs with: "
					+ String.join("; ", changed) + ". Process the application again with these values (the properties"
					+ " or profiles of the process-aot goal or of the processAot task), or, on the JVM, start it"
					+ " without -Dspring.aot.enabled=true");
		}
	}

	@Override
	public int getOrder() {
		return Ordered.HIGHEST_PRECEDENCE;
	}

	/**
	 * The starter's properties that its conditions read, each with its value as the
	 * condition sees it.
	 */
	enum ConditionProperty {

		ENABLED("idempotency.enabled", "true"),

		STORE_TYPE(StoreTypeCondition.PROPERTY, "auto") {

			@Override
			String valueIn(Binder binder) {
				return StoreTypeCondition.configuredType(binder).name().toLowerCase(Locale.ROOT);
			}

		},

		ENCRYPTION_ENABLED("idempotency.encryption.enabled", "false"),

		FILTER_CHECK_HANDLER("idempotency.filter.check-handler", "true"),

		REACTIVE_ENABLED("idempotency.reactive.enabled", "true"),

		JDBC_CLEANUP_ENABLED("idempotency.jdbc.cleanup.enabled", "true"),

		// the condition tells never from the others (always, embedded)
		JDBC_INITIALIZE_SCHEMA("idempotency.jdbc.initialize-schema", "always") {

			@Override
			String valueIn(Binder binder) {
				return binder.bind(this.propertyName, String.class).orElse("always").toLowerCase(Locale.ROOT);
			}

			@Override
			boolean sameOutcome(String processed, String current) {
				return "never".equals(processed) == "never".equals(current);
			}

		},

		CLIENT_ENABLED("idempotency.client.enabled", "false");

		final String propertyName;

		private final String defaultValue;

		ConditionProperty(String propertyName, String defaultValue) {
			this.propertyName = propertyName;
			this.defaultValue = defaultValue;
		}

		String valueIn(Binder binder) {
			return binder.bind(this.propertyName, Boolean.class).map(String::valueOf).orElse(this.defaultValue);
		}

		boolean sameOutcome(String processed, String current) {
			return processed.equals(current);
		}

		static Map<String, String> valuesIn(Environment environment) {
			Binder binder = Binder.get(environment);
			Map<String, String> values = new LinkedHashMap<>();
			for (ConditionProperty property : values()) {
				String value;
				try {
					value = property.valueIn(binder);
				}
				catch (BindException ex) {
					// not a value the condition reads: as it was written
					value = String.valueOf(environment.getProperty(property.propertyName));
				}
				values.put(property.propertyName, value);
			}
			return values;
		}

	}

	/**
	 * Registers the check with the values the properties have now.
	 */
	static final class Registrar implements ImportBeanDefinitionRegistrar, EnvironmentAware {

		private Environment environment = new StandardEnvironment();

		@Override
		public void setEnvironment(Environment environment) {
			this.environment = environment;
		}

		@Override
		public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
			if (registry.containsBeanDefinition(BEAN_NAME)) {
				return;
			}
			RootBeanDefinition definition = new RootBeanDefinition(ProcessedConditionsCheck.class);
			definition.setRole(BeanDefinition.ROLE_INFRASTRUCTURE);
			definition.getConstructorArgumentValues()
				.addIndexedArgumentValue(0, new LinkedHashMap<>(ConditionProperty.valuesIn(this.environment)));
			registry.registerBeanDefinition(BEAN_NAME, definition);
		}

	}

}
