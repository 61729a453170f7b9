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

import java.io.IOException;
import java.lang.reflect.Method;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.idempotency.spring.IdempotencyKeySource;
import dev.idempotency.spring.Idempotent;
import dev.idempotency.spring.NamedPolicies;
import dev.idempotency.spring.NamedPolicy;
import dev.idempotency.spring.http.EndpointRule;
import dev.idempotency.spring.http.HttpContract;
import dev.idempotency.spring.http.IdempotencyProblem;
import dev.idempotency.spring.http.IdempotentEndpoint;
import dev.idempotency.spring.http.Refusal;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.http.server.PathContainer;
import org.springframework.http.server.RequestPath;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerInterceptor;

/**
 * {@link HandlerInterceptor} that checks, before a handler runs, that the
 * {@link IdempotencyFilter} treated the request as Spring MVC's choice of handler
 * requires. The filter decides which requests are idempotent before the
 * {@code DispatcherServlet} runs, with a {@link HandlerMappingEndpointResolver} that
 * reproduces Spring MVC's choice of handler, and leaves its decision in a request
 * attribute; this interceptor sees the handler that Spring MVC actually chose and
 * compares the two:
 * <ul>
 * <li>An {@link Idempotent @Idempotent} handler that the filter did not treat as
 * idempotent would run without protection, a second time for a retried request. The
 * request is refused with a {@code 500} problem ({@link IdempotencyProblem#NOT_APPLIED})
 * and an error naming the handler and the path is logged. A request without a key to a
 * handler whose key is optional is not refused: the filter lets such a request through
 * anyway.
 * <li>A handler that is not idempotent, reached by a request that the filter treated as
 * idempotent under an annotated mapping (not under a configured {@link EndpointRule
 * rule}, whose requests may reach any handler), runs as the filter decided: its response
 * is stored and replayed. A warning is logged once per handler.
 * <li>An idempotent handler reached by a request that the filter treated under another
 * endpoint (another policy, or another {@code required}) runs under the filter's
 * endpoint; a warning is logged once per handler.
 * <li>An idempotent handler reached by a request that the filter never saw (it is not
 * mapped to the request's path, or not registered) runs without protection; a warning is
 * logged once per handler.
 * </ul>
 * Only {@code REQUEST} dispatches are checked: an {@code ASYNC} or {@code ERROR} dispatch
 * belongs to the request that began it (whose handler was checked), and the filter does
 * not see {@code FORWARD} and {@code INCLUDE} dispatches.
 * <p>
 * The check costs a request attribute read and, for a {@link HandlerMethod}, one hash
 * lookup; the rules are matched only when a non-idempotent handler reaches a request the
 * filter treated as idempotent.
 * <p>
 * Thread-safe.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class EndpointResolutionInterceptor implements HandlerInterceptor {

	private static final Log logger = LogFactory.getLog(EndpointResolutionInterceptor.class);

	private final HandlerMappingEndpointResolver resolver;

	private final Set<Warning> warned = ConcurrentHashMap.newKeySet();

	private String keyHeader = HttpContract.KEY_HEADER;

	private @Nullable NamedPolicies policies;

	private String problemTypeBase = HttpContract.PROBLEM_TYPE_BASE;

	private @Nullable IdempotencyProblemRenderer problemRenderer;

	private ProblemWriter problems = new ProblemWriter(this.problemTypeBase, null);

	/**
	 * Create an interceptor.
	 * @param resolver the resolver of the {@link IdempotencyFilter} whose decisions are
	 * checked, never {@code null}
	 */
	public EndpointResolutionInterceptor(HandlerMappingEndpointResolver resolver) {
		this.resolver = Objects.requireNonNull(resolver, "'resolver' must not be null");
	}

	/**
	 * Set the name of the header that carries the key, as configured on the filter.
	 * Defaults to {@value IdempotencyFilter#DEFAULT_KEY_HEADER}.
	 * @param keyHeader the header name, never {@code null}
	 */
	public void setKeyHeader(String keyHeader) {
		this.keyHeader = Objects.requireNonNull(keyHeader, "'keyHeader' must not be null");
		this.problems = new ProblemWriter(this.problemTypeBase, this.problemRenderer);
	}

	/**
	 * Set the policies of the idempotent endpoints, so that a request to a handler whose
	 * policy reads its key from another header or from the body is checked against that
	 * source. Without them, every policy is taken to read the key header.
	 * @param policies the policies, or {@code null}
	 */
	public void setPolicies(@Nullable NamedPolicies policies) {
		this.policies = policies;
	}

	/**
	 * Set the base of the problem {@code type} URIs, as configured on the filter.
	 * Defaults to {@value IdempotencyFilter#DEFAULT_PROBLEM_TYPE_BASE}.
	 * @param problemTypeBase the base, never {@code null}
	 */
	public void setProblemTypeBase(String problemTypeBase) {
		this.problemTypeBase = Objects.requireNonNull(problemTypeBase, "'problemTypeBase' must not be null");
		this.problems = new ProblemWriter(this.problemTypeBase, this.problemRenderer);
	}

	/**
	 * Set what writes the body of the problem, as configured on the filter.
	 * @param problemRenderer the renderer, or {@code null} for RFC 9457 problem details
	 * @see IdempotencyFilter#setProblemRenderer(IdempotencyProblemRenderer)
	 */
	public void setProblemRenderer(@Nullable IdempotencyProblemRenderer problemRenderer) {
		this.problemRenderer = problemRenderer;
		this.problems = new ProblemWriter(this.problemTypeBase, this.problemRenderer);
	}

	@Override
	public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler)
			throws IOException {
		if (request.getDispatcherType() != DispatcherType.REQUEST) {
			return true;
		}
		Object decision = request.getAttribute(IdempotentRequests.ENDPOINT_ATTRIBUTE);
		IdempotentEndpoint handlerEndpoint = (handler instanceof HandlerMethod handlerMethod)
				? this.resolver.findEndpoint(handlerMethod) : null;
		if (decision == null) {
			if (handlerEndpoint != null) {
				warnOnce("not seen", handler, request, "the idempotency filter did not see this request, "
						+ "so the handler runs without protection; map the filter to every path of idempotent handlers");
			}
			return true;
		}
		IdempotentEndpoint filterEndpoint = (decision instanceof IdempotentEndpoint endpoint) ? endpoint : null;
		if (handlerEndpoint == null) {
			if (filterEndpoint != null && !matchesRule(request)) {
				warnOnce("not idempotent", handler, request, "the idempotency filter treated a request to this "
						+ "handler, which is not idempotent, as idempotent: its responses are stored and replayed");
			}
			return true;
		}
		if (filterEndpoint == null) {
			if (!handlerEndpoint.required() && keyNotSent(handlerEndpoint, request)) {
				// without a key the filter lets a request to this handler through anyway
				return true;
			}
			logger.error("Refused " + request.getMethod() + " " + request.getRequestURI()
					+ ": Spring MVC chose the @Idempotent handler " + handler
					+ ", but the idempotency filter did not treat the request as idempotent, so the handler "
					+ "would run without protection. Please report this with the handler's request mapping.");
			this.problems.write(request, response, Refusal.notApplied());
			return false;
		}
		if (!filterEndpoint.equals(handlerEndpoint)) {
			warnOnce("other endpoint", handler, request,
					"the idempotency filter treated this request as " + filterEndpoint
							+ ", but the handler is annotated as " + handlerEndpoint
							+ "; the filter's endpoint applies");
		}
		return true;
	}

	private boolean matchesRule(HttpServletRequest request) {
		if (this.resolver.getRules().isEmpty()) {
			return false;
		}
		PathContainer path = RequestPath.parse(request.getRequestURI(), request.getContextPath())
			.pathWithinApplication();
		for (EndpointRule rule : this.resolver.getRules()) {
			if (rule.match(request.getMethod(), path) != null) {
				return true;
			}
		}
		return false;
	}

	// whether the filter lets a request to an endpoint with an optional key through
	// unprotected: its key header was not sent (a key in the body is always required)
	private boolean keyNotSent(IdempotentEndpoint endpoint, HttpServletRequest request) {
		NamedPolicy policy = (this.policies != null) ? this.policies.get(endpoint.policy()) : null;
		IdempotencyKeySource source = (policy != null) ? policy.keySource() : IdempotencyKeySource.keyHeader();
		if (source.isBody()) {
			return false;
		}
		String header = source.header();
		return request.getHeader((header != null) ? header : this.keyHeader) == null;
	}

	private void warnOnce(String kind, Object handler, HttpServletRequest request, String message) {
		Method method = (handler instanceof HandlerMethod handlerMethod) ? handlerMethod.getMethod() : null;
		Class<?> type = (handler instanceof HandlerMethod handlerMethod) ? handlerMethod.getBeanType()
				: handler.getClass();
		if (this.warned.add(new Warning(kind, type, method)) && logger.isWarnEnabled()) {
			logger.warn(request.getMethod() + " " + request.getRequestURI() + " reached the handler " + handler + ": "
					+ message + " (logged once per handler)");
		}
	}

	/**
	 * What was logged about which handler.
	 */
	private record Warning(String kind, Class<?> type, @Nullable Method method) {

	}

}
