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

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.stream.Stream;

import dev.idempotency.spring.Idempotent;
import dev.idempotency.spring.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.spring.http.IdempotentEndpoint;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.context.ApplicationContext;
import org.springframework.core.annotation.AnnotationAwareOrderComparator;
import org.springframework.http.MediaType;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.util.AntPathMatcher;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PatchMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerExecutionChain;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.servlet.config.annotation.ApiVersionConfigurer;
import org.springframework.web.servlet.config.annotation.PathMatchConfigurer;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.RequestMappingInfoHandlerMapping;
import org.springframework.web.util.ServletRequestPathUtils;
import org.springframework.web.util.UrlPathHelper;
import org.springframework.web.util.pattern.PathPatternParser;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Conformance of {@link HandlerMappingEndpointResolver} with Spring MVC: over several
 * routing configurations and a generated set of requests (methods times paths with case
 * changes, trailing and doubled slashes, encoded characters, path parameters, path
 * variables, unknown paths, with and without a request parameter and a JSON content
 * type), the resolver finds an endpoint exactly when the handler that Spring MVC's
 * handler mappings choose is an idempotent one, and it is that handler's endpoint.
 * <p>
 * The configurations run side by side: each starts contexts of its own, and one after the
 * other they were the last unit tests of the module to end, by ten seconds.
 *
 * @author Idempotency contributors
 */
@Execution(ExecutionMode.CONCURRENT)
class HandlerMappingEndpointResolverConformanceTests {

	private static final List<String> METHODS = List.of("POST", "PUT", "PATCH", "DELETE", "GET", "HEAD", "OPTIONS");

	private static final String VERSION_HEADER = "API-Version";

	private static final String VERSION_PARAMETER = "v";

