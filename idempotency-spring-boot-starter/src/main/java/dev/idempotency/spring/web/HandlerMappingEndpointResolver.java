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

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;

import dev.idempotency.spring.Idempotent;
import dev.idempotency.spring.NamedPolicies;
import dev.idempotency.spring.NamedPolicy;
import dev.idempotency.spring.http.EndpointRule;
import dev.idempotency.spring.http.IdempotentEndpoint;
import jakarta.servlet.http.HttpServletRequest;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextAware;
import org.springframework.core.ResolvableType;
import org.springframework.http.HttpEntity;
import org.springframework.http.server.RequestPath;
import org.springframework.web.accept.ApiVersionHolder;
import org.springframework.web.accept.ApiVersionStrategy;
import org.springframework.web.accept.NotAcceptableApiVersionException;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.context.request.async.WebAsyncTask;
import org.springframework.web.cors.CorsUtils;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.servlet.mvc.method.RequestMappingInfo;
import org.springframework.web.servlet.mvc.method.RequestMappingInfoHandlerMapping;
import org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter;
import org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody;
import org.springframework.web.util.ServletRequestPathUtils;
import org.springframework.web.util.UrlPathHelper;

/**
 * {@link IdempotentEndpointResolver} over Spring MVC's request mappings: the handler
 * methods annotated with {@link Idempotent @Idempotent} (on the method, or on the
 * controller class for methods that accept an unsafe HTTP method), plus configured
 * {@link EndpointRule rules} for endpoints that cannot be annotated.
 * <p>
 * <b>Start-up.</b> The idempotent mappings are collected once, after all singletons
 * exist, from every {@link RequestMappingInfoHandlerMapping} of the application context.
 * A handler that names an unknown policy, or that streams its response, fails start-up,
 * and so does an asynchronous handler of a transactional policy.
 * <p>
 * <b>Per request.</b> A request whose method no idempotent mapping accepts is answered at
 * the cost of a set lookup. Otherwise its path is matched against the idempotent
 * {@link RequestMappingInfo}s only (never the application's other mappings): mappings
 * with literal paths are found by a hash lookup of the request path with its case folded
 * (so that a case-insensitive {@code PathPatternParser} is followed, as Spring MVC's
 * fallback from its exact-path lookup does), mappings with patterns are checked one by
 * one. This reproduces Spring MVC's choice without a second full handler lookup.
 * <p>
 * <b>API versions.</b> With API versioning configured, the request's version is resolved
 * by the handler mapping's {@code ApiVersionStrategy} before matching, as Spring MVC
 * does, and a match is dropped where Spring MVC refuses the request instead of running
 * the handler: a version that is missing, unsupported or malformed, or a fixed mapping
 * version other than the request's.
 * <p>
 * <b>Shadowing.</b> An idempotent pattern such as {@code /orders/{id}} may also match a
 * path that Spring MVC routes to a more specific, non-idempotent mapping such as
 * {@code /orders/export}. At start-up each idempotent mapping is paired with the
 * non-idempotent mappings that could overlap it (same or higher-priority handler mapping,
 * a common HTTP method, literal path prefixes that do not exclude each other); when the
 * idempotent mapping matches a request, those are matched too and, if one of them is what
 * Spring MVC would prefer, the request is not treated as idempotent. Configured rules are
 * path rules and are never shadowed.
 * <p>
 * Thread-safe once initialized.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class HandlerMappingEndpointResolver
		implements IdempotentEndpointResolver, ApplicationContextAware, SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(HandlerMappingEndpointResolver.class);

	private static final Set<String> SAFE_METHODS = Set.of("GET", "HEAD", "OPTIONS", "TRACE");

	private static final int MAX_RETURN_TYPE_DEPTH = 4;

	private final NamedPolicies policies;

	private final List<EndpointRule> rules;

	private @Nullable ApplicationContext applicationContext;

	private volatile @Nullable Index index;

	/**
	 * Create a resolver.
	 * @param policies the configured policies, never {@code null}
	 * @param rules the configured endpoint rules, in order of precedence, never
	 * {@code null}
	 * @throws IllegalArgumentException if a rule names an unknown policy
	 */
	public HandlerMappingEndpointResolver(NamedPolicies policies, List<EndpointRule> rules) {
		this.policies = Objects.requireNonNull(policies, "'policies' must not be null");
		this.rules = List.copyOf(Objects.requireNonNull(rules, "'rules' must not be null"));
		for (EndpointRule rule : this.rules) {
			if (policies.get(rule.endpoint().policy()) == null) {
				throw new IllegalArgumentException("Endpoint rule " + rule + " names the policy '"
						+ rule.endpoint().policy() + "', which is not configured " + policies.names());
			}
		}
	}

	@Override
	public void setApplicationContext(ApplicationContext applicationContext) {
		this.applicationContext = applicationContext;
	}

	@Override
	public void afterSingletonsInstantiated() {
		ApplicationContext context = this.applicationContext;
		if (context != null && this.index == null) {
			initialize(context.getBeansOfType(RequestMappingInfoHandlerMapping.class).values());
		}
	}

	/**
	 * Collect the idempotent mappings of the given handler mappings. Called at start-up;
	 * calling it again replaces what was collected.
	 * @param handlerMappings the handler mappings, never {@code null}
	 * @throws IllegalStateException if an {@code @Idempotent} handler names an unknown
	 * policy or streams its response
	 */
	public void initialize(Collection<? extends RequestMappingInfoHandlerMapping> handlerMappings) {
		List<RequestMappingInfoHandlerMapping> sorted = new ArrayList<>(handlerMappings);
		sorted.sort(Comparator.comparingInt(RequestMappingInfoHandlerMapping::getOrder));
		List<Mapping> idempotent = new ArrayList<>();
		List<Mapping> others = new ArrayList<>();
		Map<HandlerKey, IdempotentEndpoint> byHandler = new HashMap<>();
		UrlPathHelper legacyPathHelper = null;
		for (int rank = 0; rank < sorted.size(); rank++) {
			RequestMappingInfoHandlerMapping handlerMapping = sorted.get(rank);
			for (Map.Entry<RequestMappingInfo, HandlerMethod> entry : handlerMapping.getHandlerMethods().entrySet()) {
				RequestMappingInfo info = entry.getKey();
				if (info.getPathPatternsCondition() == null) {
					legacyPathHelper = handlerMapping.getUrlPathHelper();
				}
				IdempotentEndpoint endpoint = endpointOf(info, entry.getValue());
				Mapping mapping = new Mapping(handlerMapping, rank, info, endpoint);
				((endpoint != null) ? idempotent : others).add(mapping);
				if (endpoint != null) {
					byHandler.putIfAbsent(HandlerKey.of(entry.getValue()), endpoint);
				}
			}
		}
		for (Mapping mapping : idempotent) {
			for (Mapping other : others) {
				if (other.rank <= mapping.rank && mayOverlap(mapping.info, other.info)) {
					mapping.shadows.add(other);
				}
			}
		}
		this.index = new Index(idempotent, this.rules, legacyPathHelper, byHandler);
		describe(idempotent, others);
	}

	// One INFO line with what is protected, and a warning for each configured rule that
	// no handler mapping can match: the requests it was meant for are not protected.
	private void describe(List<Mapping> idempotent, List<Mapping> others) {
		if (logger.isInfoEnabled()) {
			// by path, then method: the order a reader looks for them in
			List<String[]> described = new ArrayList<>();
			for (Mapping mapping : idempotent) {
				IdempotentEndpoint endpoint = mapping.endpoint;
				Set<RequestMethod> methods = mapping.info.getMethodsCondition().getMethods();
				String path = String.join(" | ", new TreeSet<>(patternsOf(mapping.info)));
				String method = methods.isEmpty() ? "*" : methods.stream().map(Enum::name).sorted().toList().toString();
				String policy = (endpoint != null)
						? endpoint.policy() + "'" + (endpoint.required() ? "" : ", key optional") : "?'";
				described.add(new String[] { path, method, method + " " + path + " -> policy '" + policy });
			}
			described.sort(Comparator.comparing((String[] entry) -> entry[0]).thenComparing((entry) -> entry[1]));
			List<String> endpoints = new ArrayList<>();
			described.forEach((entry) -> endpoints.add(entry[2]));
			for (EndpointRule rule : this.rules) {
				endpoints.add(rule.methods().stream().sorted().toList() + " " + rule.path() + " -> policy '"
						+ rule.endpoint().policy() + "' (idempotency.endpoints)");
			}
			logger.info(endpoints.isEmpty()
					? "No idempotent endpoints: no handler is annotated with @Idempotent and idempotency.endpoints"
							+ " is empty"
					: "Idempotent endpoints (" + endpoints.size() + "): " + String.join("; ", endpoints));
		}
		for (EndpointRule rule : this.rules) {
			boolean matched = false;
			for (List<Mapping> mappings : List.of(idempotent, others)) {
				for (Mapping mapping : mappings) {
					matched = matched || rule.mayMatch(methodNames(mapping.info), patternsOf(mapping.info));
				}
			}
			if (!matched) {
				logger.warn("Rule " + rule + " of idempotency.endpoints matches no handler mapping: the requests it"
						+ " was meant for are not protected; check its methods and path");
			}
		}
	}

	/**
	 * Return how the given handler method was collected at start-up: the endpoint of an
	 * {@link Idempotent @Idempotent} mapping of that method, by the same rules the filter
	 * applies (an annotation on the class covers only mappings that accept an unsafe HTTP
	 * method). Configured {@linkplain #getRules() rules} are not considered: they match
	 * paths, not handlers. Meant for tools that describe the endpoints, such as API
	 * documentation.
	 * @param handlerMethod the handler method, never {@code null}
	 * @return the endpoint, or {@code null} if no idempotent mapping has that handler
	 * method
	 * @throws IllegalStateException if the resolver has not been initialized yet
	 */
	public @Nullable IdempotentEndpoint findEndpoint(HandlerMethod handlerMethod) {
		Index current = this.index;
		if (current == null) {
			throw new IllegalStateException("HandlerMappingEndpointResolver has not been initialized");
		}
		return current.byHandler.get(HandlerKey.of(handlerMethod));
	}

	/**
	 * Return the configured endpoint rules, in order of precedence. They apply to a
	 * request that no idempotent mapping matches.
	 * @return an unmodifiable list
	 */
	public List<EndpointRule> getRules() {
		return this.rules;
	}

	private @Nullable IdempotentEndpoint endpointOf(RequestMappingInfo info, HandlerMethod handlerMethod) {
		IdempotentEndpoint endpoint = IdempotentEndpoint.of(handlerMethod, acceptsOnlySafeMethods(info), this.policies);
		if (endpoint == null) {
			return null;
		}
		ResolvableType returnType = ResolvableType.forMethodParameter(handlerMethod.getReturnType());
		if (isStreaming(returnType, 0)) {
			throw new IllegalStateException("@Idempotent handler " + handlerMethod + " streams its response ("
					+ returnType + "): a streamed response cannot be stored and replayed; return a complete "
					+ "response body or remove @Idempotent");
		}
		NamedPolicy policy = this.policies.get(endpoint.policy());
		if (policy != null && policy.transactional() && isAsynchronous(returnType)) {
			throw new IllegalStateException("@Idempotent handler " + handlerMethod + " of the transactional policy '"
					+ endpoint.policy() + "' is asynchronous (" + returnType + "): its work would run outside"
					+ " the request's transaction; return the response itself, or use a policy that is not"
					+ " transactional");
		}
		return endpoint;
	}

	private static boolean acceptsOnlySafeMethods(RequestMappingInfo info) {
		Set<RequestMethod> methods = info.getMethodsCondition().getMethods();
		if (methods.isEmpty()) {
			return false;
		}
		for (RequestMethod method : methods) {
			if (!SAFE_METHODS.contains(method.name())) {
				return false;
			}
		}
		return true;
	}

	// the return types with which Spring MVC finishes the request on another thread
	private static boolean isAsynchronous(ResolvableType type) {
		Class<?> raw = type.resolve(Object.class);
		if (HttpEntity.class.isAssignableFrom(raw)) {
			ResolvableType body = type.as(HttpEntity.class);
			return body.hasGenerics() && isAsynchronous(body.getGeneric(0));
		}
		return Callable.class.isAssignableFrom(raw) || DeferredResult.class.isAssignableFrom(raw)
				|| CompletionStage.class.isAssignableFrom(raw) || WebAsyncTask.class.isAssignableFrom(raw);
	}

	private static boolean isStreaming(ResolvableType type, int depth) {
		Class<?> raw = type.resolve(Object.class);
		if (ResponseBodyEmitter.class.isAssignableFrom(raw) || StreamingResponseBody.class.isAssignableFrom(raw)) {
			return true;
		}
		if (depth < MAX_RETURN_TYPE_DEPTH && (HttpEntity.class.isAssignableFrom(raw)
				|| Callable.class.isAssignableFrom(raw) || DeferredResult.class.isAssignableFrom(raw)
				|| CompletionStage.class.isAssignableFrom(raw) || WebAsyncTask.class.isAssignableFrom(raw))) {
			ResolvableType nested = (HttpEntity.class.isAssignableFrom(raw)) ? type.as(HttpEntity.class) : type;
			return nested.hasGenerics() && isStreaming(nested.getGeneric(0), depth + 1);
		}
		return false;
	}

	private static boolean mayOverlap(RequestMappingInfo idempotent, RequestMappingInfo other) {
		Set<String> methods = methodNames(idempotent);
		Set<String> otherMethods = methodNames(other);
		if (!methods.isEmpty() && !otherMethods.isEmpty() && Collections.disjoint(methods, otherMethods)) {
			return false;
		}
		for (String pattern : patternsOf(idempotent)) {
			String prefix = literalPrefix(pattern);
			for (String otherPattern : patternsOf(other)) {
				String otherPrefix = literalPrefix(otherPattern);
				if (prefix.startsWith(otherPrefix) || otherPrefix.startsWith(prefix)) {
					return true;
				}
			}
		}
		return false;
	}

	private static Set<String> patternsOf(RequestMappingInfo info) {
		Set<String> patterns = info.getPatternValues();
		return patterns.isEmpty() ? Set.of("") : patterns;
	}

	// every path a pattern matches starts with this prefix; lower case so that
	// case-insensitive matching is covered too
	private static String literalPrefix(String pattern) {
		int end = pattern.length();
		for (int i = 0; i < pattern.length(); i++) {
			char c = pattern.charAt(i);
			if (c == '{' || c == '*' || c == '?') {
				end = i;
				break;
			}
		}
		return pattern.substring(0, end).toLowerCase(Locale.ROOT);
	}

	private static Set<String> methodNames(RequestMappingInfo info) {
		Set<String> names = new HashSet<>();
		for (RequestMethod method : info.getMethodsCondition().getMethods()) {
			names.add(method.name());
			if (method == RequestMethod.GET) {
				names.add("HEAD");
			}
		}
		return names;
	}

	@Override
	public @Nullable IdempotentEndpoint resolve(HttpServletRequest request) {
		Index current = this.index;
		if (current == null) {
			throw new IllegalStateException("HandlerMappingEndpointResolver has not been initialized");
		}
		if (!current.acceptsMethod(request.getMethod()) || CorsUtils.isPreFlightRequest(request)) {
			return null;
		}
		Object previousPath = request.getAttribute(ServletRequestPathUtils.PATH_ATTRIBUTE);
		Object previousLookupPath = request.getAttribute(UrlPathHelper.PATH_ATTRIBUTE);
		Object previousVersion = request.getAttribute(HandlerMapping.API_VERSION_ATTRIBUTE);
		try {
			RequestPath path = ServletRequestPathUtils.parseAndCache(request);
			if (current.legacyPathHelper != null) {
				current.legacyPathHelper.resolveAndCacheLookupPath(request);
			}
			return current.resolve(request, path);
		}
		finally {
			// leave the request as it was: the dispatcher parses it again for itself
			ServletRequestPathUtils.setParsedRequestPath((RequestPath) previousPath, request);
			restore(request, UrlPathHelper.PATH_ATTRIBUTE, previousLookupPath);
			if (current.versioned) {
				restore(request, HandlerMapping.API_VERSION_ATTRIBUTE, previousVersion);
			}
		}
	}

	private static void restore(HttpServletRequest request, String name, @Nullable Object value) {
		if (value != null) {
			request.setAttribute(name, value);
		}
		else {
			request.removeAttribute(name);
		}
	}

	/**
	 * One request mapping of a handler mapping.
	 */
	private static final class Mapping {

		final RequestMappingInfoHandlerMapping owner;

		final int rank;

		final RequestMappingInfo info;

		final @Nullable IdempotentEndpoint endpoint;

		final List<Mapping> shadows = new ArrayList<>();

		Mapping(RequestMappingInfoHandlerMapping owner, int rank, RequestMappingInfo info,
				@Nullable IdempotentEndpoint endpoint) {
			this.owner = owner;
			this.rank = rank;
			this.info = info;
			this.endpoint = endpoint;
		}

	}

	/**
	 * Identity of a handler method: the same method of a superclass belongs to several
	 * controllers, whose class-level annotations may differ.
	 */
	private record HandlerKey(Class<?> beanType, Method method) {

		static HandlerKey of(HandlerMethod handlerMethod) {
			return new HandlerKey(handlerMethod.getBeanType(), handlerMethod.getMethod());
		}

	}

	/**
	 * A mapping that matched a request, with the matching part of its condition.
	 */
	private record Match(Mapping mapping, RequestMappingInfo matched) {

	}

	/**
	 * The API version of one request, as each handler mapping resolves it: a mapping's
	 * version condition reads it from a request attribute that the handler mapping sets
	 * before it matches ({@code AbstractHandlerMapping#getHandler}), so the resolver sets
	 * it too, for the handler mapping whose mappings it matches. Handler mappings usually
	 * share one strategy, whose version is then resolved once.
	 */
	private static final class ApiVersions {

		private final HttpServletRequest request;

		private boolean resolved;

		private @Nullable ApiVersionStrategy strategy;

		private ApiVersionHolder version = ApiVersionHolder.EMPTY;

		ApiVersions(HttpServletRequest request) {
			this.request = request;
		}

		void useVersionOf(RequestMappingInfoHandlerMapping handlerMapping) {
			ApiVersionStrategy current = handlerMapping.getApiVersionStrategy();
			if (this.resolved && current == this.strategy) {
				return;
			}
			ApiVersionHolder version = ApiVersionHolder.EMPTY;
			if (current != null) {
				try {
					version = ApiVersionHolder.fromVersion(current.resolveParseAndValidateVersion(this.request));
				}
				catch (RuntimeException ex) {
					// missing, unsupported or malformed:
					// Spring MVC keeps the error the same way
					version = ApiVersionHolder.fromError(ex);
				}
			}
			this.request.setAttribute(HandlerMapping.API_VERSION_ATTRIBUTE, version);
			this.strategy = current;
			this.version = version;
			this.resolved = true;
		}

		/**
		 * Whether Spring MVC keeps the best match of a handler mapping as it is: it
		 * refuses a request whose version could not be resolved once it found a handler,
		 * and a fixed version (not a baseline such as {@code 1.2+}) other than the
		 * request's.
		 * @param handlerMapping the handler mapping of the match
		 * @param matched the matching condition of the match
		 * @return whether the handler runs
		 */
		boolean accepts(RequestMappingInfoHandlerMapping handlerMapping, RequestMappingInfo matched) {
			useVersionOf(handlerMapping);
			if (this.version.hasError()) {
				return false;
			}
			try {
				matched.getVersionCondition().handleMatch(this.request);
				return true;
			}
			catch (NotAcceptableApiVersionException ex) {
				return false;
			}
		}

	}

	/**
	 * The idempotent mappings, indexed for matching.
	 */
	private static final class Index {

		private final boolean anyMethod;

		private final Set<String> methods;

		private final Map<String, List<Mapping>> byDirectPath;

		private final List<Mapping> withDirectPaths;

		private final List<Mapping> withPatterns;

		private final List<EndpointRule> rules;

		private final @Nullable UrlPathHelper legacyPathHelper;

		private final Map<HandlerKey, IdempotentEndpoint> byHandler;

		private final boolean versioned;

		Index(List<Mapping> idempotent, List<EndpointRule> rules, @Nullable UrlPathHelper legacyPathHelper,
				Map<HandlerKey, IdempotentEndpoint> byHandler) {
			boolean any = false;
			Set<String> methodSet = new HashSet<>();
			Map<String, List<Mapping>> direct = new HashMap<>();
			List<Mapping> directMappings = new ArrayList<>();
			List<Mapping> patternMappings = new ArrayList<>();
			for (Mapping mapping : idempotent) {
				Set<String> names = methodNames(mapping.info);
				any = any || names.isEmpty();
				methodSet.addAll(names);
				Set<String> directPaths = mapping.info.getDirectPaths();
				boolean allDirect = mapping.info.getPathPatternsCondition() != null && !directPaths.isEmpty()
						&& !directPaths.contains("") && directPaths.size() == mapping.info.getPatternValues().size();
				if (allDirect) {
					directMappings.add(mapping);
					for (String path : directPaths) {
						List<Mapping> mappings = direct.computeIfAbsent(foldCase(path), (key) -> new ArrayList<>());
						if (!mappings.contains(mapping)) {
							mappings.add(mapping);
						}
					}
				}
				else {
					patternMappings.add(mapping);
				}
			}
			for (EndpointRule rule : rules) {
				methodSet.addAll(rule.methods());
			}
			this.anyMethod = any;
			this.methods = Set.copyOf(methodSet);
			this.byDirectPath = Map.copyOf(direct);
			this.withDirectPaths = List.copyOf(directMappings);
			this.withPatterns = List.copyOf(patternMappings);
			this.rules = rules;
			this.legacyPathHelper = legacyPathHelper;
			this.byHandler = Map.copyOf(byHandler);
			this.versioned = idempotent.stream()
				.anyMatch((mapping) -> mapping.owner.getApiVersionStrategy() != null
						|| mapping.shadows.stream().anyMatch((shadow) -> shadow.owner.getApiVersionStrategy() != null));
		}

		/**
		 * Fold the case of a path as a case-insensitive {@code PathPatternParser}
		 * compares literal text: character by character with
		 * {@link Character#toLowerCase(char)}. Spring MVC falls back from its own
		 * exact-path index to trying every mapping, which is how {@code /PAYMENTS}
		 * reaches a mapping of {@code /payments}; keying this index by the folded path
		 * finds the same mappings with one lookup, and their conditions then decide as
		 * they do for Spring MVC, case-sensitive or not.
		 * @param path the path
		 * @return the folded path, the same instance if nothing changes
		 */
		static String foldCase(String path) {
			for (int i = 0; i < path.length(); i++) {
				char c = path.charAt(i);
				if (Character.toLowerCase(c) != c) {
					char[] chars = path.toCharArray();
					for (int j = i; j < chars.length; j++) {
						chars[j] = Character.toLowerCase(chars[j]);
					}
					return new String(chars);
				}
			}
			return path;
		}

		boolean acceptsMethod(String method) {
			return this.anyMethod || this.methods.contains(method);
		}

		@Nullable IdempotentEndpoint resolve(HttpServletRequest request, RequestPath path) {
			String lookupPath = UrlPathHelper.defaultInstance
				.removeSemicolonContent(path.pathWithinApplication().value());
			// an encoded path may still match a literal pattern once decoded
			List<Mapping> direct = (lookupPath.indexOf('%') >= 0) ? this.withDirectPaths
					: this.byDirectPath.getOrDefault(foldCase(lookupPath), List.of());
			ApiVersions versions = this.versioned ? new ApiVersions(request) : null;
			Match best = best(direct, request, null, versions);
			best = best(this.withPatterns, request, best, versions);
			if (best != null && !isShadowed(best, request, versions)
					&& (versions == null || versions.accepts(best.mapping().owner, best.matched()))) {
				return best.mapping().endpoint;
			}
			for (EndpointRule rule : this.rules) {
				IdempotentEndpoint endpoint = rule.match(request.getMethod(), path.pathWithinApplication());
				if (endpoint != null) {
					return endpoint;
				}
			}
			return null;
		}

		private static @Nullable Match best(List<Mapping> mappings, HttpServletRequest request, @Nullable Match best,
				@Nullable ApiVersions versions) {
			Match result = best;
			for (Mapping mapping : mappings) {
				RequestMappingInfo matched = matchingCondition(mapping, request, versions);
				if (matched != null && (result == null || isPreferred(mapping, matched, result, request))) {
					result = new Match(mapping, matched);
				}
			}
			return result;
		}

		private static @Nullable RequestMappingInfo matchingCondition(Mapping mapping, HttpServletRequest request,
				@Nullable ApiVersions versions) {
			if (versions != null) {
				versions.useVersionOf(mapping.owner);
			}
			return mapping.info.getMatchingCondition(request);
		}

		private static boolean isPreferred(Mapping mapping, RequestMappingInfo matched, Match other,
				HttpServletRequest request) {
			if (mapping.owner == other.mapping().owner) {
				return matched.compareTo(other.matched(), request) < 0;
			}
			return mapping.rank < other.mapping().rank;
		}

		private static boolean isShadowed(Match match, HttpServletRequest request, @Nullable ApiVersions versions) {
			for (Mapping shadow : match.mapping().shadows) {
				RequestMappingInfo matched = matchingCondition(shadow, request, versions);
				if (matched != null && isPreferred(shadow, matched, match, request)) {
					return true;
				}
			}
			return false;
		}

	}

}
