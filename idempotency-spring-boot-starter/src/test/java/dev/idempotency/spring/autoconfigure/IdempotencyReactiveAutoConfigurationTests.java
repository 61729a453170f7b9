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

import dev.idempotency.spring.Idempotent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
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
	void idempotentHandlersFailStartUpNamingThem() {
		this.runner.withUserConfiguration(PaymentController.class)
			.run((context) -> assertThat(context).getFailure()
				.isInstanceOf(IllegalStateException.class)
				.hasMessageContaining("1 handler(s) of this reactive (WebFlux) application")
				.hasMessageContaining("PaymentController#pay")
				.hasMessageContaining("POST /payments")
				.hasMessageNotContaining("PaymentController#list")
				.hasMessageContaining("idempotency.reactive.fail-on-unprotected-handlers=false"));
	}

	@Test
	void withFailureTurnedOffAWarningNamesThem(CapturedOutput output) {
		this.runner.withUserConfiguration(PaymentController.class)
			.withPropertyValues("idempotency.reactive.fail-on-unprotected-handlers=false")
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output).contains("nothing protects").contains("PaymentController#pay");
	}

	@Test
	void applicationWithoutIdempotentHandlersStartsQuietly(CapturedOutput output) {
		this.runner.withUserConfiguration(PlainController.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(context).doesNotHaveBean(IdempotencyProperties.class);
		});
		assertThat(output).doesNotContain("nothing protects");
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
	static class PlainController {

		@PostMapping("/ping")
		String ping() {
			return "pong";
		}

	}

}
