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
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Enumeration;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.idempotency.core.FingerprintInput;
import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.StoredResponseCodec;
import dev.idempotency.core.engine.CompletionOutcome;
import dev.idempotency.core.engine.Decision;
import dev.idempotency.core.engine.Execution;
import dev.idempotency.core.engine.IdempotencyEngine;
import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.spring.web.observation.DefaultIdempotencyObservationConvention;
import dev.idempotency.spring.web.observation.IdempotencyObservationContext;
import dev.idempotency.spring.web.observation.IdempotencyObservationConvention;
import dev.idempotency.spring.web.observation.IdempotencyObservationDocumentation;
import dev.idempotency.spring.web.observation.IdempotencyOutcome;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequestEvent;
import jakarta.servlet.ServletRequestListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.util.WebUtils;

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
 * documented by {@link IdempotencyObservationDocumentation}; the default registry is
 * {@link ObservationRegistry#NOOP}, which costs nothing.
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
	 * Response headers that are not stored nor replayed unless configured otherwise:
	 * {@code Access-Control-*} (CORS headers answer one request's origin: a retry's own
	 * CORS processing sets them) and headers that carry credentials or authentication
	 * challenges. A name ending in {@code *} matches by prefix, in any case.
	 */
	public static final List<String> DEFAULT_EXCLUDED_RESPONSE_HEADERS = List.of("Access-Control-*", "Authorization",
			"WWW-Authenticate", "X-Auth-Token", "X-Access-Token", "X-Refresh-Token", "X-Api-Key",
			"X-Amz-Security-Token", "X-CSRF-Token", "X-XSRF-Token");

	private static final String CALL_ATTRIBUTE = IdempotencyFilter.class.getName() + ".CALL";

	// before the non-empty scopes of a resolver other than the default one
	static final String CUSTOM_SCOPE_PREFIX = "custom:";

	// before the digest of a scope too long to store; no literal scope starts with it,
	// as every non-empty one starts with the prefix of its source
	static final String HASHED_SCOPE_PREFIX = "sha256:";

	private static final int MAX_TTL_HEADER_DIGITS = 10;

	private static final IdempotencyObservationConvention DEFAULT_OBSERVATION_CONVENTION = new DefaultIdempotencyObservationConvention();

	private final IdempotencyEngine engine;

	private final IdempotentEndpointResolver endpointResolver;

	private final EndpointPolicies policies;

	private String keyHeader = DEFAULT_KEY_HEADER;

	private IdempotencyScopeResolver scopeResolver = new DefaultIdempotencyScopeResolver();

	private ProblemWriter problems = new ProblemWriter(DEFAULT_PROBLEM_TYPE_BASE);

	private boolean expiresHeader = true;

	private @Nullable String clientTtlHeader;

	private StoredHeaders storedHeaders = new StoredHeaders(List.of(), DEFAULT_EXCLUDED_RESPONSE_HEADERS);

	private IdempotencyRequestListener listener = IdempotencyRequestListener.NONE;

	private ObservationRegistry observationRegistry = ObservationRegistry.NOOP;

	private @Nullable IdempotencyObservationConvention observationConvention;

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
	 * Set the name of the header that carries the key. Defaults to
	 * {@value #DEFAULT_KEY_HEADER}.
	 * @param keyHeader the header name, never {@code null}
	 */
	public void setKeyHeader(String keyHeader) {
		this.keyHeader = Objects.requireNonNull(keyHeader, "'keyHeader' must not be null");
	}

	/**
	 * Set the strategy that scopes keys. Defaults to a
	 * {@link DefaultIdempotencyScopeResolver} without scope header. The non-empty scopes
	 * of any other resolver are stored under {@code custom:}, so that they never meet the
	 * default resolver's; a scope longer than {@link IdempotencyKey#MAX_SCOPE_LENGTH} is
	 * stored as {@code sha256:} and the hex digest of the prefixed scope.
	 * @param scopeResolver the resolver, never {@code null}
	 */
	public void setScopeResolver(IdempotencyScopeResolver scopeResolver) {
		Objects.requireNonNull(scopeResolver, "'scopeResolver' must not be null");
		this.scopeResolver = (scopeResolver instanceof DefaultIdempotencyScopeResolver) ? scopeResolver : (request) -> {
			String scope = scopeResolver.resolveScope(request);
			return scope.isEmpty() ? scope : CUSTOM_SCOPE_PREFIX + scope;
		};
	}

	/**
	 * Set the base of the problem {@code type} URIs; the problem's slug is appended.
	 * Defaults to {@value #DEFAULT_PROBLEM_TYPE_BASE}.
	 * @param problemTypeBase the base, never {@code null}
	 */
	public void setProblemTypeBase(String problemTypeBase) {
		this.problems = new ProblemWriter(
				Objects.requireNonNull(problemTypeBase, "'problemTypeBase' must not be null"));
	}

	/**
	 * Set whether responses under a key carry the {@value #EXPIRES_HEADER} header.
	 * Defaults to {@code true}.
	 * @param expiresHeader whether to send the header
	 */
	public void setExpiresHeader(boolean expiresHeader) {
		this.expiresHeader = expiresHeader;
	}

	/**
	 * Set the name of a request header through which a client may ask for a TTL, in
	 * seconds, clamped to the policy's minimum and maximum. Defaults to {@code null}: the
	 * policy's TTL always applies.
	 * @param clientTtlHeader the header name, or {@code null} to disable
	 */
	public void setClientTtlHeader(@Nullable String clientTtlHeader) {
		this.clientTtlHeader = clientTtlHeader;
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
	}

	/**
	 * Set the listener told about requests that the filter rejects before they reach the
	 * engine (missing or invalid key, body too large). Decisions of the engine go to the
	 * engine's own {@link dev.idempotency.core.engine.IdempotencyListener}. Defaults to
	 * {@link IdempotencyRequestListener#NONE}.
	 * @param listener the listener, never {@code null}
	 */
	public void setListener(IdempotencyRequestListener listener) {
		this.listener = Objects.requireNonNull(listener, "'listener' must not be null");
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
	 * Return a listener to register with the servlet container: when a request ends, it
	 * releases the key of an execution that is still open because the error dispatch it
	 * waited for never came.
	 * @return the listener
	 */
	public ServletRequestListener requestCleanupListener() {
		return new CleanupListener();
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
		Call call = (Call) request.getAttribute(CALL_ATTRIBUTE);
		if (call != null) {
			resume(call, request, response, chain);
			return;
		}
		IdempotentEndpoint endpoint = (request.getDispatcherType() == DispatcherType.REQUEST)
				? this.endpointResolver.resolve(request) : null;
		if (endpoint == null) {
			chain.doFilter(request, response);
			return;
		}
		EndpointPolicy policy = this.policies.get(endpoint.policy());
		if (policy == null) {
			throw new IllegalStateException("Idempotency policy '" + endpoint.policy() + "' is not configured");
		}
		handle(endpoint, policy, request, response, chain);
	}

	private void handle(IdempotentEndpoint endpoint, EndpointPolicy policy, HttpServletRequest request,
			HttpServletResponse response, FilterChain chain) throws ServletException, IOException {
		Enumeration<String> values = request.getHeaders(this.keyHeader);
		if ((values == null || !values.hasMoreElements()) && !endpoint.required()) {
			// an optional key that was not sent: the request is not idempotent
			chain.doFilter(request, response);
			return;
		}
		RequestObservation observation = observe(request, policy);
		try (Observation.Scope scope = observation.openScope()) {
			process(policy, values, request, response, chain, observation);
		}
		catch (Throwable ex) {
			observation.fail(ex);
			throw ex;
		}
		if (request.getAttribute(CALL_ATTRIBUTE) == null) {
			// otherwise the execution goes on in an async or error dispatch
			observation.stop();
		}
	}

	private RequestObservation observe(HttpServletRequest request, EndpointPolicy policy) {
		ObservationRegistry registry = this.observationRegistry;
		if (registry.isNoop()) {
			return RequestObservation.NONE;
		}
		IdempotencyObservationContext context = new IdempotencyObservationContext(request, policy.name());
		Observation observation = IdempotencyObservationDocumentation.IDEMPOTENT_REQUEST
			.observation(this.observationConvention, DEFAULT_OBSERVATION_CONVENTION, () -> context, registry)
			.start();
		return new ObservedRequest(observation, context);
	}

	private void process(EndpointPolicy policy, @Nullable Enumeration<String> values, HttpServletRequest request,
			HttpServletResponse response, FilterChain chain, RequestObservation observation)
			throws ServletException, IOException {
		if (values == null || !values.hasMoreElements()) {
			observation.outcome(IdempotencyOutcome.MISSING_KEY);
			this.listener.onRejected(IdempotencyRequestListener.Rejection.MISSING_KEY, policy.name());
			this.problems.write(request, response, IdempotencyProblem.KEY_MISSING,
					"This endpoint requires an '" + this.keyHeader + "' header.", null, null, -1);
			return;
		}
		String value = values.nextElement();
		String clientKey = values.hasMoreElements() ? null : KeyHeaderParser.parse(value);
		if (clientKey == null) {
			observation.outcome(IdempotencyOutcome.INVALID_KEY);
			this.listener.onRejected(IdempotencyRequestListener.Rejection.INVALID_KEY, policy.name());
			this.problems.write(request, response, IdempotencyProblem.KEY_INVALID,
					"The '" + this.keyHeader + "' header must be sent once and hold one key of 1 to "
							+ IdempotencyKey.MAX_KEY_LENGTH
							+ " visible ASCII characters (0x21-0x7E), as a token or a quoted string.",
					null, null, -1);
			return;
		}
		BufferedRequestWrapper bufferedRequest = BufferedRequestWrapper.read(request, policy.maxRequestBody());
		if (bufferedRequest == null) {
			observation.outcome(IdempotencyOutcome.TOO_LARGE);
			this.listener.onRejected(IdempotencyRequestListener.Rejection.TOO_LARGE, policy.name());
			this.problems.write(
					request, response, IdempotencyProblem.REQUEST_TOO_LARGE, "The request body exceeds the "
							+ policy.maxRequestBody() + " bytes accepted for idempotent requests to this endpoint.",
					clientKey, null, -1);
			return;
		}
		IdempotencyKey key = new IdempotencyKey(scopeOf(request), clientKey);
		request.setAttribute(KEY_ATTRIBUTE, key);
		RequestFingerprint fingerprint = policy.fingerprinter().fingerprint(fingerprintInput(bufferedRequest, policy));
		Decision decision = this.engine.begin(key, fingerprint, enginePolicy(request, policy));
		if (decision instanceof Decision.Execute execute) {
			observation.executing(execute.execution());
			execute(execute.execution(), policy, bufferedRequest, response, chain, observation);
		}
		else if (decision instanceof Decision.Replay replay) {
			observation.outcome(IdempotencyOutcome.REPLAYED);
			replay(replay, key, request, response);
		}
		else if (decision instanceof Decision.InProgress inProgress) {
			observation.outcome(IdempotencyOutcome.IN_PROGRESS);
			this.problems.write(request, response, IdempotencyProblem.REQUEST_IN_PROGRESS,
					"A request with this key is still being processed; retry after "
							+ inProgress.retryAfter().getSeconds() + " second(s).",
					clientKey, inProgress.retryAfter(), -1);
		}
		else if (decision instanceof Decision.Mismatch) {
			observation.outcome(IdempotencyOutcome.MISMATCH);
			this.problems.write(request, response, IdempotencyProblem.KEY_REUSED,
					"This key was already used for a different request (method, path, query, headers or body).",
					clientKey, null, -1);
		}
		else if (decision instanceof Decision.Unavailable unavailable) {
			observation.outcome(IdempotencyOutcome.STORE_UNAVAILABLE);
			this.problems.write(request, response, IdempotencyProblem.STORE_UNAVAILABLE,
					"The idempotency store is unavailable, so the request was not processed; retry after "
							+ unavailable.retryAfter().getSeconds() + " second(s).",
					clientKey, unavailable.retryAfter(), -1);
		}
		else {
			// fail-open: the engine has logged it; run without protection
			observation.outcome(IdempotencyOutcome.FAIL_OPEN);
			chain.doFilter(bufferedRequest, response);
		}
	}

	private String scopeOf(HttpServletRequest request) {
		String scope = this.scopeResolver.resolveScope(request);
		if (scope.length() <= IdempotencyKey.MAX_SCOPE_LENGTH) {
			return scope;
		}
		// a long scope (for example a token's subject) is replaced by its digest
		try {
			byte[] digest = MessageDigest.getInstance("SHA-256").digest(scope.getBytes(StandardCharsets.UTF_8));
			return HASHED_SCOPE_PREFIX + HexFormat.of().formatHex(digest);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is not available", ex);
		}
	}

	private FingerprintInput fingerprintInput(BufferedRequestWrapper request, EndpointPolicy policy) {
		List<HttpHeader> headers = new ArrayList<>(policy.fingerprintHeaders().size());
		for (String name : policy.fingerprintHeaders()) {
			Enumeration<String> values = request.getHeaders(name);
			while (values != null && values.hasMoreElements()) {
				headers.add(new HttpHeader(name, values.nextElement()));
			}
		}
		byte[] body = request.fingerprintBody();
		return FingerprintInput.of(request.getMethod(), request.getRequestURI(), request.getQueryString(),
				request.getContentType(), headers, body, 0, body.length);
	}

	private IdempotencyPolicy enginePolicy(HttpServletRequest request, EndpointPolicy policy) {
		String header = this.clientTtlHeader;
		if (header == null) {
			return policy.policy();
		}
		String value = request.getHeader(header);
		if (value == null) {
			return policy.policy();
		}
		value = value.strip();
		if (value.isEmpty() || value.length() > MAX_TTL_HEADER_DIGITS) {
			return policy.policy();
		}
		for (int i = 0; i < value.length(); i++) {
			if (!Character.isDigit(value.charAt(i)) || value.charAt(i) > '9') {
				return policy.policy();
			}
		}
		return policy.withClientTtl(Duration.ofSeconds(Long.parseLong(value)));
	}

	private void execute(Execution execution, EndpointPolicy policy, HttpServletRequest request,
			HttpServletResponse response, FilterChain chain, RequestObservation observation)
			throws ServletException, IOException {
		Call call = new Call(execution, policy, capture(execution, policy, response), observation);
		request.setAttribute(CALL_ATTRIBUTE, call);
		dispatch(call, request, call.capture, chain);
	}

	private CapturingResponseWrapper capture(Execution execution, EndpointPolicy policy, HttpServletResponse response) {
		return new CapturingResponseWrapper(response, policy.maxResponseBody(), () -> {
			// the body is too large to keep: it goes to the client before completion
			if (this.expiresHeader && !execution.policy().nonStorableStatuses().contains(response.getStatus())) {
				response.setHeader(EXPIRES_HEADER, HttpDates.format(execution.advertisedExpiry()));
			}
		});
	}

	private void resume(Call call, HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		try (Observation.Scope scope = call.observation.openScope()) {
			resumeObserved(call, request, response, chain);
		}
		catch (Throwable ex) {
			call.observation.fail(ex);
			throw ex;
		}
		if (request.getAttribute(CALL_ATTRIBUTE) != call) {
			call.observation.stop();
		}
	}

	private void resumeObserved(Call call, HttpServletRequest request, HttpServletResponse response, FilterChain chain)
			throws ServletException, IOException {
		DispatcherType type = request.getDispatcherType();
		if (type == DispatcherType.ASYNC && !call.awaitingErrorDispatch) {
			CapturingResponseWrapper capture = WebUtils.getNativeResponse(response, CapturingResponseWrapper.class);
			dispatch(call, request, (capture != null) ? capture : call.capture, chain);
		}
		else if (type == DispatcherType.ERROR && call.awaitingErrorDispatch) {
			// the error page of a storable sendError: capture and store it
			call.awaitingErrorDispatch = false;
			call.capture = capture(call.execution, call.policy, response);
			dispatch(call, request, call.capture, chain);
		}
		else {
			abandon(call, request);
			chain.doFilter(request, response);
		}
	}

	private void dispatch(Call call, HttpServletRequest request, CapturingResponseWrapper capture, FilterChain chain)
			throws ServletException, IOException {
		try {
			chain.doFilter(request, capture);
			afterDispatch(call, request, capture);
		}
		catch (Throwable ex) {
			// the handler threw (Spring's error handling did not turn it into a
			// response):
			// release so that a retry runs it again; a no-op once completed
			call.observation.error(ex);
			abandon(call, request);
			throw ex;
		}
	}

	private void afterDispatch(Call call, HttpServletRequest request, CapturingResponseWrapper capture)
			throws IOException {
		if (request.isAsyncStarted()) {
			call.awaitAsync(request);
			return;
		}
		if (capture.isErrorSent()) {
			if (request.getDispatcherType() == DispatcherType.ERROR || isNonStorable(call, capture.getStatus())) {
				// a transient error, or one whose page cannot be captured: the next
				// request
				// runs the handler again
				abandon(call, request);
				return;
			}
			// complete from the error dispatch that renders the error page
			call.awaitingErrorDispatch = true;
			return;
		}
		finish(call, request, capture);
	}

	private void finish(Call call, HttpServletRequest request, CapturingResponseWrapper capture) throws IOException {
		request.removeAttribute(CALL_ATTRIBUTE);
		capture.flushWriter();
		Execution execution = call.execution;
		int status = capture.getStatus();
		List<HttpHeader> headers = this.storedHeaders.capture(capture);
		boolean streaming = capture.isStreaming();
		StoredResponse produced = streaming ? StoredResponse.withoutBody(status, headers)
				: new StoredResponse(status, headers, capture.bufferedBody());
		// only what every instance can read back: beyond the codec's limits, the status
		// and the headers that fit, as for a body over max-response-body
		StoredResponse stored = StoredResponseCodec.fitToLimits(produced);
		CompletionOutcome outcome = execution.complete(stored);
		if (outcome == CompletionOutcome.STORED && !stored.isBodyRetained()) {
			this.logger.warn("Response of key '" + execution.key() + "' (policy '" + call.policy.name() + "') "
					+ (streaming ? "is larger than max-response-body (" + call.policy.maxResponseBody() + " bytes)"
							: "has more headers than a stored response can hold (" + headers.size()
									+ " headers; at most " + StoredResponseCodec.MAX_HEADER_COUNT + " and "
									+ StoredResponseCodec.MAX_HEADER_BYTES + " bytes of names and values)")
					+ ": only its status and the headers that fit were stored, and a retry is answered with the '"
					+ IdempotencyProblem.RESPONSE_NOT_REPLAYABLE.slug() + "' problem");
		}
		if (streaming) {
			capture.flushBuffer();
			return;
		}
		if (outcome == CompletionOutcome.STORED && this.expiresHeader) {
			((HttpServletResponse) capture.getResponse()).setHeader(EXPIRES_HEADER,
					HttpDates.format(execution.advertisedExpiry()));
		}
		capture.writeBufferedBody();
	}

	private void abandon(Call call, HttpServletRequest request) {
		request.removeAttribute(CALL_ATTRIBUTE);
		call.execution.close();
	}

	private static boolean isNonStorable(Call call, int status) {
		return call.execution.policy().nonStorableStatuses().contains(status);
	}

	private void replay(Decision.Replay replay, IdempotencyKey key, HttpServletRequest request,
			HttpServletResponse response) throws IOException {
		StoredResponse stored = replay.response();
		if (!stored.isBodyRetained()) {
			if (this.expiresHeader) {
				response.setHeader(EXPIRES_HEADER, HttpDates.format(replay.expiresAt()));
			}
			if (!stored.isReadable()) {
				this.problems.write(request, response, IdempotencyProblem.RESPONSE_NOT_REPLAYABLE,
						"The request with this key completed, but its stored response cannot be read, "
								+ "so it cannot be replayed.",
						key.key(), null, -1);
				return;
			}
			this.problems.write(request, response, IdempotencyProblem.RESPONSE_NOT_REPLAYABLE,
					"The request with this key completed with status " + stored.status()
							+ ", but its response was too large to keep, so it cannot be replayed.",
					key.key(), null, stored.status());
			return;
		}
		response.setStatus(stored.status());
		this.storedHeaders.apply(stored.headers(), response);
		response.setHeader(REPLAYED_HEADER, "true");
		if (this.expiresHeader) {
			// after the stored headers, where a first response has it too
			response.setHeader(EXPIRES_HEADER, HttpDates.format(replay.expiresAt()));
		}
		response.setContentLength(stored.bodyLength());
		stored.writeBodyTo(response.getOutputStream());
	}

	/**
	 * State of an execution across the dispatches of one request.
	 */
	private static final class Call {

		final Execution execution;

		final EndpointPolicy policy;

		final RequestObservation observation;

		CapturingResponseWrapper capture;

		volatile boolean awaitingErrorDispatch;

		private boolean asyncListenerAdded;

		Call(Execution execution, EndpointPolicy policy, CapturingResponseWrapper capture,
				RequestObservation observation) {
			this.execution = execution;
			this.policy = policy;
			this.capture = capture;
			this.observation = observation;
		}

		boolean isOpen(HttpServletRequest request) {
			return request.getAttribute(CALL_ATTRIBUTE) == this
					&& (this.awaitingErrorDispatch || request.isAsyncStarted());
		}

		void awaitAsync(HttpServletRequest request) {
			if (!this.asyncListenerAdded) {
				this.asyncListenerAdded = true;
				request.getAsyncContext().addListener(new AsyncListener() {

					@Override
					public void onComplete(AsyncEvent event) {
						// normally ended by the async dispatch already; otherwise release
						Call.this.execution.close();
						Call.this.observation.stop();
					}

					@Override
					public void onTimeout(AsyncEvent event) {
					}

					@Override
					public void onError(AsyncEvent event) {
					}

					@Override
					public void onStartAsync(AsyncEvent event) {
					}

				});
			}
		}

	}

	/**
	 * Releases a key whose execution is still open when its request ends.
	 */
	private static final class CleanupListener implements ServletRequestListener {

		@Override
		public void requestDestroyed(ServletRequestEvent event) {
			Object call = event.getServletRequest().getAttribute(CALL_ATTRIBUTE);
			if (call instanceof Call open) {
				event.getServletRequest().removeAttribute(CALL_ATTRIBUTE);
				open.execution.close();
				open.observation.stop();
			}
		}

	}

	/**
	 * The observation of one request, if any: {@link #NONE} when observations are off.
	 */
	private static class RequestObservation {

		static final RequestObservation NONE = new RequestObservation();

		Observation.Scope openScope() {
			return Observation.Scope.NOOP;
		}

		void outcome(IdempotencyOutcome outcome) {
		}

		void executing(Execution execution) {
		}

		void error(Throwable error) {
		}

		void fail(Throwable error) {
		}

		void stop() {
		}

	}

	/**
	 * A started observation; stopped once, on whichever thread ends the request.
	 */
	private static final class ObservedRequest extends RequestObservation {

		private final Observation observation;

		private final IdempotencyObservationContext context;

		private final AtomicBoolean stopped = new AtomicBoolean();

		private volatile @Nullable Execution execution;

		ObservedRequest(Observation observation, IdempotencyObservationContext context) {
			this.observation = observation;
			this.context = context;
		}

		@Override
		Observation.Scope openScope() {
			return this.observation.openScope();
		}

		@Override
		void outcome(IdempotencyOutcome outcome) {
			this.context.setOutcome(outcome);
		}

		@Override
		void executing(Execution execution) {
			this.execution = execution;
			this.context.setOutcome(IdempotencyOutcome.EXECUTED);
		}

		@Override
		void error(Throwable error) {
			if (!this.stopped.get()) {
				this.observation.error(error);
			}
		}

		@Override
		void fail(Throwable error) {
			if (!this.stopped.get() && this.context.getError() == null) {
				this.observation.error(error);
			}
			stop();
		}

		@Override
		void stop() {
			if (this.stopped.compareAndSet(false, true)) {
				Execution current = this.execution;
				if (current != null) {
					this.context.setCompletion(current.outcome().orElse(null));
				}
				this.observation.stop();
			}
		}

	}

}
