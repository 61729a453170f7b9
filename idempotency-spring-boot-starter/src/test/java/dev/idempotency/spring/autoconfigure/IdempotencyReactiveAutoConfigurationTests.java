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

import dev.idempotency.core.engine.IdempotencyEngine;
import dev.idempotency.spring.Idempotent;
import dev.idempotency.spring.web.StoredResponseCustomizer;
import dev.idempotency.spring.webflux.IdempotencyWebFilter;
import dev.idempotency.spring.webflux.WebFluxEndpointResolver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link IdempotencyReactiveAutoConfiguration}: a reactive application, without
 * the servlet API on its class path, is never left silently unprotected.
 *
 * @author Idempotency contributors
 */
@ExtendWith(OutputCaptureExtension.class)
class IdempotencyReactiveAutoConfigurationTests {

	private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
		.withClassLoader(new FilteredClassLoader("jakarta.servlet", "org.springframework.web.servlet"))
		.withConfiguration(
				AutoConfigurations.of(IdempotencyAutoConfiguration.class, IdempotencyReactiveAutoConfiguration.class))
		.withUserConfiguration(HandlerMappingConfiguration.class);

	@Test
	void idempotentHandlersAreProtectedByTheWebFilter(CapturedOutput output) {
		this.runner.withUserConfiguration(PaymentController.class).run((context) -> {
			assertThat(context).hasNotFailed()
				.hasSingleBean(IdempotencyWebFilter.class)
				.hasSingleBean(WebFluxEndpointResolver.class)
				.hasSingleBean(IdempotencyEngine.class);
			assertThat(context.getBean(IdempotencyWebFilter.class).getOrder())
				.isEqualTo(IdempotencyWebFilter.DEFAULT_ORDER);
		});
		assertThat(output).contains("Idempotent WebFlux endpoints (1)")
			.contains("POST /payments")
			.doesNotContain("nothing protects");
	}

	@Test
	void aTransactionalPolicyOnAWebFluxHandlerFailsStartUp() {
		this.runner.withUserConfiguration(PaymentController.class)
			.withPropertyValues("idempotency.store.type=memory", "idempotency.transactional=true")
			.run((context) -> assertThat(context).getFailure()
				.hasMessageContaining("PaymentController#pay")
				.hasMessageContaining("transactional policy 'default'"));
	}

	@Test
	void aStreamingHandlerFailsStartUp() {
		this.runner.withUserConfiguration(StreamingController.class)
			.run((context) -> assertThat(context).getFailure()
				.hasMessageContaining("StreamingController#events")
				.hasMessageContaining("streams its response"));
	}

	@Test
	void aServletExtensionThatTheWebFilterCannotApplyFailsStartUp() {
		new ReactiveWebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class,
					IdempotencyReactiveAutoConfiguration.class))
			.withUserConfiguration(HandlerMappingConfiguration.class, PaymentController.class)
			.withBean(StoredResponseCustomizer.class, () -> (request, policy, response) -> response)
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("StoredResponseCustomizer")
				.hasMessageContaining("does not apply it"));
	}

	@Test
	void optedOutIdempotentHandlersFailStartUpNamingThem() {
		this.runner.withUserConfiguration(PaymentController.class)
			.withPropertyValues("idempotency.reactive.enabled=false")
			.run((context) -> assertThat(context).getFailure()
				.isInstanceOf(IllegalStateException.class)
				.hasMessageContaining("1 handler(s) of this reactive (WebFlux) application")
				.hasMessageContaining("PaymentController#pay")
				.hasMessageContaining("POST /payments")
				.hasMessageNotContaining("PaymentController#list")
				.hasMessageContaining("idempotency.reactive.fail-on-unprotected-handlers=false"));
	}

	@Test
	void optedOutWithFailureTurnedOffAWarningNamesThem(CapturedOutput output) {
		this.runner.withUserConfiguration(PaymentController.class)
			.withPropertyValues("idempotency.reactive.enabled=false",
					"idempotency.reactive.fail-on-unprotected-handlers=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(IdempotencyWebFilter.class));
		assertThat(output).contains("nothing protects").contains("PaymentController#pay");
	}

	@Test
	void optedOutApplicationWithoutIdempotentHandlersStartsQuietly(CapturedOutput output) {
		this.runner.withUserConfiguration(PlainController.class)
			.withPropertyValues("idempotency.reactive.enabled=false")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).doesNotHaveBean(IdempotencyProperties.class);
			});
		assertThat(output).doesNotContain("nothing protects");
	}

	@Test
	void disabledApplicationGetsNoWebFilter() {
		this.runner.withUserConfiguration(PaymentController.class)
			.withPropertyValues("idempotency.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(IdempotencyWebFilter.class));
	}

	@Configuration(proxyBeanMethods = false)
	static class HandlerMappingConfiguration {

		@Bean
		RequestMappingHandlerMapping requestMappingHandlerMapping() {
			return new RequestMappingHandlerMapping();
		}

	}

	@RestController
	static class PaymentController {

		@PostMapping("/payments")
		@Idempotent
		String pay() {
			return "paid";
		}

		@GetMapping("/payments")
		String list() {
			return "[]";
		}

	}

	@RestController
	static class StreamingController {

		@PostMapping(path = "/events", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
		@Idempotent
		Flux<String> events() {
			return Flux.just("a", "b");
		}

	}

	@RestController
	static class PlainController {

		@PostMapping("/ping")
		String ping() {
			return "pong";
		}

	}

}
