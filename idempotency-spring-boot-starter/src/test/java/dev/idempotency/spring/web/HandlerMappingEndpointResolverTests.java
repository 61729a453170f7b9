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

package dev.idempotency.spring.web;

import dev.idempotency.spring.Idempotent;
import dev.idempotency.spring.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.spring.http.IdempotentEndpoint;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.http.HttpHeaders;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PatchMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.servlet.config.annotation.ApiVersionConfigurer;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;
import org.springframework.web.util.ServletRequestPathUtils;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link HandlerMappingEndpointResolver} over Spring MVC's real handler
 * mappings.
 *
 * @author Idempotency contributors
 */
@ExtendWith(OutputCaptureExtension.class)
class HandlerMappingEndpointResolverTests {

	private static final IdempotentEndpoint DEFAULT = new IdempotentEndpoint("default", true);

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class, WebMvcAutoConfiguration.class,
				DispatcherServletAutoConfiguration.class))
		.withUserConfiguration(OrderController.class, AccountController.class)
		.withPropertyValues("idempotency.policies.accounts.ttl=1h");

	@Test
	void theProtectedEndpointsAreListedAtStartUp(CapturedOutput output) {
		this.runner.withPropertyValues("idempotency.endpoints[0].methods=PUT", "idempotency.endpoints[0].path=/ping")
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output).contains("Idempotent endpoints (")
			.contains("[POST] /orders -> policy 'default'")
			.contains("[POST] /orders/{id}/items -> policy 'default'")
			.contains("[PATCH] /accounts/{id} -> policy 'accounts', key optional")
			.contains("[PUT] /ping -> policy 'default' (idempotency.endpoints)");
	}

	@Test
	void aRuleThatMatchesNoHandlerIsReported(CapturedOutput output) {
		this.runner
			.withPropertyValues("idempotency.endpoints[0].methods=POST", "idempotency.endpoints[0].path=/oders/**",
					"idempotency.endpoints[1].methods=POST", "idempotency.endpoints[1].path=/orders/7/items",
					"idempotency.endpoints[2].methods=POST", "idempotency.endpoints[2].path=/orders/*/items",
					"idempotency.endpoints[3].methods=DELETE", "idempotency.endpoints[3].path=/ping")
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output).contains("Rule [POST] /oders/** -> ")
			.contains("Rule [DELETE] /ping -> ")
			.doesNotContain("Rule [POST] /orders/7/items -> ")
			.doesNotContain("Rule [POST] /orders/*/items -> ");
	}

	@Test
	void literalAndPatternMappingsAreResolved() {
		this.runner.run((context) -> {
			assertThat(resolve(context, "POST", "/orders")).isEqualTo(DEFAULT);
			assertThat(resolve(context, "POST", "/orders/7/items")).isEqualTo(DEFAULT);
			assertThat(resolve(context, "POST", "/ping")).isNull();
			assertThat(resolve(context, "POST", "/unknown")).isNull();
		});
	}

	@Test
	void methodsNoIdempotentMappingAcceptsAreNotIdempotent() {
		this.runner.run((context) -> {
			assertThat(resolve(context, "GET", "/orders")).isNull();
			assertThat(resolve(context, "DELETE", "/orders")).isNull();
		});
	}

	@Test
	void moreSpecificNonIdempotentMappingShadowsAPattern() {
		this.runner.run((context) -> {
			assertThat(resolve(context, "POST", "/orders/7/items")).isEqualTo(DEFAULT);
			assertThat(resolve(context, "POST", "/orders/export/items")).isNull();
		});
	}

	@Test
	void mappingWithAMoreSpecificConditionShadowsTheSamePath() {
		this.runner.run((context) -> {
			MockHttpServletRequest preview = request("POST", "/orders");
			preview.setParameter("preview", "true");
			assertThat(resolver(context).resolve(preview)).isNull();
		});
	}

	@Test
	void classAnnotationAppliesToUnsafeMethodsOnly() {
		this.runner.run((context) -> {
			IdempotentEndpoint accounts = new IdempotentEndpoint("accounts", false);
			assertThat(resolve(context, "PATCH", "/accounts/1")).isEqualTo(accounts);
			assertThat(resolve(context, "GET", "/accounts/1")).isNull();
			assertThat(resolve(context, "HEAD", "/accounts/1")).isNull();
			assertThat(resolve(context, "GET", "/accounts/1/statement")).isEqualTo(DEFAULT);
			assertThat(resolve(context, "HEAD", "/accounts/1/statement")).isEqualTo(DEFAULT);
		});
	}

	@Test
	void corsPreflightIsNotIdempotent() {
		this.runner.run((context) -> {
			MockHttpServletRequest preflight = request("OPTIONS", "/accounts/1");
			preflight.addHeader(HttpHeaders.ORIGIN, "https://example.com");
			preflight.addHeader(HttpHeaders.ACCESS_CONTROL_REQUEST_METHOD, "PATCH");
			assertThat(resolver(context).resolve(preflight)).isNull();
		});
	}

	@Test
	void encodedPathMatchesLikeSpringMvc() {
		this.runner.run((context) -> assertThat(resolve(context, "POST", "/ord%65rs")).isEqualTo(DEFAULT));
	}

	@Test
	void requestIsLeftAsItWas() {
		this.runner.run((context) -> {
			MockHttpServletRequest request = request("POST", "/orders");
			resolver(context).resolve(request);
			assertThat(ServletRequestPathUtils.hasParsedRequestPath(request)).isFalse();
		});
	}

	@Test
	void apiVersionsAreMatchedAsSpringMvcMatchesThem() {
		this.runner.withUserConfiguration(QuoteController.class)
			.withBean(WebMvcConfigurer.class, () -> new WebMvcConfigurer() {

				@Override
				public void configureApiVersioning(ApiVersionConfigurer configurer) {
					configurer.useRequestHeader("API-Version");
				}

			})
			.run((context) -> {
				assertThat(resolveVersion(context, "1")).isEqualTo(DEFAULT);
				assertThat(resolveVersion(context, "1.0")).isEqualTo(DEFAULT);
				// 1 is the best match for 1.5, which Spring MVC then refuses
				assertThat(resolveVersion(context, "1.5")).isNull();
				assertThat(resolveVersion(context, "2")).isNull();
				// missing, and not a version: Spring MVC refuses it before any handler
				assertThat(resolveVersion(context, null)).isNull();
				assertThat(resolveVersion(context, "x")).isNull();
				MockHttpServletRequest request = request("POST", "/quotes");
				request.addHeader("API-Version", "1");
				resolver(context).resolve(request);
				assertThat(request.getAttribute(HandlerMapping.API_VERSION_ATTRIBUTE)).isNull();
			});
	}

	private static @Nullable IdempotentEndpoint resolveVersion(AssertableWebApplicationContext context,
			@Nullable String version) {
		MockHttpServletRequest request = request("POST", "/quotes");
		if (version != null) {
			request.addHeader("API-Version", version);
		}
		return resolver(context).resolve(request);
	}

	private static @Nullable IdempotentEndpoint resolve(AssertableWebApplicationContext context, String method,
			String path) {
		return resolver(context).resolve(request(method, path));
	}

	private static IdempotentEndpointResolver resolver(AssertableWebApplicationContext context) {
		assertThat(context).hasNotFailed();
		return context.getBean(IdempotentEndpointResolver.class);
	}

	private static MockHttpServletRequest request(String method, String path) {
		MockHttpServletRequest request = new MockHttpServletRequest(method, path);
		request.setRequestURI(path);
		return request;
	}

	@RestController
	static class OrderController {

		@PostMapping("/orders")
		@Idempotent
		String create() {
			return "created";
		}

		@PostMapping(path = "/orders", params = "preview")
		String preview() {
			return "preview";
		}

		@PostMapping("/orders/{id}/items")
		@Idempotent
		String addItem() {
			return "added";
		}

		@PostMapping("/orders/export/items")
		String export() {
			return "exported";
		}

		@PostMapping("/ping")
		String ping() {
			return "pong";
		}

	}

	@RestController
	static class QuoteController {

		@PostMapping(path = "/quotes", version = "1")
		@Idempotent
		String quote() {
			return "quoted";
		}

		@PostMapping(path = "/quotes", version = "2")
		String quoteLater() {
			return "quoted later";
		}

	}

	@RestController
	@RequestMapping("/accounts/{id}")
	@Idempotent(policy = "accounts", required = false)
	static class AccountController {

		@GetMapping
		String read() {
			return "account";
		}

		@PatchMapping
		String update() {
			return "updated";
		}

		@GetMapping("/statement")
		@Idempotent
		String statement() {
			return "statement";
		}

	}

}
