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

import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.core.type.AnnotationMetadata;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * Tests for {@link ProcessedConditionsCheck}: the registrar records the values the
 * starter's conditions read, and the check refuses, in AOT mode only, a run-time value
 * that would have changed a condition's outcome.
 *
 * @author Idempotency contributors
 */
class ProcessedConditionsCheckTests {

	@Test
	void recordsTheValuesTheConditionsSeeWithTheirDefaults() {
		Map<String, String> recorded = recorded(new MockEnvironment());
		assertThat(recorded).containsEntry("idempotency.enabled", "true")
			.containsEntry("idempotency.store.type", "auto")
			.containsEntry("idempotency.encryption.enabled", "false")
			.containsEntry("idempotency.filter.check-handler", "true")
			.containsEntry("idempotency.reactive.enabled", "true")
			.containsEntry("idempotency.jdbc.cleanup.enabled", "true")
			.containsEntry("idempotency.jdbc.initialize-schema", "always")
			.containsEntry("idempotency.client.enabled", "false");
		MockEnvironment configured = new MockEnvironment().withProperty("idempotency.store.type", "TIERED")
			.withProperty("idempotency.encryption.enabled", "TRUE")
			.withProperty("idempotency.jdbc.initialize-schema", "never");
		assertThat(recorded(configured)).containsEntry("idempotency.store.type", "tiered")
			.containsEntry("idempotency.encryption.enabled", "true")
			.containsEntry("idempotency.jdbc.initialize-schema", "never");
	}

	@Test
	void registersOneCheckWhateverImportsIt() {
		DefaultListableBeanFactory registry = new DefaultListableBeanFactory();
		registrar(new MockEnvironment().withProperty("idempotency.store.type", "redis"))
			.registerBeanDefinitions(AnnotationMetadata.introspect(IdempotencyAutoConfiguration.class), registry);
		registrar(new MockEnvironment().withProperty("idempotency.store.type", "jdbc")).registerBeanDefinitions(
				AnnotationMetadata.introspect(IdempotencyReactiveAutoConfiguration.class), registry);
		assertThat(registry.getBeanNamesForType(ProcessedConditionsCheck.class))
			.containsExactly(ProcessedConditionsCheck.BEAN_NAME);
		assertThat(registry.getBeanDefinition(ProcessedConditionsCheck.BEAN_NAME).getRole())
			.isEqualTo(BeanDefinition.ROLE_INFRASTRUCTURE);
		assertThat(registry.getBean(ProcessedConditionsCheck.class)).isNotNull();
		assertThat(recordedIn(registry)).containsEntry("idempotency.store.type", "redis");
	}

	@Test
	void withoutAotAnyValueIsAccepted() {
		ProcessedConditionsCheck check = check(recorded(new MockEnvironment()), false,
				new MockEnvironment().withProperty("idempotency.store.type", "jdbc"));
		assertThatNoException().isThrownBy(() -> check.postProcessBeanFactory(new DefaultListableBeanFactory()));
	}

	@Test
	void inAotModeTheValuesOfTheBuildAreAccepted() {
		Map<String, String> processed = recorded(
				new MockEnvironment().withProperty("idempotency.store.type", "tiered"));
		// other spellings of the same values, and properties no condition reads
		ProcessedConditionsCheck check = check(processed, true,
				new MockEnvironment().withProperty("idempotency.store.type", "TIERED")
					.withProperty("idempotency.enabled", "true")
					.withProperty("idempotency.lock-timeout", "2s"));
		assertThatNoException().isThrownBy(() -> check.postProcessBeanFactory(new DefaultListableBeanFactory()));
	}

	@Test
	void inAotModeAnotherStoreTypeFailsNamingBothValues() {
		ProcessedConditionsCheck check = check(recorded(new MockEnvironment()), true,
				new MockEnvironment().withProperty("idempotency.store.type", "jdbc")
					.withProperty("idempotency.encryption.enabled", "true"));
		assertThatIllegalStateException()
			.isThrownBy(() -> check.postProcessBeanFactory(new DefaultListableBeanFactory()))
			.withMessageContaining("Spring's AOT processing built this application")
			.withMessageContaining("idempotency.store.type is jdbc here, and was auto at build time")
			.withMessageContaining("idempotency.encryption.enabled is true here, and was false at build time")
			.withMessageContaining("process-aot");
	}

	@Test
	void theSchemaInitializationOnlyMattersBetweenNeverAndTheOthers() {
		Map<String, String> processed = recorded(new MockEnvironment());
		ProcessedConditionsCheck embedded = check(processed, true,
				new MockEnvironment().withProperty("idempotency.jdbc.initialize-schema", "embedded"));
		assertThatNoException().isThrownBy(() -> embedded.postProcessBeanFactory(new DefaultListableBeanFactory()));
		ProcessedConditionsCheck never = check(processed, true,
				new MockEnvironment().withProperty("idempotency.jdbc.initialize-schema", "never"));
		assertThatIllegalStateException()
			.isThrownBy(() -> never.postProcessBeanFactory(new DefaultListableBeanFactory()))
			.withMessageContaining("idempotency.jdbc.initialize-schema is never here, and was always at build time");
	}

	@Test
	void aValueNoConditionCanReadIsComparedAsWritten() {
		Map<String, String> processed = recorded(new MockEnvironment());
		ProcessedConditionsCheck check = check(processed, true,
				new MockEnvironment().withProperty("idempotency.enabled", "maybe"));
		assertThatIllegalStateException()
			.isThrownBy(() -> check.postProcessBeanFactory(new DefaultListableBeanFactory()))
			.withMessageContaining("idempotency.enabled is maybe here, and was true at build time");
	}

	private static ProcessedConditionsCheck check(Map<String, String> processed, boolean aheadOfTime,
			MockEnvironment runtime) {
		ProcessedConditionsCheck check = new ProcessedConditionsCheck(processed);
		check.setAheadOfTime(() -> aheadOfTime);
		check.setEnvironment(runtime);
		return check;
	}

	private static Map<String, String> recorded(MockEnvironment environment) {
		DefaultListableBeanFactory registry = new DefaultListableBeanFactory();
		registrar(environment)
			.registerBeanDefinitions(AnnotationMetadata.introspect(IdempotencyAutoConfiguration.class), registry);
		return recordedIn(registry);
	}

	@SuppressWarnings("unchecked")
	private static Map<String, String> recordedIn(DefaultListableBeanFactory registry) {
		return (Map<String, String>) registry.getBeanDefinition(ProcessedConditionsCheck.BEAN_NAME)
			.getConstructorArgumentValues()
			.getIndexedArgumentValue(0, Map.class)
			.getValue();
	}

	private static ProcessedConditionsCheck.Registrar registrar(MockEnvironment environment) {
		ProcessedConditionsCheck.Registrar registrar = new ProcessedConditionsCheck.Registrar();
		registrar.setEnvironment(environment);
		return registrar;
	}

}
