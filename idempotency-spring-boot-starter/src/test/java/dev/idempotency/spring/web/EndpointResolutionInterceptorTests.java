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

import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import dev.idempotency.core.engine.IdempotencyEngine;
import dev.idempotency.spring.Idempotent;
import dev.idempotency.spring.NamedPolicies;
import dev.idempotency.spring.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.spring.http.HttpContract;
import dev.idempotency.spring.http.IdempotentEndpoint;
import jakarta.servlet.DispatcherType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.http.ResponseEntity;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerExecutionChain;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.util.ServletRequestPathUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.asyncDispatch;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.request;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Tests for {@link EndpointResolutionInterceptor} in Spring MVC, with the auto-configured
 * filter, or with a filter whose resolver is made to disagree with Spring MVC's choice of
 * handler.
 *
 * @author Idempotency contributors
 */
@ExtendWith(OutputCaptureExtension.class)
class EndpointResolutionInterceptorTests {

	private static final String NOT_APPLIED = "https://idempotency.dev/problems/idempotency-not-applied";

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class, WebMvcAutoConfiguration.class,
				DispatcherServletAutoConfiguration.class))
		.withUserConfiguration(PaymentController.class)
		.withPropertyValues("idempotency.policies.optional.ttl=1h", "idempotency.endpoints[0].methods=POST",
				"idempotency.endpoints[0].path=/ruled", "idempotency.endpoints[0].policy=default");

	@Test
	void agreeingFilterLetsTheHandlerRunOnceAndReplays(CapturedOutput output) {
		this.runner.run((context) -> {
			MockMvc mvc = mvc(context, null);
			mvc.perform(post("/payments").header("Idempotency-Key", "k1")).andExpect(status().isCreated());
			mvc.perform(post("/payments").header("Idempotency-Key", "k1"))
				.andExpect(status().isCreated())
				.andExpect(header().string(IdempotencyFilter.REPLAYED_HEADER, "true"));
			mvc.perform(post("/ruled").header("Idempotency-Key", "k2")).andExpect(status().isOk());
			mvc.perform(post("/ruled").header("Idempotency-Key", "k2"))
				.andExpect(header().string(IdempotencyFilter.REPLAYED_HEADER, "true"));
			mvc.perform(post("/plain").header("Idempotency-Key", "k3")).andExpect(status().isOk());
			assertThat(count(context, "payments")).isOne();
			assertThat(count(context, "ruled")).isOne();
			assertThat(count(context, "plain")).isOne();
		});
		assertThat(output).doesNotContain("EndpointResolutionInterceptor");
	}

	@Test
	void idempotentHandlerTheFilterMissedIsRefused(CapturedOutput output) {
		this.runner.run((context) -> {
			MockMvc mvc = mvc(context, (path) -> path.equals("/payments") ? Decision.MISS : Decision.DELEGATE);
			mvc.perform(post("/payments").header("Idempotency-Key", "k1"))
				.andExpect(status().isInternalServerError())
				.andExpect(content().contentType(HttpContract.PROBLEM_CONTENT_TYPE))
				.andExpect(jsonPath("$.type").value(NOT_APPLIED))
				.andExpect(jsonPath("$.status").value(500))
				.andExpect(jsonPath("$.instance").value("/payments"));
			mvc.perform(post("/payments")).andExpect(status().isInternalServerError());
			assertThat(count(context, "payments")).isZero();
		});
		assertThat(output).contains("Refused POST /payments: Spring MVC chose the @Idempotent handler")
			.contains("PaymentController#pay()");
	}

	@Test
	void optionalKeyHandlerTheFilterMissedIsRefusedOnlyWithAKey() {
		this.runner.run((context) -> {
			MockMvc mvc = mvc(context, (path) -> path.equals("/optional") ? Decision.MISS : Decision.DELEGATE);
			mvc.perform(post("/optional")).andExpect(status().isOk());
			assertThat(count(context, "optional")).isOne();
			mvc.perform(post("/optional").header("Idempotency-Key", "k1"))
				.andExpect(status().isInternalServerError())
				.andExpect(jsonPath("$.type").value(NOT_APPLIED));
			assertThat(count(context, "optional")).isOne();
		});
	}

	@Test
	void optionalKeyHandlerTheFilterMissedIsCheckedAgainstItsPolicysKeySource() {
		this.runner.withPropertyValues("idempotency.policies.optional.key.header=webhook-id").run((context) -> {
			MockMvc mvc = mvc(context, (path) -> path.equals("/optional") ? Decision.MISS : Decision.DELEGATE);
			mvc.perform(post("/optional").header("Idempotency-Key", "k1")).andExpect(status().isOk());
			mvc.perform(post("/optional").header("webhook-id", "k1"))
				.andExpect(status().isInternalServerError())
				.andExpect(jsonPath("$.type").value(NOT_APPLIED));
			assertThat(count(context, "optional")).isOne();
		});
		// a key in the body is always required: the handler never runs unprotected
		this.runner.withPropertyValues("idempotency.policies.optional.key.json-pointer=/id").run((context) -> {
			MockMvc mvc = mvc(context, (path) -> path.equals("/optional") ? Decision.MISS : Decision.DELEGATE);
			mvc.perform(post("/optional")).andExpect(status().isInternalServerError());
			assertThat(count(context, "optional")).isZero();
		});
	}

	@Test
	void configuredKeyHeaderAndProblemTypeBaseApply() {
		this.runner
			.withPropertyValues("idempotency.key-header=X-Key", "idempotency.problem-type-base=https://example.com/p/")
			.run((context) -> {
				IdempotencyFilter filter = filter(context,
						(path) -> path.equals("/optional") ? Decision.MISS : Decision.DELEGATE);
				filter.setKeyHeader("X-Key");
				MockMvc mvc = MockMvcBuilders.webAppContextSetup(context).addFilters(filter).build();
				mvc.perform(post("/optional").header("Idempotency-Key", "k1")).andExpect(status().isOk());
				mvc.perform(post("/optional").header("X-Key", "k1"))
					.andExpect(status().isInternalServerError())
					.andExpect(jsonPath("$.type").value("https://example.com/p/idempotency-not-applied"));
				assertThat(count(context, "optional")).isOne();
			});
	}

	@Test
	void handlerTheFilterWronglyProtectedRunsWithAWarningOncePerHandler(CapturedOutput output) {
		this.runner.run((context) -> {
			MockMvc mvc = mvc(context, (path) -> path.equals("/plain") ? Decision.DEFAULT : Decision.DELEGATE);
			mvc.perform(post("/plain").header("Idempotency-Key", "k1")).andExpect(status().isOk());
			mvc.perform(post("/plain").header("Idempotency-Key", "k2")).andExpect(status().isOk());
			assertThat(count(context, "plain")).isEqualTo(2);
		});
		assertThat(output).containsOnlyOnce("POST /plain reached the handler")
			.contains("treated a request to this handler, which is not idempotent, as idempotent");
	}

	@Test
	void handlerTheFilterProtectedUnderAnotherPolicyRunsWithAWarning(CapturedOutput output) {
		this.runner.run((context) -> {
			MockMvc mvc = mvc(context, (path) -> path.equals("/optional") ? Decision.DEFAULT : Decision.DELEGATE);
			mvc.perform(post("/optional").header("Idempotency-Key", "k1")).andExpect(status().isOk());
			assertThat(count(context, "optional")).isOne();
		});
		assertThat(output).contains("POST /optional reached the handler")
			.contains("but the handler is annotated as IdempotentEndpoint[policy=optional, required=false]");
	}

	@Test
	void idempotentHandlerOfARequestTheFilterNeverSawRunsWithAWarning(CapturedOutput output) {
		this.runner.run((context) -> {
			MockMvc mvc = MockMvcBuilders.webAppContextSetup(context).build();
			mvc.perform(post("/payments").header("Idempotency-Key", "k1")).andExpect(status().isCreated());
			mvc.perform(post("/payments").header("Idempotency-Key", "k1")).andExpect(status().isCreated());
			assertThat(count(context, "payments")).isEqualTo(2);
		});
		assertThat(output).containsOnlyOnce("the idempotency filter did not see this request");
	}

	@Test
	void asyncDispatchOfAnIdempotentHandlerIsNotRefused() {
		this.runner.run((context) -> {
			MockMvc mvc = mvc(context, null);
			MvcResult started = mvc.perform(post("/async").header("Idempotency-Key", "k1"))
				.andExpect(request().asyncStarted())
				.andReturn();
			mvc.perform(asyncDispatch(started)).andExpect(status().isOk()).andExpect(content().string("async"));
			mvc.perform(post("/async").header("Idempotency-Key", "k1"))
				.andExpect(header().string(IdempotencyFilter.REPLAYED_HEADER, "true"))
				.andExpect(content().string("async"));
			assertThat(count(context, "async")).isOne();
		});
	}

	@Test
	void onlyRequestDispatchesAreChecked() {
		this.runner.run((context) -> {
			EndpointResolutionInterceptor interceptor = new EndpointResolutionInterceptor(
					context.getBean(HandlerMappingEndpointResolver.class));
			HandlerMethod handler = handlerOf(context, "POST", "/payments");
			for (DispatcherType type : DispatcherType.values()) {
				MockHttpServletRequest request = new MockHttpServletRequest("POST", "/payments");
				request.setDispatcherType(type);
				request.setAttribute(IdempotencyFilter.ENDPOINT_ATTRIBUTE, IdempotencyFilter.NO_ENDPOINT);
				MockHttpServletResponse response = new MockHttpServletResponse();
				boolean proceed = interceptor.preHandle(request, response, handler);
				assertThat(proceed).as(type.name()).isEqualTo(type != DispatcherType.REQUEST);
				assertThat(response.getStatus()).as(type.name()).isEqualTo(proceed ? 200 : 500);
			}
		});
	}

	@Test
	void handlersThatAreNotHandlerMethodsRun(CapturedOutput output) {
		this.runner.run((context) -> {
			EndpointResolutionInterceptor interceptor = new EndpointResolutionInterceptor(
					context.getBean(HandlerMappingEndpointResolver.class));
			Runnable handler = () -> {
			};
			MockHttpServletRequest request = new MockHttpServletRequest("POST", "/static");
			request.setAttribute(IdempotencyFilter.ENDPOINT_ATTRIBUTE, IdempotencyFilter.NO_ENDPOINT);
			assertThat(interceptor.preHandle(request, new MockHttpServletResponse(), handler)).isTrue();
			request.setAttribute(IdempotencyFilter.ENDPOINT_ATTRIBUTE, new IdempotentEndpoint("default", true));
			assertThat(interceptor.preHandle(request, new MockHttpServletResponse(), handler)).isTrue();
		});
		assertThat(output).containsOnlyOnce("POST /static reached the handler");
	}

	@Test
	void interceptorIsRegisteredAheadOfTheOthersUnlessTurnedOff() {
		this.runner.run((context) -> assertThat(interceptorsOf(context, "/payments").get(0))
			.isInstanceOf(EndpointResolutionInterceptor.class));
		this.runner.withPropertyValues("idempotency.filter.check-handler=false")
			.run((context) -> assertThat(interceptorsOf(context, "/payments"))
				.noneMatch(EndpointResolutionInterceptor.class::isInstance));
		this.runner.withPropertyValues("idempotency.enabled=false")
			.run((context) -> assertThat(interceptorsOf(context, "/payments"))
				.noneMatch(EndpointResolutionInterceptor.class::isInstance));
		this.runner.withBean(IdempotentEndpointResolver.class, () -> (request) -> null)
			.run((context) -> assertThat(interceptorsOf(context, "/payments"))
				.noneMatch(EndpointResolutionInterceptor.class::isInstance));
	}

	private static List<Object> interceptorsOf(AssertableWebApplicationContext context, String path) throws Exception {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", path);
		ServletRequestPathUtils.parseAndCache(request);
		HandlerExecutionChain chain = context
			.getBean("requestMappingHandlerMapping", RequestMappingHandlerMapping.class)
			.getHandler(request);
		assertThat(chain).isNotNull();
		return List.copyOf(chain.getInterceptorList());
	}

	private static HandlerMethod handlerOf(AssertableWebApplicationContext context, String method, String path)
			throws Exception {
		MockHttpServletRequest request = new MockHttpServletRequest(method, path);
		ServletRequestPathUtils.parseAndCache(request);
		HandlerExecutionChain chain = context
			.getBean("requestMappingHandlerMapping", RequestMappingHandlerMapping.class)
			.getHandler(request);
		assertThat(chain).isNotNull();
		return (HandlerMethod) chain.getHandler();
	}

	private static int count(AssertableWebApplicationContext context, String handler) {
		return context.getBean(PaymentController.class).count(handler);
	}

	/**
	 * MockMvc over the application context with the auto-configured filter, or with a
	 * filter whose resolver takes the given decisions by path.
	 */
	private static MockMvc mvc(AssertableWebApplicationContext context, Function<String, Decision> decisions) {
		IdempotencyFilter filter = (decisions != null) ? filter(context, decisions)
				: context.getBean(IdempotencyFilter.class);
		return MockMvcBuilders.webAppContextSetup(context).addFilters(filter).build();
	}

	private static IdempotencyFilter filter(AssertableWebApplicationContext context,
			Function<String, Decision> decisions) {
		HandlerMappingEndpointResolver resolver = context.getBean(HandlerMappingEndpointResolver.class);
		IdempotentEndpointResolver disagreeing = (request) -> switch (decisions.apply(request.getRequestURI())) {
			case MISS -> null;
			case DEFAULT -> new IdempotentEndpoint("default", true);
			case DELEGATE -> resolver.resolve(request);
		};
		return new IdempotencyFilter(context.getBean(IdempotencyEngine.class), disagreeing,
				context.getBean(NamedPolicies.class));
	}

	/**
	 * What the test's resolver decides for a path.
	 */
	private enum Decision {

		/**
		 * No idempotent endpoint.
		 */
		MISS,

		/**
		 * The default policy, key required.
		 */
		DEFAULT,

		/**
		 * What the real resolver decides.
		 */
		DELEGATE

	}

	@RestController
	static class PaymentController {

		private final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();

		@PostMapping("/payments")
		@Idempotent
		ResponseEntity<String> pay() {
			run("payments");
			return ResponseEntity.status(201).body("paid");
		}

		@PostMapping("/optional")
		@Idempotent(policy = "optional", required = false)
		String optional() {
			return run("optional");
		}

		@PostMapping("/ruled")
		String ruled() {
			return run("ruled");
		}

		@PostMapping("/plain")
		String plain() {
			return run("plain");
		}

		@PostMapping("/async")
		@Idempotent
		Callable<String> async() {
			return () -> run("async");
		}

		private String run(String handler) {
			this.counts.computeIfAbsent(handler, (name) -> new AtomicInteger()).incrementAndGet();
			return handler;
		}

		int count(String handler) {
			AtomicInteger count = this.counts.get(handler);
			return (count != null) ? count.get() : 0;
		}

	}

}
