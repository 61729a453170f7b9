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
import java.util.Enumeration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyScopes;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.engine.Decision;
import dev.idempotency.core.engine.IdempotencyEngine;
import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.core.store.IdempotencyStoreException;
import dev.idempotency.spring.transaction.RequestTransaction;
import dev.idempotency.spring.transaction.RequestTransactions;
import dev.idempotency.spring.web.observation.DefaultIdempotencyObservationConvention;
import dev.idempotency.spring.web.observation.IdempotencyObservationConvention;
import dev.idempotency.spring.web.observation.IdempotencyObservationDocumentation;
import dev.idempotency.spring.web.observation.IdempotencyOutcome;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import jakarta.servlet.DispatcherType;
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
	public static final String DEFAULT_KEY_HEADER = "Idempotency-Key";

	/**
	 * Default base of the problem {@code type} URIs.
	 */
	public static final String DEFAULT_PROBLEM_TYPE_BASE = "https://idempotency.dev/problems/";

	/**
	 * Header set to {@code true} on replayed responses.
	 */
	public static final String REPLAYED_HEADER = "Idempotent-Replayed";

	/**
	 * Header that advertises when the record of a key expires (an HTTP date).
	 */
	public static final String EXPIRES_HEADER = "Idempotency-Expires";

	/**
	 * Name of the request attribute that holds the request's {@link IdempotencyKey}
	 * (scope and the key as parsed, without sf-string quotes) while the handler runs, so
	 * that a handler can use the same key downstream, for example as the idempotency key
	 * of a call to a payment provider.
	 */
	public static final String KEY_ATTRIBUTE = "dev.idempotency.spring.web.IdempotencyFilter.KEY";

	/**
	 * Name of the request attribute in which the filter leaves, on a {@code REQUEST}
	 * dispatch, what its resolver decided: the {@link IdempotentEndpoint}, or
	 * {@link #NO_ENDPOINT}. {@link EndpointResolutionInterceptor} compares it with the
	 * handler Spring MVC chose.
	 */
	static final String ENDPOINT_ATTRIBUTE = IdempotencyFilter.class.getName() + ".ENDPOINT";

	/**
	 * Value of {@link #ENDPOINT_ATTRIBUTE} for a request that targets no idempotent
	 * endpoint.
	 */
	static final String NO_ENDPOINT = "none";

	/**
	 * Response headers that are not stored nor replayed unless configured otherwise:
	 * {@code Access-Control-*} (CORS headers answer one request's origin: a retry's own
	 * CORS processing sets them) and headers that carry credentials or authentication
	 * challenges. A name ending in {@code *} matches by prefix, in any case.
	 */
	public static final List<String> DEFAULT_EXCLUDED_RESPONSE_HEADERS = List.of("Access-Control-*", "Authorization",
			"WWW-Authenticate", "X-Auth-Token", "X-Access-Token", "X-Refresh-Token", "X-Api-Key",
			"X-Amz-Security-Token", "X-CSRF-Token", "X-XSRF-Token");

	private final IdempotencyEngine engine;

	private final IdempotentEndpointResolver endpointResolver;

	private final EndpointPolicies policies;

	private String keyHeader = DEFAULT_KEY_HEADER;

	private IdempotencyScopeResolver scopeResolver = new DefaultIdempotencyScopeResolver();

	private AnonymousRequests anonymousRequests = AnonymousRequests.ALLOW;

	// the policies whose anonymous requests were warned about: one line each
	private final Set<String> anonymousWarned = ConcurrentHashMap.newKeySet();

	private String problemTypeBase = DEFAULT_PROBLEM_TYPE_BASE;

	private boolean expiresHeader = true;

	private ClientTtlHeader clientTtlHeader = ClientTtlHeader.NONE;

	private StoredHeaders storedHeaders = new StoredHeaders(List.of(), DEFAULT_EXCLUDED_RESPONSE_HEADERS);

	private @Nullable IdempotencyProblemRenderer problemRenderer;

	private ProblemResponses problems = new ProblemResponses(this.problemTypeBase, this.keyHeader, null);

	private ReplayWriter replays = new ReplayWriter(this.storedHeaders, this.expiresHeader, this.problems);

	private ObservationRegistry observationRegistry = ObservationRegistry.NOOP;

	private @Nullable IdempotencyObservationConvention observationConvention;

	private @Nullable RequestTransactions requestTransactions;

	/**
	 * Create a filter.
	 * @param engine the engine, never {@code null}
	 * @param endpointResolver tells which requests are idempotent, never {@code null}
	 * @param policies the named policies, never {@code null}
	 */
	public IdempotencyFilter(IdempotencyEngine engine, IdempotentEndpointResolver endpointResolver,
			EndpointPolicies policies) {
		this.engine = Objects.requireNonNull(engine, "'engine' must not be null");
		this.endpointResolver = Objects.requireNonNull(endpointResolver, "'endpointResolver' must not be null");
		this.policies = Objects.requireNonNull(policies, "'policies' must not be null");
	}

	/**
	 * Set the name of the header that carries the key, for every policy whose
	 * {@link EndpointPolicy#keySource() key source} is
	 * {@link IdempotencyKeySource#keyHeader()}. Defaults to {@value #DEFAULT_KEY_HEADER}.
	 * @param keyHeader the header name, never {@code null}
	 */
	public void setKeyHeader(String keyHeader) {
		this.keyHeader = Objects.requireNonNull(keyHeader, "'keyHeader' must not be null");
		configureResponses();
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
		this.scopeResolver = (scopeResolver instanceof DefaultIdempotencyScopeResolver) ? scopeResolver
				: (request) -> IdempotencyScopes.custom(scopeResolver.resolveScope(request));
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
		this.anonymousRequests = Objects.requireNonNull(anonymousRequests, "'anonymousRequests' must not be null");
	}

	/**
	 * Return what happens to a request without an authenticated principal.
	 * @return the setting
	 * @see #setAnonymousRequests(AnonymousRequests)
	 */
	public AnonymousRequests getAnonymousRequests() {
		return this.anonymousRequests;
	}

	/**
	 * Set the base of the problem {@code type} URIs; the problem's slug is appended.
	 * Defaults to {@value #DEFAULT_PROBLEM_TYPE_BASE}.
	 * @param problemTypeBase the base, never {@code null}
	 */
	public void setProblemTypeBase(String problemTypeBase) {
		this.problemTypeBase = Objects.requireNonNull(problemTypeBase, "'problemTypeBase' must not be null");
		configureResponses();
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
		configureResponses();
	}

	/**
	 * Set whether responses under a key carry the {@value #EXPIRES_HEADER} header.
	 * Defaults to {@code true}.
	 * @param expiresHeader whether to send the header
	 */
	public void setExpiresHeader(boolean expiresHeader) {
		this.expiresHeader = expiresHeader;
		configureResponses();
	}

	/**
	 * Set the name of a request header through which a client may ask for a TTL, in
	 * seconds, clamped to the policy's minimum and maximum. Defaults to {@code null}: the
	 * policy's TTL always applies.
	 * @param clientTtlHeader the header name, or {@code null} to disable
	 */
	public void setClientTtlHeader(@Nullable String clientTtlHeader) {
		this.clientTtlHeader = (clientTtlHeader != null) ? new ClientTtlHeader(clientTtlHeader) : ClientTtlHeader.NONE;
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
		this.storedHeaders = new StoredHeaders(include, exclude);
		configureResponses();
	}

	/**
	 * Set the registry that observes requests to idempotent endpoints. Defaults to
	 * {@link ObservationRegistry#NOOP}: no observation, at no cost.
	 * @param observationRegistry the registry, never {@code null}
	 * @see IdempotencyObservationDocumentation
	 */
	public void setObservationRegistry(ObservationRegistry observationRegistry) {
		this.observationRegistry = Objects.requireNonNull(observationRegistry,
				"'observationRegistry' must not be null");
	}

	/**
	 * Set a convention that replaces the {@link DefaultIdempotencyObservationConvention}.
	 * @param observationConvention the convention, or {@code null} for the default
	 */
	public void setObservationConvention(@Nullable IdempotencyObservationConvention observationConvention) {
		this.observationConvention = observationConvention;
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
		this.requestTransactions = requestTransactions;
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

	private void configureResponses() {
		this.problems = new ProblemResponses(this.problemTypeBase, this.keyHeader, this.problemRenderer);
		this.replays = new ReplayWriter(this.storedHeaders, this.expiresHeader, this.problems);
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
			pending.resume(request, response, chain);
			return;
		}
		IdempotentEndpoint endpoint = resolveEndpoint(request);
		EndpointPolicy policy = (endpoint != null) ? policyOf(endpoint) : null;
		IdempotencyKeySource keySource = (policy != null) ? policy.keySource() : IdempotencyKeySource.keyHeader();
		Enumeration<String> keyValues = (policy != null && !keySource.isBody())
				? request.getHeaders(keyHeader(keySource)) : null;
		if (policy == null || (!endpoint.required() && keyValues != null && !keyValues.hasMoreElements())) {
			// not an idempotent endpoint, or an optional key header that was not sent
			chain.doFilter(request, response);
			return;
		}
		RequestObservation observation = RequestObservation.start(this.observationRegistry, this.observationConvention,
				request, policy);
		try (Observation.Scope scope = observation.openScope()) {
			String clientKey;
			String keyScope;
			BufferedRequestWrapper buffered;
			if (keyValues != null) {
				clientKey = readKey(keyValues, keySource, request, response, observation);
				keyScope = (clientKey != null) ? scope(request, response, policy, observation) : null;
				buffered = (keyScope != null) ? buffer(clientKey, policy, request, response, observation) : null;
			}
			else {
				// a key in the body: known once the body is read
				keyScope = scope(request, response, policy, observation);
				buffered = (keyScope != null) ? buffer(null, policy, request, response, observation) : null;
				clientKey = (buffered != null) ? readBodyKey(buffered, keySource, request, response, observation)
						: null;
			}
			if (buffered != null && clientKey != null && keyScope != null) {
				// else the key, the caller or the body was refused with a problem
				IdempotencyKey key = key(keyScope, clientKey, request);
				RequestFingerprint fingerprint = fingerprint(buffered, policy);
				IdempotencyPolicy requestPolicy = this.clientTtlHeader.policy(request, policy);
				if (policy.transactional()) {
					beginInTransaction(key, fingerprint, requestPolicy, policy, buffered, response, chain, observation);
				}
				else {
					Decision decision = this.engine.begin(key, fingerprint, requestPolicy);
					act(decision, key, policy, buffered, response, chain, observation, null);
				}
			}
		}
		catch (Throwable ex) {
			observation.fail(ex);
			throw ex;
		}
		if (PendingExecution.of(request) == null) {
			// otherwise the execution goes on in an async or error dispatch
			observation.stop();
		}
	}

	private @Nullable IdempotentEndpoint resolveEndpoint(HttpServletRequest request) {
		if (request.getDispatcherType() != DispatcherType.REQUEST) {
			// later dispatches belong to the request that began them
			return null;
		}
		IdempotentEndpoint endpoint = this.endpointResolver.resolve(request);
		request.setAttribute(ENDPOINT_ATTRIBUTE, (endpoint != null) ? endpoint : NO_ENDPOINT);
		return endpoint;
	}

	private EndpointPolicy policyOf(IdempotentEndpoint endpoint) {
		EndpointPolicy policy = this.policies.get(endpoint.policy());
		if (policy == null) {
			throw new IllegalStateException("Idempotency policy '" + endpoint.policy() + "' is not configured");
		}
		return policy;
	}

	private String keyHeader(IdempotencyKeySource keySource) {
		String header = keySource.header();
		return (header != null) ? header : this.keyHeader;
	}

	// the client's key, or null once the request is answered with a problem
	private @Nullable String readKey(Enumeration<String> keyValues, IdempotencyKeySource keySource,
			HttpServletRequest request, HttpServletResponse response, RequestObservation observation)
			throws IOException {
		if (!keyValues.hasMoreElements()) {
			observation.outcome(IdempotencyOutcome.MISSING_KEY);
			this.problems.keyMissing(request, response, keySource);
			return null;
		}
		String value = keyValues.nextElement();
		String clientKey = keyValues.hasMoreElements() ? null : KeyHeaderParser.parse(value);
		if (clientKey == null) {
			observation.outcome(IdempotencyOutcome.INVALID_KEY);
			this.problems.keyInvalid(request, response, keySource);
		}
		return clientKey;
	}

	// the key in the body, or null once the request is answered with a problem
	private @Nullable String readBodyKey(BufferedRequestWrapper request, IdempotencyKeySource keySource,
			HttpServletRequest original, HttpServletResponse response, RequestObservation observation)
			throws IOException {
		JsonBodyKeyReader.BodyKey bodyKey = JsonBodyKeyReader.read(request.body(),
				Objects.requireNonNull(keySource.pointer()));
		if (bodyKey.key() == null) {
			observation.outcome(bodyKey.absent() ? IdempotencyOutcome.MISSING_KEY : IdempotencyOutcome.INVALID_KEY);
			if (bodyKey.absent()) {
				this.problems.keyMissing(original, response, keySource);
			}
			else {
				this.problems.keyInvalid(original, response, keySource);
			}
		}
		return bodyKey.key();
	}

	// the request with its body in memory, or null once it is answered with a problem
	private @Nullable BufferedRequestWrapper buffer(@Nullable String clientKey, EndpointPolicy policy,
			HttpServletRequest request, HttpServletResponse response, RequestObservation observation)
			throws IOException {
		BufferedRequestWrapper buffered = BufferedRequestWrapper.read(request, policy.maxRequestBody());
		if (buffered == null) {
			observation.outcome(IdempotencyOutcome.TOO_LARGE);
			this.problems.requestTooLarge(request, response, clientKey, policy.maxRequestBody());
		}
		return buffered;
	}

	// the scope of the request's key, or null once an anonymous caller is refused
	private @Nullable String scope(HttpServletRequest request, HttpServletResponse response, EndpointPolicy policy,
			RequestObservation observation) throws IOException {
		String scope = IdempotencyScopes.storable(this.scopeResolver.resolveScope(request));
		if (this.anonymousRequests == AnonymousRequests.ALLOW || !scope.equals(IdempotencyKey.GLOBAL_SCOPE)
				|| request.getUserPrincipal() != null) {
			return scope;
		}
		if (this.anonymousRequests == AnonymousRequests.REJECT) {
			observation.outcome(IdempotencyOutcome.UNAUTHENTICATED);
			this.problems.unauthenticated(request, response);
			return null;
		}
		if (this.anonymousWarned.add(policy.name()) && logger.isWarnEnabled()) {
			logger.warn("A request to an idempotent endpoint of policy '" + policy.name() + "' (" + request.getMethod()
					+ " " + request.getRequestURI() + ") has no authenticated principal: its key is in the global"
					+ " scope, shared by every anonymous caller. If an authentication filter of the application"
					+ " runs after this filter (idempotency.filter.order), order it first; set"
					+ " idempotency.anonymous-requests=reject to refuse such requests, or allow if the endpoint is"
					+ " meant for anonymous callers. Logged once per policy.");
		}
		return scope;
	}

	private IdempotencyKey key(String scope, String clientKey, HttpServletRequest request) {
		IdempotencyKey key = new IdempotencyKey(scope, clientKey);
		request.setAttribute(KEY_ATTRIBUTE, key);
		return key;
	}

	private static RequestFingerprint fingerprint(BufferedRequestWrapper request, EndpointPolicy policy) {
		return policy.fingerprinter().fingerprint(request.fingerprintInput(policy.fingerprintHeaders()));
	}

	// The transactional mode: the claim joins a transaction begun here, which the
	// execution commits with the handler's work before its response is written, and which
	// every other answer ends before it is written.
	private void beginInTransaction(IdempotencyKey key, RequestFingerprint fingerprint, IdempotencyPolicy requestPolicy,
			EndpointPolicy policy, BufferedRequestWrapper request, HttpServletResponse response, FilterChain chain,
			RequestObservation observation) throws ServletException, IOException {
		RequestTransactions transactions = this.requestTransactions;
		if (transactions == null) {
			throw new IllegalStateException(
					"Policy '" + policy.name() + "' is transactional, but the filter has no transaction manager");
		}
		RequestTransaction transaction;
		try {
			transaction = transactions.begin(requestPolicy.lockTimeout());
		}
		catch (IdempotencyStoreException ex) {
			// no connection could be had, or the database is down: the store failed
			act(this.engine.storeFailed(key, requestPolicy, ex), key, policy, request, response, chain, observation,
					null);
			return;
		}
		try {
			Decision decision = this.engine.begin(key, fingerprint, requestPolicy);
			act(decision, key, policy, request, response, chain, observation, transaction);
		}
		finally {
			// a no-op once the execution committed or gave the transaction up
			transaction.rollback();
		}
	}

	private void act(Decision decision, IdempotencyKey key, EndpointPolicy policy, BufferedRequestWrapper request,
			HttpServletResponse response, FilterChain chain, RequestObservation observation,
			@Nullable RequestTransaction transaction) throws ServletException, IOException {
		if (decision instanceof Decision.Execute execute) {
			observation.executing(execute.execution());
			new PendingExecution(execute.execution(), policy, observation, this.storedHeaders, this.replays,
					this.problems, transaction, response)
				.run(request, chain);
			return;
		}
		if (transaction != null && !transaction.endBeforeAnswer(decision)) {
			// what the store decided could not be committed
			observation.outcome(IdempotencyOutcome.STORE_UNAVAILABLE);
			this.problems.storeUnavailable(request, response, key.key(),
					ProblemResponses.wholeSeconds(policy.policy().unavailableRetryAfter()));
			return;
		}
		if (decision instanceof Decision.Replay replay) {
			observation.outcome(IdempotencyOutcome.REPLAYED);
			this.replays.write(replay, key.key(), request, response);
		}
		else if (decision instanceof Decision.InProgress inProgress) {
			observation.outcome(IdempotencyOutcome.IN_PROGRESS);
			this.problems.requestInProgress(request, response, key.key(), inProgress.retryAfter());
		}
		else if (decision instanceof Decision.Mismatch) {
			observation.outcome(IdempotencyOutcome.MISMATCH);
			this.problems.keyReused(request, response, key.key());
		}
		else if (decision instanceof Decision.Unavailable unavailable) {
			observation.outcome(IdempotencyOutcome.STORE_UNAVAILABLE);
			this.problems.storeUnavailable(request, response, key.key(), unavailable.retryAfter());
		}
		else {
			// fail-open: the engine has logged it; run without protection
			observation.outcome(IdempotencyOutcome.FAIL_OPEN);
			chain.doFilter(request, response);
		}
	}

}