	private static final String NO_VERSION = "";

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class, WebMvcAutoConfiguration.class,
				DispatcherServletAutoConfiguration.class))
		.withUserConfiguration(PaymentController.class, AccountController.class, PrefixedController.class)
		.withPropertyValues("idempotency.policies.accounts.ttl=1h", "idempotency.policies.json.ttl=1h");

	static Stream<Arguments> routings() {
		return Stream.of(routing("path patterns", (configurer) -> {
		}), routing("case-insensitive path patterns", (configurer) -> configurer.setPatternParser(parser(false))),
				routing("case-insensitive path patterns with a path prefix",
						(configurer) -> configurer.setPatternParser(parser(false))
							.addPathPrefix("/api", (type) -> type == PrefixedController.class)),
				routing("UrlPathHelper and AntPathMatcher",
						(configurer) -> configurer.setUrlPathHelper(new UrlPathHelper())
							.setPathMatcher(new AntPathMatcher())),
				routing("UrlPathHelper and case-insensitive AntPathMatcher", (configurer) -> {
					AntPathMatcher matcher = new AntPathMatcher();
					matcher.setCaseSensitive(false);
					configurer.setUrlPathHelper(new UrlPathHelper()).setPathMatcher(matcher);
				}), routing("UrlPathHelper without decoding, keeping path parameters", (configurer) -> {
					UrlPathHelper helper = new UrlPathHelper();
					helper.setUrlDecode(false);
					helper.setRemoveSemicolonContent(false);
					helper.setAlwaysUseFullPath(true);
					configurer.setUrlPathHelper(helper).setPathMatcher(new AntPathMatcher());
				}));
	}

	private static Arguments routing(String name, Consumer<PathMatchConfigurer> configuration) {
		return Arguments.of(name, configuration);
	}

	static Stream<Arguments> versionings() {
		return Stream.of(
				versioning("version in a header, required",
						(configurer) -> configurer.useRequestHeader(VERSION_HEADER)),
				versioning("version in a header, with a default",
						(configurer) -> configurer.useRequestHeader(VERSION_HEADER).setDefaultVersion("1.0")),
				versioning("version in a query parameter, optional",
						(configurer) -> configurer.useQueryParam(VERSION_PARAMETER).setVersionRequired(false)),
				versioning("version in a header, only the declared versions supported",
						(configurer) -> configurer.useRequestHeader(VERSION_HEADER)
							.setVersionRequired(false)
							.detectSupportedVersions(false)
							.addSupportedVersions("1", "1.2", "2")));
	}

	private static Arguments versioning(String name, Consumer<ApiVersionConfigurer> configuration) {
		return Arguments.of(name, configuration);
	}

	private static PathPatternParser parser(boolean caseSensitive) {
		PathPatternParser parser = new PathPatternParser();
		parser.setCaseSensitive(caseSensitive);
		return parser;
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("routings")
	void resolverFindsTheEndpointOfEveryHandlerSpringChooses(String name, Consumer<PathMatchConfigurer> routing) {
		this.runner.withBean(WebMvcConfigurer.class, () -> new WebMvcConfigurer() {

			@Override
			public void configurePathMatch(PathMatchConfigurer configurer) {
				routing.accept(configurer);
			}

		}).run((context) -> assertConformance(name, context, requests(context, List.of(NO_VERSION))));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("versionings")
	void resolverFindsTheEndpointOfEveryHandlerSpringChoosesForApiVersions(String name,
			Consumer<ApiVersionConfigurer> versioning) {
		this.runner.withUserConfiguration(VersionedController.class)
			.withBean(WebMvcConfigurer.class, () -> new WebMvcConfigurer() {

				@Override
				public void configureApiVersioning(ApiVersionConfigurer configurer) {
					versioning.accept(configurer);
				}

			})
			.run((context) -> assertConformance(name, context,
					requests(context, List.of(NO_VERSION, "1", "1.0", "1.2", "1.5", "2", "3", "x"))));
	}

	private static void assertConformance(String name, AssertableWebApplicationContext context,
			List<GeneratedRequest> generated) {
		assertThat(context).hasNotFailed();
		HandlerMappingEndpointResolver resolver = context.getBean(HandlerMappingEndpointResolver.class);
		List<HandlerMapping> handlerMappings = new ArrayList<>(context.getBeansOfType(HandlerMapping.class).values());
		AnnotationAwareOrderComparator.sort(handlerMappings);
		List<String> mismatches = new ArrayList<>();
		int requests = 0;
		int idempotent = 0;
		for (GeneratedRequest request : generated) {
			IdempotentEndpoint chosen = endpointOfChosenHandler(handlerMappings, resolver, request.create());
			IdempotentEndpoint resolved = resolver.resolve(request.create());
			if (!Objects.equals(chosen, resolved)) {
				mismatches.add(request + ": Spring MVC chose " + describe(chosen) + ", the resolver found "
						+ describe(resolved));
			}
			requests++;
			idempotent += (chosen != null) ? 1 : 0;
		}
		assertThat(mismatches).as("%s: %d of %d requests", name, mismatches.size(), requests).isEmpty();
		// the generated set reaches idempotent handlers, and other handlers too
		assertThat(idempotent).as(name).isGreaterThan(100).isLessThan(requests / 2);
	}

	/**
	 * The endpoint of the handler that the dispatcher servlet would run: the first
	 * handler mapping that has a handler for the request decides, and one that fails the
	 * request (no acceptable method or media type) leaves it without a handler.
	 */
	private static @Nullable IdempotentEndpoint endpointOfChosenHandler(List<HandlerMapping> handlerMappings,
			HandlerMappingEndpointResolver resolver, MockHttpServletRequest request) {
		ServletRequestPathUtils.parseAndCache(request);
		for (HandlerMapping handlerMapping : handlerMappings) {
			HandlerExecutionChain chain;
			try {
				chain = handlerMapping.getHandler(request);
			}
			catch (Exception ex) {
				return null;
			}
			if (chain != null) {
				return (chain.getHandler() instanceof HandlerMethod handlerMethod)
						? resolver.findEndpoint(handlerMethod) : null;
			}
		}
		return null;
	}

	private static String describe(@Nullable IdempotentEndpoint endpoint) {
		return (endpoint != null) ? "the idempotent handler of policy '" + endpoint.policy() + "'"
				: "no idempotent handler";
	}

	private static List<GeneratedRequest> requests(ApplicationContext context, List<String> versions) {
		Set<String> paths = new TreeSet<>();
		for (String base : basePaths(context)) {
			paths.addAll(variants(base));
		}
		List<GeneratedRequest> requests = new ArrayList<>();
		for (String path : paths) {
			for (String method : METHODS) {
				addVariants(requests, method, path, versions);
			}
		}
		return requests;
	}

	private static void addVariants(List<GeneratedRequest> requests, String method, String path,
			List<String> versions) {
		for (boolean preview : List.of(false, true)) {
			for (boolean json : List.of(false, true)) {
				for (String version : versions) {
					requests.add(new GeneratedRequest(method, path, preview, json, version));
				}
			}
		}
	}

	// every mapped pattern with its variables filled in, and paths nothing maps
	private static Set<String> basePaths(ApplicationContext context) {
		Set<String> paths = new LinkedHashSet<>(
				List.of("/", "/unknown", "/payments/7/unknown", "/api", "/api/unknown", "/accounts", "/multi"));
		for (RequestMappingInfoHandlerMapping handlerMapping : context
			.getBeansOfType(RequestMappingInfoHandlerMapping.class)
			.values()) {
			for (RequestMappingInfo info : handlerMapping.getHandlerMethods().keySet()) {
				for (String pattern : info.getPatternValues()) {
					for (String value : List.of("7", "batch", "export")) {
						paths.add(pattern.replaceAll("\\{[^}]*}", value).replace("**", "a/b").replace("*", value));
					}
				}
			}
		}
		return paths;
	}

	private static List<String> variants(String path) {
		List<String> variants = new ArrayList<>();
		variants.add(path);
		variants.add(path.toUpperCase(Locale.ROOT));
		variants.add(path.toLowerCase(Locale.ROOT));
		variants.add(capitalizeSegments(path));
		variants.add(path.endsWith("/") ? path.substring(0, Math.max(1, path.length() - 1)) : path + "/");
		variants.add(path.toUpperCase(Locale.ROOT) + (path.endsWith("/") ? "" : "/"));
		variants.add("/" + path);
		variants.add(path + ";jsessionid=7");
		if (path.length() > 1 && Character.isLetter(path.charAt(1))) {
			// the first letter percent-encoded, in lower and in upper case
			variants.add("/%" + Integer.toHexString(path.charAt(1)) + path.substring(2));
			variants.add("/%" + Integer.toHexString(Character.toUpperCase(path.charAt(1))) + path.substring(2));
		}
		return variants;
	}

	private static String capitalizeSegments(String path) {
		StringBuilder capitalized = new StringBuilder(path.length());
		for (int i = 0; i < path.length(); i++) {
			char c = path.charAt(i);
			capitalized.append((i > 0 && path.charAt(i - 1) == '/') ? Character.toUpperCase(c) : c);
		}
		return capitalized.toString();
	}

	/**
	 * One generated request; {@link #create()} makes a fresh one, so that Spring MVC and
	 * the resolver never see each other's request attributes.
	 */
	private record GeneratedRequest(String method, String path, boolean preview, boolean json, String version) {

		MockHttpServletRequest create() {
			MockHttpServletRequest request = new MockHttpServletRequest(this.method, this.path);
			if (this.preview) {
				request.setParameter("preview", "true");
			}
			if (!NO_VERSION.equals(this.version)) {
				// each versioning reads one of the two
				request.addHeader(VERSION_HEADER, this.version);
				request.setParameter(VERSION_PARAMETER, this.version);
			}
			if (this.json) {
				request.setContentType(MediaType.APPLICATION_JSON_VALUE);
			}
			return request;
		}

		@Override
		public String toString() {
			return this.method + " " + this.path + (this.preview ? "?preview=true" : "") + (this.json ? " (JSON)" : "")
					+ (NO_VERSION.equals(this.version) ? "" : " (version " + this.version + ")");
		}

	}

	@RestController
	static class PaymentController {

		@PostMapping("/payments")
		@Idempotent
		String create() {
			return "created";
		}

		@GetMapping("/payments")
		String list() {
			return "list";
		}

		@PutMapping("/payments/{id}")
		@Idempotent
		String update() {
			return "updated";
		}

		@PostMapping("/payments/export")
		String export() {
			return "exported";
		}

		@PostMapping("/payments/{id}/refunds")
		@Idempotent
		String refund() {
			return "refunded";
		}

		@PostMapping("/payments/batch/refunds")
		String batchRefunds() {
			return "batch refunded";
		}

		@PostMapping("/orders")
		@Idempotent
		String order() {
			return "ordered";
		}

		@PostMapping(path = "/orders", params = "preview")
		String preview() {
			return "preview";
		}

		@PostMapping(path = "/orders", consumes = MediaType.APPLICATION_JSON_VALUE)
		@Idempotent("json")
		String orderJson() {
			return "ordered from JSON";
		}

		@PatchMapping({ "/multi/a", "/multi/b/" })
		@Idempotent
		String multi() {
			return "multi";
		}

		@PostMapping("/trailing/")
		@Idempotent
		String trailing() {
			return "trailing";
		}

		@DeleteMapping("/Mixed/Case")
		@Idempotent
		String mixedCase() {
			return "deleted";
		}

		@PostMapping("/files/**")
		@Idempotent
		String files() {
			return "file";
		}

		@PostMapping("/{name}")
		String named() {
			return "named";
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

		@RequestMapping("/notes")
		String notes() {
			return "notes";
		}

	}

	@RestController
	static class VersionedController {

		@PostMapping(path = "/versioned", version = "1")
		@Idempotent
		String first() {
			return "first";
		}

		@PostMapping(path = "/versioned", version = "1.2+")
		String baseline() {
			return "baseline";
		}

		@PostMapping(path = "/versioned", version = "2")
		@Idempotent("json")
		String second() {
			return "second";
		}

		@PutMapping(path = "/versioned/{id}", version = "1.2+")
		@Idempotent
		String update() {
			return "updated";
		}

		@PutMapping(path = "/versioned/export", version = "2")
		String export() {
			return "exported";
		}

		@PatchMapping("/versioned/any")
		@Idempotent
		String any() {
			return "any";
		}

	}

	@RestController
	static class PrefixedController {

		@PostMapping("/prefixed")
		@Idempotent
		String prefixed() {
			return "prefixed";
		}

	}

}
