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
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.stream.Collectors;

import dev.idempotency.spring.Idempotent;
import org.junit.jupiter.api.Test;

import org.springframework.aot.generate.ClassNameGenerator;
import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.GeneratedFiles.Kind;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.TypeReference;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.aot.AbstractAotProcessor;
import org.springframework.context.aot.ApplicationContextAotGenerator;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.io.InputStreamSource;
import org.springframework.javapoet.ClassName;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Spring's AOT processing of an application with the starter, as the build of an
 * application runs it ({@code process-aot}): the hints it collects hold the starter's
 * own, those of the application's {@code @Idempotent} methods and those of the
 * deterministic exceptions of its properties; the generated code records the values of
 * the properties the conditions read, for {@link ProcessedConditionsCheck}. The generated
 * code running in AOT mode is tested by the sample ({@code AotModeIT}).
 *
 * @author Idempotency contributors
 */
class IdempotencyAotProcessingTests {

	@Test
	void processingAnApplicationCollectsEveryHintOfTheLibrary() {
		InMemoryGeneratedFiles files = new InMemoryGeneratedFiles();
		RuntimeHints hints = process(files);
		// IdempotencyRuntimeHints, imported by the auto-configuration
		assertThat(RuntimeHintsPredicates.resource().forResource("dev/idempotency/spring/store/redis/acquire.lua"))
			.accepts(hints);
		assertThat(RuntimeHintsPredicates.reflection().onType(TypeReference.of("tools.jackson.core.json.JsonFactory")))
			.accepts(hints);
		// the application's idempotent method, found on its bean
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Refunds.class, "refund")).accepts(hints);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(RefundCommand.class, "refundId"))
			.accepts(hints);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Receipt.class, "amount")).accepts(hints);
		// the deterministic exceptions of the properties, global and per policy
		assertThat(RuntimeHintsPredicates.reflection()
			.onType(RefundDeclinedException.class)
			.withMemberCategory(MemberCategory.INVOKE_PUBLIC_CONSTRUCTORS)).accepts(hints);
		assertThat(RuntimeHintsPredicates.reflection()
			.onType(IllegalArgumentException.class)
			.withMemberCategory(MemberCategory.INVOKE_PUBLIC_CONSTRUCTORS)).accepts(hints);
	}

	@Test
	void theGeneratedCodeRecordsTheValuesOfTheBuild() {
		InMemoryGeneratedFiles files = new InMemoryGeneratedFiles();
		process(files);
		String sources = files.getGeneratedFiles(Kind.SOURCE)
			.values()
			.stream()
			.map(IdempotencyAotProcessingTests::text)
			.collect(Collectors.joining("\n"));
		assertThat(sources).contains("ProcessedConditionsCheck")
			.contains("\"idempotency.store.type\", \"memory\"")
			.contains("\"idempotency.encryption.enabled\", \"false\"");
	}

	@Test
	void withoutDeterministicExceptionsTheProcessorContributesNothing() {
		DefaultListableBeanFactory beanFactory = new DefaultListableBeanFactory();
		beanFactory.registerSingleton("environment",
				new MockEnvironment().withProperty("idempotency.policies.refunds.ttl", "1h"));
		assertThat(new DeterministicExceptionsAotProcessor().processAheadOfTime(beanFactory)).isNull();
		assertThat(new DeterministicExceptionsAotProcessor().processAheadOfTime(new DefaultListableBeanFactory()))
			.isNull();
	}

	@Test
	void theDeterministicExceptionsAreReadFromEverySpellingOfTheProperties() {
		MockEnvironment environment = new MockEnvironment()
			.withProperty("idempotency.deterministic-exceptions", "java.lang.IllegalStateException, com.example.Gone")
			.withProperty("idempotency.policies.refunds.deterministic-exceptions[0]",
					RefundDeclinedException.class.getName())
			.withProperty("idempotency.policies.refunds.ttl", "1h")
			.withProperty("idempotency.policies.payments.in-flight-wait", "1s");
		assertThat(DeterministicExceptionsAotProcessor.declared(environment)).containsExactly(
				"java.lang.IllegalStateException", "com.example.Gone", RefundDeclinedException.class.getName());
	}

	private static RuntimeHints process(InMemoryGeneratedFiles files) {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
			context.getEnvironment()
				.getPropertySources()
				.addFirst(new MapPropertySource("test",
						Map.of("idempotency.store.type", "memory", "idempotency.deterministic-exceptions",
								IllegalArgumentException.class.getName(),
								"idempotency.policies.refunds.deterministic-exceptions",
								RefundDeclinedException.class.getName())));
			context.register(RefundsApplication.class);
			DefaultGenerationContext generation = new DefaultGenerationContext(
					new ClassNameGenerator(ClassName.get(RefundsApplication.class)), files);
			// what Spring's processor (process-aot) sets while it processes the
			// application,
			// and clears: no test runs beside this one in its JVM
			System.setProperty(AbstractAotProcessor.AOT_PROCESSING, "true");
			try {
				new ApplicationContextAotGenerator().processAheadOfTime(context, generation);
			}
			finally {
				System.clearProperty(AbstractAotProcessor.AOT_PROCESSING);
			}
			// nothing that reaches a store is created by the build: the template is
			// created by the processed application
			assertThat(context.getBeanFactory().getSingletonNames()).doesNotContain("idempotencyTemplate",
					"idempotencyEngine", "idempotencyStore", "idempotencyPolicies");
			generation.writeGeneratedContent();
			return generation.getRuntimeHints();
		}
	}

	private static String text(InputStreamSource source) {
		try {
			try (InputStream in = source.getInputStream()) {
				return new String(in.readAllBytes(), StandardCharsets.UTF_8);
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ IdempotencyAutoConfiguration.class, IdempotencyMethodAutoConfiguration.class })
	static class RefundsApplication {

		@Bean
		Refunds refunds() {
			return new Refunds();
		}

	}

	static class Refunds {

		@Idempotent(policy = "refunds", key = "#command.refundId")
		Receipt refund(RefundCommand command) {
			return new Receipt(command.refundId(), command.amount());
		}

	}

	record RefundCommand(String refundId, long amount) {
	}

	record Receipt(String refundId, long amount) {
	}

	static class RefundDeclinedException extends RuntimeException {

		RefundDeclinedException(String message) {
			super(message);
		}

	}

}
