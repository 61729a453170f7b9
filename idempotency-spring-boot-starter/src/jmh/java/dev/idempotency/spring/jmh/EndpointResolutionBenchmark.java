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

package dev.idempotency.spring.jmh;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.core.fingerprint.Sha256RequestFingerprinter;
import dev.idempotency.spring.Idempotent;
import dev.idempotency.spring.NamedPolicies;
import dev.idempotency.spring.NamedPolicy;
import dev.idempotency.spring.http.IdempotentEndpoint;
import dev.idempotency.spring.web.EndpointResolutionInterceptor;
import dev.idempotency.spring.web.HandlerMappingEndpointResolver;
import dev.idempotency.spring.web.IdempotencyFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.mock.web.MockServletConfig;
import org.springframework.mock.web.MockServletContext;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.context.support.AnnotationConfigWebApplicationContext;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.HandlerExecutionChain;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.config.annotation.EnableWebMvc;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.RequestMappingInfoHandlerMapping;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.util.ServletRequestPathUtils;

/**
 * Where the idempotency decision is taken (issue 15): the cost per request of the
 * filter's {@link HandlerMappingEndpointResolver}, against Spring MVC's own choice of
 * handler, on an application with 20 or 200 request mappings of which a few are
 * {@link Idempotent @Idempotent}.
 * <ul>
 * <li>{@code filterResolver}: {@link HandlerMappingEndpointResolver#resolve}, what the
 * filter pays for every request before the {@code DispatcherServlet}.
 * <li>{@code springLookup}: {@code ServletRequestPathUtils.parseAndCache} and
 * {@link RequestMappingHandlerMapping#getHandler}, the handler lookup that the
 * {@code DispatcherServlet} makes for every request.
 * <li>{@code dispatcherToPreHandle}: {@link DispatcherServlet#service} up to a handler
 * interceptor that answers at {@code preHandle} without writing: what a replay decided by
 * a handler interceptor would pay before it could answer, which a replay answered by the
 * filter does not.
 * <li>{@code handlerCheck}: {@link EndpointResolutionInterceptor#preHandle} with the
 * handler Spring MVC chose and the filter's decision in the request, the run-time check
 * every request to a handler pays.
 * </ul>
 * The application has one resource per five mappings, {@code /api/r<i>}: {@code GET} the
 * collection, {@code GET /{id}}, {@code POST} the collection, {@code PUT /{id}} and
 * {@code POST /{id}/cancel}; the two {@code POST}s of every tenth resource are
 * {@code @Idempotent}, so 2 of 20 or 8 of 200 mappings. The mappings are registered
 * through {@link RequestMappingHandlerMapping#registerMapping} on a controller bean
 * referenced by name, as annotated controllers are. The requests:
 * {@code idempotent-literal} ({@code POST} the collection of the last idempotent
 * resource), {@code idempotent-pattern} ({@code POST /{id}/cancel} of it),
 * {@code plain-post} ({@code POST /{id}/cancel} of the last resource, not idempotent) and
 * {@code get} ({@code GET /{id}} of the last resource).
 *
 * @author Idempotency contributors
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = { "-Xms512m", "-Xmx512m" })
@State(Scope.Benchmark)
public class EndpointResolutionBenchmark {

	private static final int MAPPINGS_PER_RESOURCE = 5;

	private static final int IDEMPOTENT_EVERY = 10;

	/**
	 * Number of request mappings of the application.
	 */
	@Param({ "20", "200" })
	public int mappings;

	/**
	 * The request, see the class description.
	 */
	@Param({ "idempotent-literal", "idempotent-pattern", "plain-post", "get" })
	public String request;

	private AnnotationConfigWebApplicationContext context;

	private HandlerMappingEndpointResolver resolver;

	private RequestMappingHandlerMapping handlerMapping;

	private DispatcherServlet dispatcher;

	private EndpointResolutionInterceptor check;

	private MockHttpServletRequest servletRequest;

	private MockHttpServletResponse servletResponse;

	private Object handler;

	@Setup
	public void setUp() throws Exception {
		MockServletContext servletContext = new MockServletContext();
		this.context = new AnnotationConfigWebApplicationContext();
		this.context.setServletContext(servletContext);
		this.context.register(MvcConfiguration.class);
		this.context.refresh();
		this.handlerMapping = this.context.getBean(RequestMappingHandlerMapping.class);
		int resources = this.mappings / MAPPINGS_PER_RESOURCE;
		for (int i = 0; i < resources; i++) {
			registerResource(i);
		}
		NamedPolicies policies = new NamedPolicies(List.of(new NamedPolicy(IdempotencyPolicy.defaults(),
				new Sha256RequestFingerprinter(), List.of(), 1024, 1024, Duration.ofMinutes(1), Duration.ofDays(1))));
		this.resolver = new HandlerMappingEndpointResolver(policies, List.of());
		this.resolver.initialize(this.context.getBeansOfType(RequestMappingInfoHandlerMapping.class).values());
		this.check = new EndpointResolutionInterceptor(this.resolver);
		this.dispatcher = new DispatcherServlet(this.context);
		this.dispatcher.init(new MockServletConfig(servletContext, "dispatcher"));
		int lastIdempotent = ((resources - 1) / IDEMPOTENT_EVERY) * IDEMPOTENT_EVERY;
		this.servletRequest = switch (this.request) {
			case "idempotent-literal" -> request("POST", "/api/r" + lastIdempotent);
			case "idempotent-pattern" -> request("POST", "/api/r" + lastIdempotent + "/42/cancel");
			case "plain-post" -> request("POST", "/api/r" + (resources - 1) + "/42/cancel");
			case "get" -> request("GET", "/api/r" + (resources - 1) + "/42");
			default -> throw new IllegalArgumentException("Unknown request " + this.request);
		};
		this.servletResponse = new MockHttpServletResponse();
		verify();
	}

	// every run checks that each side decides what the request is meant to exercise
	private void verify() throws Exception {
		IdempotentEndpoint endpoint = this.resolver.resolve(this.servletRequest);
		boolean idempotent = this.request.startsWith("idempotent");
		if ((endpoint != null) != idempotent) {
			throw new IllegalStateException(this.request + ": the resolver found " + endpoint);
		}
		HandlerExecutionChain chain = springLookup();
		if (chain == null || !(chain.getHandler() instanceof HandlerMethod handlerMethod)
				|| (this.resolver.findEndpoint(handlerMethod) != null) != idempotent) {
			throw new IllegalStateException(this.request + ": Spring MVC chose " + chain);
		}
		this.handler = handlerMethod;
		Field attribute = IdempotencyFilter.class.getDeclaredField("ENDPOINT_ATTRIBUTE");
		Field none = IdempotencyFilter.class.getDeclaredField("NO_ENDPOINT");
		attribute.setAccessible(true);
		none.setAccessible(true);
		// what the filter leaves in the request for the check
		this.servletRequest.setAttribute((String) attribute.get(null), (endpoint != null) ? endpoint : none.get(null));
		if (!this.check.preHandle(this.servletRequest, this.servletResponse, this.handler)) {
			throw new IllegalStateException(this.request + ": the check refused the request");
		}
		this.dispatcher.service(this.servletRequest, this.servletResponse);
		if (!Boolean.TRUE.equals(this.servletRequest.getAttribute(StopAtPreHandle.REACHED))) {
			throw new IllegalStateException(this.request + ": the dispatcher did not reach preHandle");
		}
	}

	private void registerResource(int index) throws NoSuchMethodException {
		boolean idempotent = index % IDEMPOTENT_EVERY == 0;
		String collection = "/api/r" + index;
		register(RequestMethod.GET, collection, "list");
		register(RequestMethod.GET, collection + "/{id}", "get");
		register(RequestMethod.POST, collection, idempotent ? "createIdempotent" : "create");
		register(RequestMethod.PUT, collection + "/{id}", "update");
		register(RequestMethod.POST, collection + "/{id}/cancel", idempotent ? "cancelIdempotent" : "cancel");
	}

	private void register(RequestMethod method, String path, String handlerMethod) throws NoSuchMethodException {
		RequestMappingInfo info = RequestMappingInfo.paths(path)
			.methods(method)
			.options(this.handlerMapping.getBuilderConfiguration())
			.build();
		Method target = ResourceController.class.getDeclaredMethod(handlerMethod);
		this.handlerMapping.registerMapping(info, "resourceController", target);
	}

	private static MockHttpServletRequest request(String method, String path) {
		MockHttpServletRequest request = new MockHttpServletRequest(method, path);
		if ("POST".equals(method)) {
			request.setContentType("application/json");
		}
		request.addHeader("Idempotency-Key", "0b6f2c8e-3d1a-4f5e-9c7b-2a8d4e6f1b3c");
		return request;
	}

	@TearDown
	public void tearDown() {
		this.dispatcher.destroy();
		this.context.close();
	}

	@Benchmark
	public IdempotentEndpoint filterResolver() {
		return this.resolver.resolve(this.servletRequest);
	}

	@Benchmark
	public HandlerExecutionChain springLookup() throws Exception {
		// as DispatcherServlet#doService and #getHandler do
		ServletRequestPathUtils.parseAndCache(this.servletRequest);
		try {
			return this.handlerMapping.getHandler(this.servletRequest);
		}
		finally {
			ServletRequestPathUtils.clearParsedRequestPath(this.servletRequest);
		}
	}

	@Benchmark
	public int dispatcherToPreHandle() throws Exception {
		this.dispatcher.service(this.servletRequest, this.servletResponse);
		return this.servletResponse.getStatus();
	}

	@Benchmark
	public boolean handlerCheck() throws Exception {
		return this.check.preHandle(this.servletRequest, this.servletResponse, this.handler);
	}

	/**
	 * Spring MVC with its defaults, and the interceptor that stands for a replay decided
	 * at {@code preHandle}.
	 */
	@Configuration(proxyBeanMethods = false)
	@EnableWebMvc
	static class MvcConfiguration implements WebMvcConfigurer {

		@Bean
		ResourceController resourceController() {
			return new ResourceController();
		}

		@Override
		public void addInterceptors(InterceptorRegistry registry) {
			registry.addInterceptor(new StopAtPreHandle());
		}

	}

	/**
	 * Answers every request at {@code preHandle}, writing nothing: the point where a
	 * handler interceptor would have decided to replay.
	 */
	static final class StopAtPreHandle implements HandlerInterceptor {

		static final String REACHED = StopAtPreHandle.class.getName() + ".REACHED";

		@Override
		public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler) {
			request.setAttribute(REACHED, Boolean.TRUE);
			return false;
		}

	}

	/**
	 * The handler methods of every resource; not annotated as a controller, so that only
	 * the registered mappings exist.
	 */
	static class ResourceController {

		String list() {
			return "list";
		}

		String get() {
			return "get";
		}

		String create() {
			return "created";
		}

		@Idempotent
		String createIdempotent() {
			return "created";
		}

		String update() {
			return "updated";
		}

		String cancel() {
			return "cancelled";
		}

		@Idempotent
		String cancelIdempotent() {
			return "cancelled";
		}

	}

}
