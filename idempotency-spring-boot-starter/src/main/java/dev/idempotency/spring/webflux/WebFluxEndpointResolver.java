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

package dev.idempotency.spring.webflux;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

import dev.idempotency.spring.NamedPolicies;
import dev.idempotency.spring.NamedPolicy;
import dev.idempotency.spring.http.EndpointRule;
import dev.idempotency.spring.http.IdempotentEndpoint;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextAware;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotationAwareOrderComparator;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.cors.reactive.CorsUtils;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.DispatcherHandler;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.result.method.RequestMappingInfo;
import org.springframework.web.reactive.result.method.RequestMappingInfoHandlerMapping;
import org.springframework.web.server.ServerWebExchange;

/**
 * Finds the idempotent endpoint of a WebFlux request: the handler that the application's
 * handler mappings choose for it, in the order the {@link DispatcherHandler} asks them,
 * and that handler's {@link dev.idempotency.spring.Idempotent @Idempotent} (read once, at
 * start-up, by the same rules as on Spring MVC: {@link IdempotentEndpoint#of}); for a
 * request whose handler is not annotated (a functional endpoint, say), the first
 * configured {@link EndpointRule} that matches its method and path.
 * <p>
 * At start-up it refuses what it cannot protect: an {@code @Idempotent} handler that
 * streams its response (server-sent events, NDJSON), and one of a transactional policy,
 * whose transaction cannot follow a reactive handler from thread to thread.
 * <p>
 * Thread-safe once initialized.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class WebFluxEndpointResolver implements ApplicationContextAware, SmartInitializingSingleton {

	private static final Log logger = LogFactory.getLog(WebFluxEndpointResolver.class);

	private static final Set<String> SAFE_METHODS = Set.of("GET", "HEAD", "OPTIONS", "TRACE");

	private static final List<MediaType> STREAMING_MEDIA_TYPES = List.of(MediaType.TEXT_EVENT_STREAM,
			MediaType.APPLICATION_NDJSON, MediaType.parseMediaType("application/stream+json"),
			MediaType.parseMediaType("application/x-ndjson"));

	private final NamedPolicies policies;

	private final List<EndpointRule> rules;

	private @Nullable ApplicationContext applicationContext;

	private volatile @Nullable Index index;

	/**
	 * Create a resolver.
	 * @param policies the configured policies
	 * @param rules the configured endpoint rules, in the order they are tried
	 */
	public WebFluxEndpointResolver(NamedPolicies policies, List<EndpointRule> rules) {
		this.policies = Objects.requireNonNull(policies, "'policies' must not be null");
		this.rules = List.copyOf(Objects.requireNonNull(rules, "'rules' must not be null"));
	}

	@Override
	public void setApplicationContext(ApplicationContext applicationContext) {
		this.applicationContext = applicationContext;
	}

	/**
	 * Read the handler mappings of the application context, once every singleton exists.
	 */
	@Override
	public void afterSingletonsInstantiated() {
		if (this.index != null || this.applicationContext == null) {
			return;
		}
		DispatcherHandler dispatcher = this.applicationContext.getBeanProvider(DispatcherHandler.class)
			.getIfAvailable();
		List<HandlerMapping> mappings;
		if (dispatcher != null) {
			mappings = dispatcher.getHandlerMappings();
		}
		else {
			mappings = new ArrayList<>(this.applicationContext.getBeansOfType(HandlerMapping.class).values());
			AnnotationAwareOrderComparator.sort(mappings);
		}
		initialize(mappings);
	}

	/**
	 * Read the idempotent handlers of the given handler mappings, which are asked for a
	 * request's handler in the given order.
	 * @param handlerMappings the handler mappings, in the dispatcher's order
	 * @throws IllegalStateException if an {@code @Idempotent} handler names an unknown
	 * policy, streams its response, or has a transactional policy
	 */
	public void initialize(Collection<? extends HandlerMapping> handlerMappings) {
		List<HandlerMapping> ordered = List.copyOf(handlerMappings);
		Map<HandlerKey, IdempotentEndpoint> byHandler = new HashMap<>();
		Set<String> methods = new HashSet<>();
		boolean anyMethod = false;
		List<String> described = new ArrayList<>();
		for (HandlerMapping mapping : ordered) {
			if (!(mapping instanceof RequestMappingInfoHandlerMapping annotated)) {
				continue;
			}
			for (Map.Entry<RequestMappingInfo, HandlerMethod> entry : annotated.getHandlerMethods().entrySet()) {
				IdempotentEndpoint endpoint = endpointOf(entry.getKey(), entry.getValue());
				if (endpoint == null) {
					continue;
				}
				byHandler.putIfAbsent(HandlerKey.of(entry.getValue()), endpoint);
				Set<RequestMethod> mapped = entry.getKey().getMethodsCondition().getMethods();
				anyMethod |= mapped.isEmpty();
				mapped.forEach((method) -> methods.add(method.name()));
				described.add(entry.getKey() + " (policy '" + endpoint.policy() + "'"
						+ (endpoint.required() ? "" : ", key optional") + ")");
			}
		}
		for (EndpointRule rule : this.rules) {
			methods.addAll(rule.methods());
		}
		this.index = new Index(ordered, Map.copyOf(byHandler), Set.copyOf(methods), anyMethod, this.rules);
		if (logger.isInfoEnabled()) {
			logger.info((described.isEmpty() && this.rules.isEmpty())
					? "No idempotent WebFlux endpoints: no handler is annotated with @Idempotent and"
							+ " idempotency.endpoints is empty"
					: "Idempotent WebFlux endpoints (" + described.size() + "): "
							+ String.join("; ", new TreeSet<>(described))
							+ (this.rules.isEmpty() ? "" : "; rules: " + this.rules));
		}
	}

	private @Nullable IdempotentEndpoint endpointOf(RequestMappingInfo info, HandlerMethod handler) {
		IdempotentEndpoint endpoint = IdempotentEndpoint.of(handler, acceptsOnlySafeMethods(info), this.policies);
		if (endpoint == null) {
			return null;
		}
		ResolvableType returnType = ResolvableType.forMethodParameter(handler.getReturnType());
		if (isStreaming(info, returnType)) {
			throw new IllegalStateException("@Idempotent handler " + handler + " streams its response (" + returnType
					+ ", produces " + info.getProducesCondition() + "): a streamed response cannot"
					+ " be stored and replayed; return a complete response body or remove @Idempotent");
		}
		NamedPolicy policy = this.policies.get(endpoint.policy());
		if (policy != null && policy.transactional()) {
			throw new IllegalStateException("@Idempotent handler " + handler + " has the transactional policy '"
					+ endpoint.policy() + "', which WebFlux handlers cannot have: a reactive handler's work does not"
					+ " run in the request's transaction. Use a policy that is not transactional, or run the"
					+ " handler on Spring MVC");
		}
		return endpoint;
	}

	private static boolean acceptsOnlySafeMethods(RequestMappingInfo info) {
		Set<RequestMethod> methods = info.getMethodsCondition().getMethods();
		return !methods.isEmpty() && methods.stream().allMatch((method) -> SAFE_METHODS.contains(method.name()));
	}

	private static boolean isStreaming(RequestMappingInfo info, ResolvableType returnType) {
		for (MediaType produced : info.getProducesCondition().getProducibleMediaTypes()) {
			for (MediaType streaming : STREAMING_MEDIA_TYPES) {
				if (streaming.isCompatibleWith(produced) && !produced.isWildcardType()) {
					return true;
				}
			}
		}
		return mentionsServerSentEvent(returnType, 0);
	}

	private static boolean mentionsServerSentEvent(ResolvableType type, int depth) {
		if (ServerSentEvent.class.isAssignableFrom(type.resolve(Object.class))) {
			return true;
		}
		if (depth < 4) {
			for (ResolvableType generic : type.getGenerics()) {
				if (mentionsServerSentEvent(generic, depth + 1)) {
					return true;
				}
			}
		}
		return false;
	}

	/**
	 * Resolve the idempotent endpoint of a request.
	 * @param exchange the request's exchange
	 * @return the endpoint, or empty if the request is not for an idempotent endpoint (or
	 * no handler mapping can tell, which the dispatcher then answers itself)
	 * @throws IllegalStateException if the resolver has not been initialized
	 */
	public Mono<IdempotentEndpoint> resolve(ServerWebExchange exchange) {
		Index current = this.index;
		if (current == null) {
			throw new IllegalStateException("WebFluxEndpointResolver has not been initialized");
		}
		ServerHttpRequest request = exchange.getRequest();
		String method = request.getMethod().name();
		if (!current.accepts(method) || CorsUtils.isPreFlightRequest(request)) {
			return Mono.empty();
		}
		return Flux.fromIterable(current.mappings)
			.concatMap((mapping) -> mapping.getHandler(exchange))
			.next()
			.map((handler) -> (handler instanceof HandlerMethod handlerMethod)
					? current.byHandler.getOrDefault(HandlerKey.of(handlerMethod), Index.NONE) : Index.NONE)
			.defaultIfEmpty(Index.NONE)
			.flatMap((endpoint) -> (endpoint != Index.NONE) ? Mono.just(endpoint)
					: Mono.justOrEmpty(current.rule(method, request)))
			// a request that no mapping can take (405, 406, 415): the dispatcher answers
			// it
			.onErrorResume((ex) -> Mono.empty());
	}

	private record HandlerKey(Class<?> beanType, Method method) {

		static HandlerKey of(HandlerMethod handler) {
			return new HandlerKey(handler.getBeanType(), handler.getMethod());
		}

	}

	private record Index(List<HandlerMapping> mappings, Map<HandlerKey, IdempotentEndpoint> byHandler,
			Set<String> methods, boolean anyMethod, List<EndpointRule> rules) {

		// a handler that is not idempotent
		static final IdempotentEndpoint NONE = new IdempotentEndpoint("", false);

		boolean accepts(String method) {
			return this.anyMethod || this.methods.contains(method);
		}

		@Nullable IdempotentEndpoint rule(String method, ServerHttpRequest request) {
			for (EndpointRule rule : this.rules) {
				IdempotentEndpoint endpoint = rule.match(method, request.getPath().pathWithinApplication());
				if (endpoint != null) {
					return endpoint;
				}
			}
			return null;
		}

	}

}
