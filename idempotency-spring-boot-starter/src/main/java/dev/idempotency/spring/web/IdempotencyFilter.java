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
import java.util.Collection;
import java.util.List;
import java.util.Objects;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyScopes;
import dev.idempotency.core.engine.IdempotencyEngine;
import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.spring.IdempotencyKeySource;
import dev.idempotency.spring.NamedPolicies;
import dev.idempotency.spring.NamedPolicy;
import dev.idempotency.spring.http.AnonymousRequests;
import dev.idempotency.spring.http.ClientTtlHeader;
import dev.idempotency.spring.http.HttpContract;
import dev.idempotency.spring.http.IdempotentEndpoint;
import dev.idempotency.spring.http.StoredHeaders;
import dev.idempotency.spring.observation.DefaultIdempotencyObservationConvention;
import dev.idempotency.spring.observation.IdempotencyObservationConvention;
import dev.idempotency.spring.observation.IdempotencyObservationDocumentation;
import dev.idempotency.spring.transaction.RequestTransactions;
import io.micrometer.observation.ObservationRegistry;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequestListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Servlet filter that applies the idempotency contract to the requests of idempotent
 * endpoints. It is a thin adapter over the {@link IdempotencyEngine}: it reads the key,
 * buffers and fingerprints the request, asks the engine, and then either runs the handler
 * while capturing its response, replays a stored response, or answers with an RFC 9457
 * problem.
 * <p>
 * <b>Order.</b> The filter must run after authentication (the principal scopes keys) and
 * may wrap the request, so {@link #DEFAULT_ORDER} puts it just after Spring Security's
 * filter chain ({@code SecurityProperties.DEFAULT_FILTER_ORDER}, -100) and before
 * {@code OrderedFilter.REQUEST_WRAPPER_FILTER_MAX_ORDER} (0).
 * <p>
 * <b>Dispatches.</b> Register the filter for the {@code REQUEST}, {@code ASYNC} and
 * {@code ERROR} dispatcher types, and register {@link #requestCleanupListener()}. An
 * asynchronous handler completes its key when the async dispatch ends. A handler that
 * calls {@code sendError} with a storable status completes its key from the error
 * dispatch that renders the error page, so that the page is replayed too; if no error
 * dispatch follows, the key is released when the request ends.
 * <p>
 * <b>Observations.</b> With an {@link #setObservationRegistry(ObservationRegistry)
 * observation registry}, each request that carries (or needs) a key is observed as
 * documented by {@link IdempotencyObservationDocumentation}. The observation is the
 * filter's only instrumentation: request metrics and spans both come from the handlers of
 * the registry. The default registry is {@link ObservationRegistry#NOOP}, which costs
 * nothing.
 * <p>
 * Thread-safe.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public class IdempotencyFilter extends OncePerRequestFilter {

	/**
	 * Default order of the filter: after Spring Security's filter chain (-100), before
	 * filters that must see the final request (0 and later).
	 */
	public static final int DEFAULT_ORDER = -90;

	/**
	 * Default name of the header that carries the key.
	 */
	public static final String DEFAULT_KEY_HEADER = HttpContract.KEY_HEADER;

	/**
	 * Default base of the problem {@code type} URIs.
	 */
	public static final String DEFAULT_PROBLEM_TYPE_BASE = HttpContract.PROBLEM_TYPE_BASE;

	/**
	 * Header set to {@code true} on replayed responses.
	 */
	public static final String REPLAYED_HEADER = HttpContract.REPLAYED_HEADER;

	/**
	 * Header that advertises when the record of a key expires (an HTTP date).
	 */
	public static final String EXPIRES_HEADER = HttpContract.EXPIRES_HEADER;

	/**
	 * Name of the request attribute that holds the request's {@link IdempotencyKey}
	 * (scope and the key as parsed, without sf-string quotes) while the handler runs, so
	 * that a handler can use the same key downstream, for example as the idempotency key
	 * of a call to a payment provider.
	 */
	public static final String KEY_ATTRIBUTE = IdempotentExchange.KEY_ATTRIBUTE;

	/**
	 * Name of the request attribute in which the filter leaves, on a {@code REQUEST}
	 * dispatch, what its resolver decided: the {@link IdempotentEndpoint}, or
	 * {@link #NO_ENDPOINT}. {@link EndpointResolutionInterceptor} compares it with the
	 * handler Spring MVC chose.
	 */
	static final String ENDPOINT_ATTRIBUTE = IdempotentRequests.ENDPOINT_ATTRIBUTE;

	/**
	 * Value of {@link #ENDPOINT_ATTRIBUTE} for a request that targets no idempotent
	 * endpoint.
	 */
	static final String NO_ENDPOINT = IdempotentRequests.NO_ENDPOINT;

	/**
	 * Response headers that are not stored nor replayed unless configured otherwise:
	 * {@code Access-Control-*} (CORS headers answer one request's origin: a retry's own
	 * CORS processing sets them) and headers that carry credentials or authentication
	 * challenges. A name ending in {@code *} matches by prefix, in any case.
	 */
	public static final List<String> DEFAULT_EXCLUDED_RESPONSE_HEADERS = HttpContract.EXCLUDED_RESPONSE_HEADERS;

	private final IdempotentRequests requests;

	private String problemTypeBase = DEFAULT_PROBLEM_TYPE_BASE;

	private @Nullable IdempotencyProblemRenderer problemRenderer;

	/**
	 * Create a filter.
	 * @param engine the engine, never {@code null}
	 * @param endpointResolver tells which requests are idempotent, never {@code null}
	 * @param policies the named policies, never {@code null}
	 */
	public IdempotencyFilter(IdempotencyEngine engine, IdempotentEndpointResolver endpointResolver,
			NamedPolicies policies) {
		this.requests = new IdempotentRequests(engine, endpointResolver, policies);
	}

	/**
	 * Set the name of the header that carries the key, for every policy whose
	 * {@link NamedPolicy#keySource() key source} is
	 * {@link IdempotencyKeySource#keyHeader()}. Defaults to {@value #DEFAULT_KEY_HEADER}.
	 * @param keyHeader the header name, never {@code null}
	 */
	public void setKeyHeader(String keyHeader) {
		this.requests.setKeyHeader(Objects.requireNonNull(keyHeader, "'keyHeader' must not be null"));
	}

	/**
	 * Set the strategy that scopes keys. Defaults to a
	 * {@link DefaultIdempotencyScopeResolver} without scope header. The non-empty scopes
	 * of any other resolver are stored under {@code custom:}, so that they never meet the
	 * default resolver's; a scope longer than {@link IdempotencyKey#MAX_SCOPE_LENGTH} is
	 * stored as {@code sha256:} and the hex digest of the prefixed scope (see
	 * {@link IdempotencyScopes}).
	 * @param scopeResolver the resolver, never {@code null}
	 */
	public void setScopeResolver(IdempotencyScopeResolver scopeResolver) {
		Objects.requireNonNull(scopeResolver, "'scopeResolver' must not be null");
		this.requests.setScopeResolver((scopeResolver instanceof DefaultIdempotencyScopeResolver) ? scopeResolver
				: (request) -> IdempotencyScopes.custom(scopeResolver.resolveScope(request)));
	}

	/**
	 * Set what happens to a request without an authenticated principal, whose key the
	 * scope resolver puts in the global scope. Defaults to
	 * {@link AnonymousRequests#ALLOW}; the auto-configuration sets
	 * {@code idempotency.anonymous-requests} when Spring Security is on the class path.
	 * It applies to a request whose key is in the global scope and that has no principal,
	 * whichever scope resolver gave the scope.
	 * @param anonymousRequests what to do, never {@code null}
	 */
	public void setAnonymousRequests(AnonymousRequests anonymousRequests) {
		this.requests
			.setAnonymousRequests(Objects.requireNonNull(anonymousRequests, "'anonymousRequests' must not be null"));
	}

	/**
	 * Return what happens to a request without an authenticated principal.
	 * @return the setting
	 * @see #setAnonymousRequests(AnonymousRequests)
	 */
	public AnonymousRequests getAnonymousRequests() {
		return this.requests.anonymousRequests();
	}

	/**
	 * Set the base of the problem {@code type} URIs; the problem's slug is appended.
	 * Defaults to {@value #DEFAULT_PROBLEM_TYPE_BASE}.
	 * @param problemTypeBase the base, never {@code null}
	 */
	public void setProblemTypeBase(String problemTypeBase) {
		this.problemTypeBase = Objects.requireNonNull(problemTypeBase, "'problemTypeBase' must not be null");
		this.requests.setProblems(new ProblemWriter(this.problemTypeBase, this.problemRenderer));
	}

	/**
	 * Set what writes the body of the problems the filter answers with, for an
	 * application whose errors have a format of their own. Defaults to {@code null}: RFC
	 * 9457 problem details. The status and {@code Retry-After} are set by the filter
	 * either way.
	 * @param problemRenderer the renderer, or {@code null} for the default format
	 */
	public void setProblemRenderer(@Nullable IdempotencyProblemRenderer problemRenderer) {
		this.problemRenderer = problemRenderer;
		this.requests.setProblems(new ProblemWriter(this.problemTypeBase, this.problemRenderer));
	}

	/**
	 * Set whether responses under a key carry the {@value #EXPIRES_HEADER} header.
	 * Defaults to {@code true}.
	 * @param expiresHeader whether to send the header
	 */
	public void setExpiresHeader(boolean expiresHeader) {
		this.requests.setResponseHeaders(this.requests.storedHeaders(), expiresHeader);
	}

	/**
	 * Set the name of a request header through which a client may ask for a TTL, in
	 * seconds, clamped to the policy's minimum and maximum. Defaults to {@code null}: the
	 * policy's TTL always applies.
	 * @param clientTtlHeader the header name, or {@code null} to disable
	 */
	public void setClientTtlHeader(@Nullable String clientTtlHeader) {
		this.requests.setClientTtlHeader(
				(clientTtlHeader != null) ? new ClientTtlHeader(clientTtlHeader) : ClientTtlHeader.NONE);
	}

	/**
	 * Set which response headers are stored for replay, besides the ones that never are
	 * (hop-by-hop headers, {@code Date}, {@code Content-Length}, {@code Set-Cookie}).
	 * Defaults to all others but {@link #DEFAULT_EXCLUDED_RESPONSE_HEADERS}. The
	 * selection applies to replays too: a header it excludes is not replayed from an
	 * older record.
	 * @param include names of the only headers to store (and {@code Content-Type}); empty
	 * to store all others
	 * @param exclude names of headers never to store, replacing
	 * {@link #DEFAULT_EXCLUDED_RESPONSE_HEADERS}; a name ending in {@code *} matches
	 * every header that starts with it
	 */
	public void setStoredHeaders(Collection<String> include, Collection<String> exclude) {
		this.requests.setResponseHeaders(new StoredHeaders(include, exclude), this.requests.expiresHeader());
	}

	/**
	 * Set the hook that redacts a response before it is stored. Defaults to none: the
	 * response is stored as the selected headers and the body leave it.
	 * @param storedResponseCustomizer the hook, or {@code null} for none
	 */
	public void setStoredResponseCustomizer(@Nullable StoredResponseCustomizer storedResponseCustomizer) {
		this.requests.setStoredResponseCustomizer(storedResponseCustomizer);
	}

	/**
	 * Set the registry that observes requests to idempotent endpoints. Defaults to
	 * {@link ObservationRegistry#NOOP}: no observation, at no cost.
	 * @param observationRegistry the registry, never {@code null}
	 * @see IdempotencyObservationDocumentation
	 */
	public void setObservationRegistry(ObservationRegistry observationRegistry) {
		this.requests.setObservation(
				Objects.requireNonNull(observationRegistry, "'observationRegistry' must not be null"),
				this.requests.observationConvention());
	}

	/**
	 * Set a convention that replaces the {@link DefaultIdempotencyObservationConvention}.
	 * @param observationConvention the convention, or {@code null} for the default
	 */
	public void setObservationConvention(@Nullable IdempotencyObservationConvention observationConvention) {
		this.requests.setObservation(this.requests.observationRegistry(), observationConvention);
	}

	/**
	 * Set what begins the transactions that the requests of transactional policies run
	 * in, on the transaction manager of the store's data source: the claim, the handler's
	 * own transactional work and the stored response commit together, before the response
	 * is written. Required when a policy is transactional.
	 * @param requestTransactions the request transactions, or {@code null} for none
	 * @see IdempotencyPolicy#transactional()
	 */
	public void setRequestTransactions(@Nullable RequestTransactions requestTransactions) {
		this.requests.setRequestTransactions(requestTransactions);
	}

	/**
	 * Return a listener to register with the servlet container: when a request ends, it
	 * releases the key of an execution that is still open because the error dispatch it
	 * waited for never came.
	 * @return the listener
	 */
	public ServletRequestListener requestCleanupListener() {
		return new PendingExecution.CleanupListener();
	}

	@Override
	protected boolean shouldNotFilterAsyncDispatch() {
		return false;
	}

	@Override
	protected boolean shouldNotFilterErrorDispatch() {
		return false;
	}

	@Override
	protected void doFilterNestedErrorDispatch(HttpServletRequest request, HttpServletResponse response,
			FilterChain filterChain) throws ServletException, IOException {
		doFilterInternal(request, response, filterChain);
	}

	@Override
	protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		PendingExecution pending = PendingExecution.of(request);
		if (pending != null) {
			// an async or error dispatch of a request whose handler runs
			pending.resume(request, response, chain);
			return;
		}
		IdempotentExchange exchange = this.requests.open(request, response);
		if (exchange == null) {
			// not an idempotent endpoint, or an optional key that was not sent
			chain.doFilter(request, response);
			return;
		}
		exchange.run(chain);
	}

}
