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

import java.security.Principal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyScopes;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.StoredResponseCodec;
import dev.idempotency.core.engine.CompletionOutcome;
import dev.idempotency.core.engine.Decision;
import dev.idempotency.core.engine.Execution;
import dev.idempotency.core.engine.IdempotencyEngine;
import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.core.fingerprint.FingerprintInput;
import dev.idempotency.spring.IdempotencyKeySource;
import dev.idempotency.spring.NamedPolicy;
import dev.idempotency.spring.http.AnonymousRequests;
import dev.idempotency.spring.http.ClientTtlHeader;
import dev.idempotency.spring.http.FormCanonicalizer;
import dev.idempotency.spring.http.HttpContract;
import dev.idempotency.spring.http.HttpDates;
import dev.idempotency.spring.http.IdempotencyProblem;
import dev.idempotency.spring.http.JsonBodyKeyReader;
import dev.idempotency.spring.http.KeyHeaderParser;
import dev.idempotency.spring.http.Refusal;
import dev.idempotency.spring.http.StoredHeaders;
import dev.idempotency.spring.observation.DefaultIdempotencyObservationConvention;
import dev.idempotency.spring.observation.IdempotencyObservation;
import dev.idempotency.spring.observation.IdempotencyObservationConvention;
import dev.idempotency.spring.observation.IdempotencyObservationDocumentation;
import dev.idempotency.spring.observation.IdempotencyOutcome;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Schedulers;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;
import org.springframework.web.server.WebFilterChain;

/**
 * One WebFlux request to an idempotent endpoint, from its key to its answer: the reactive
 * counterpart of the servlet adapter's exchange. It admits the request (key, scope, body,
 * body key, in this order: the first refusal answers it), asks the engine on the store
 * scheduler, and carries out the decision: runs the handler with its response captured
 * and then stored, replays a stored response, or answers with the refusal's problem.
 *
 * @author Idempotency contributors
 */
final class WebFluxExchange implements Decision.Handler<Mono<Void>, RuntimeException> {

	private static final Log logger = LogFactory.getLog(WebFluxExchange.class);

	private static final IdempotencyObservationConvention DEFAULT_CONVENTION = new DefaultIdempotencyObservationConvention();

	private static final byte[] EMPTY = new byte[0];

	private static final Object TAKEN = new Object();

	private static final Object CANCELLED = new Object();

	private static final AtomicReferenceFieldUpdater<WebFluxExchange, Object> CLAIM = AtomicReferenceFieldUpdater
		.newUpdater(WebFluxExchange.class, Object.class, "claim");

	// Spring Security's token of an unauthenticated caller, which reactive Spring
	// Security can set as the exchange's principal: not a principal that scopes keys
	private static final String ANONYMOUS_TOKEN = "org.springframework.security.authentication.AnonymousAuthenticationToken";

	// the exchange attribute in which Spring Security's CsrfWebFilter puts a
	// Mono<CsrfToken>
	private static final String CSRF_TOKEN_ATTRIBUTE = "org.springframework.security.web.server.csrf.CsrfToken";

	private final IdempotencyWebFilter filter;

	private final ServerWebExchange exchange;

	private final NamedPolicy policy;

	// the values of the key header, or null for a key in the body
	private final @Nullable List<String> keyValues;

	private @Nullable String clientKey;

	private String scope = IdempotencyKey.GLOBAL_SCOPE;

	private byte[] body = EMPTY;

	private byte[] fingerprintBody = EMPTY;

	// the content type fingerprinted in place of the request's, or null: a multipart
	// body's without its boundary
	private @Nullable String fingerprintContentType;

	// whether the form was read before this filter: the handler gets the exchange's form
	// data then, never a form parsed from the empty body
	private boolean formConsumed;

	private @Nullable WebFilterChain chain;

	// the claim granted to this request, until its handler takes it (TAKEN) or the client
	// goes away (CANCELLED): whichever comes second ends it
	private volatile @Nullable Object claim;

	private final IdempotencyObservation observation;

	// whether the observation ends with a handler's execution that runs apart from the
	// request's subscription
	private volatile boolean detached;

	WebFluxExchange(IdempotencyWebFilter filter, ServerWebExchange exchange, NamedPolicy policy,
			@Nullable List<String> keyValues) {
		this.filter = filter;
		this.exchange = exchange;
		this.policy = policy;
		this.keyValues = keyValues;
		ObservationRegistry registry = filter.observationRegistry();
		this.observation = registry.isNoop() ? IdempotencyObservation.NONE
				: IdempotencyObservation.start(registry, IdempotencyObservationDocumentation.IDEMPOTENT_REQUEST,
						filter.observationConvention(), DEFAULT_CONVENTION,
						new WebFluxRequestObservationContext(exchange, policy.name()));
	}

	Mono<Void> run(WebFilterChain chain) {
		return admitAndAct(chain).doOnError(this.observation::fail).doFinally((signal) -> {
			if (!this.detached) {
				this.observation.stop();
			}
		});
	}

	private Mono<Void> admitAndAct(WebFilterChain chain) {
		this.chain = chain;
		Refusal refusal = (this.keyValues != null) ? readHeaderKey(this.keyValues) : null;
		if (refusal != null) {
			return refuse(refusal);
		}
		return this.exchange.getPrincipal().map(Optional::of).defaultIfEmpty(Optional.empty()).flatMap((principal) -> {
			Refusal unscoped = resolveScope(principal.orElse(null));
			return (unscoped != null) ? refuse(unscoped) : readBody();
		});
	}

	private @Nullable Refusal readHeaderKey(List<String> values) {
		IdempotencyKeySource source = this.policy.keySource();
		String header = this.filter.keyHeader(source);
		if (values.isEmpty()) {
			return Refusal.keyMissing(source, header);
		}
		this.clientKey = (values.size() > 1) ? null : KeyHeaderParser.parse(values.get(0));
		return (this.clientKey != null) ? null : Refusal.keyInvalid(source, header);
	}

	private @Nullable Refusal resolveScope(@Nullable Principal principal) {
		Principal caller = (principal != null && !principal.getClass().getName().equals(ANONYMOUS_TOKEN)) ? principal
				: null;
		String scopeHeader = this.filter.scopeHeader();
		String scopeValue = (scopeHeader != null) ? this.exchange.getRequest().getHeaders().getFirst(scopeHeader)
				: null;
		if (scopeValue != null && !scopeValue.isBlank()) {
			this.scope = IdempotencyScopes.storable(IdempotencyScopes.header(scopeValue.strip()));
		}
		else if (caller != null) {
			this.scope = IdempotencyScopes.storable(IdempotencyScopes.principal(caller.getName()));
		}
		AnonymousRequests anonymous = this.filter.anonymousRequests();
		if (anonymous == AnonymousRequests.ALLOW || !this.scope.equals(IdempotencyKey.GLOBAL_SCOPE) || caller != null) {
			return null;
		}
		if (anonymous == AnonymousRequests.REJECT) {
			return Refusal.unauthenticated();
		}
		if (this.filter.firstAnonymousWarning(this.policy.name()) && logger.isWarnEnabled()) {
			ServerHttpRequest request = this.exchange.getRequest();
			logger.warn("A request to an idempotent endpoint of policy '" + this.policy.name() + "' ("
					+ request.getMethod() + " " + request.getPath() + ") has no authenticated principal: its key"
					+ " is in the global scope, shared by every anonymous caller. If the application's security"
					+ " filter runs after this filter (idempotency.filter.order), order it first; set"
					+ " idempotency.anonymous-requests=reject to refuse such requests, or allow if the endpoint"
					+ " is meant for anonymous callers. Logged once per policy.");
		}
		return null;
	}

	private Mono<Void> readBody() {
		ServerHttpRequest request = this.exchange.getRequest();
		int max = this.policy.maxRequestBody();
		if (request.getHeaders().getContentLength() > max) {
			return refuse(Refusal.requestTooLarge(this.clientKey, max));
		}
		return DataBufferUtils.join(request.getBody(), max)
			.map(WebFluxExchange::bytesOf)
			.defaultIfEmpty(EMPTY)
			.map(Optional::of)
			.onErrorResume(DataBufferLimitException.class, (ex) -> Mono.just(Optional.empty()))
			.flatMap((read) -> read.isPresent() ? admit(read.get())
					: refuse(Refusal.requestTooLarge(this.clientKey, max)));
	}

	private static byte[] bytesOf(DataBuffer buffer) {
		try {
			byte[] bytes = new byte[buffer.readableByteCount()];
			buffer.read(bytes);
			return bytes;
		}
		finally {
			DataBufferUtils.release(buffer);
		}
	}

	private Mono<Void> admit(byte[] read) {
		this.body = read;
		if (read.length == 0) {
			Mono<Void> consumed = admitConsumed();
			if (consumed != null) {
				return consumed;
			}
		}
		String contentType = this.exchange.getRequest().getHeaders().getFirst(HttpHeaders.CONTENT_TYPE);
		if (isForm(contentType)) {
			Map<String, List<String>> form = FormCanonicalizer.parseStrictly(read,
					FormCanonicalizer.charset(charset(), this.filter.formCharset()));
			if (form != null) {
				return admitForm(FormCanonicalizer.merge(queryParameters(), form));
			}
		}
		this.fingerprintBody = fingerprintBody(read, contentType);
		return admitKey();
	}

	// whether a content type is a form, without allocating for any other type
	private static boolean isForm(@Nullable String contentType) {
		return contentType != null && contentType.regionMatches(true, 0, "application/x-www-form-urlencoded", 0, 33)
				&& FormCanonicalizer.isForm(contentType);
	}

	// A form is fingerprinted by its parameters less Spring Security's CSRF token, which
	// is no business data and which its check, before this filter, has checked: the
	// same form is the same request whether its token is a new masking of the session's
	// (each page that XorServerCsrfTokenRequestAttributeHandler renders has one), a token
	// of another session, or in the header. The token's parameter is asked for only when
	// the form has one by the default name, so that a request that the CSRF check skipped
	// does not have a token loaded, and generated, for nothing.
	private Mono<Void> admitForm(Map<String, String[]> parameters) {
		Object token = parameters.containsKey(FormCanonicalizer.CSRF_PARAMETER)
				? this.exchange.getAttribute(CSRF_TOKEN_ATTRIBUTE) : null;
		if (!(token instanceof Mono<?> csrfToken)) {
			this.fingerprintBody = FormCanonicalizer.canonicalize(parameters);
			return admitKey();
		}
		return csrfToken.mapNotNull(FormCanonicalizer::csrfParameterName)
			.onErrorResume((ex) -> Mono.empty())
			.defaultIfEmpty("")
			.flatMap((name) -> {
				this.fingerprintBody = FormCanonicalizer
					.canonicalize(FormCanonicalizer.without(parameters, name.isEmpty() ? null : name));
				return admitKey();
			});
	}

	// A body that yields no bytes may have been read before this filter: a form by a
	// filter that asked for the exchange's form data (Spring Security's CSRF check does
	// for every form post), which the exchange keeps; a multipart body, which is never
	// empty, by one that asked for its parts. The form is fingerprinted by the parameters
	// the exchange parsed, as the body would have been, and the handler gets them as they
	// are, less Spring Security's CSRF token; a multipart body cannot be fingerprinted
	// any more. Null for a body declared empty, or that is neither.
	private @Nullable Mono<Void> admitConsumed() {
		HttpHeaders headers = this.exchange.getRequest().getHeaders();
		String contentType = headers.getFirst(HttpHeaders.CONTENT_TYPE);
		if (headers.getContentLength() == 0) {
			return null;
		}
		if (FormCanonicalizer.isForm(contentType)) {
			this.formConsumed = true;
			return this.exchange.getFormData().flatMap((form) -> {
				Map<String, String[]> parameters = FormCanonicalizer.merge(queryParameters(), form);
				if (FormCanonicalizer.minimumBodyLength(parameters,
						this.exchange.getRequest().getURI().getRawQuery()) > this.policy.maxRequestBody()) {
					return refuse(Refusal.requestTooLarge(this.clientKey, this.policy.maxRequestBody()));
				}
				return admitForm(parameters);
			});
		}
		if (FormCanonicalizer.isMultipartForm(contentType)) {
			return Mono.error(new IllegalStateException("The multipart/form-data body is empty or was read by a"
					+ " filter that runs before the idempotency filter, so it cannot be fingerprinted"));
		}
		return null;
	}

	private Mono<Void> admitKey() {
		if (this.clientKey == null) {
			Refusal refusal = readBodyKey();
			if (refusal != null) {
				return refuse(refusal);
			}
		}
		return decide();
	}

	// a well-formed form's fingerprint is of its parameters in canonical order, as on the
	// servlet stack (admitForm); a multipart body's of its parts; any other body's is of
	// its bytes
	private byte[] fingerprintBody(byte[] read, @Nullable String contentType) {
		if (MultipartCanonicalizer.isMultipartForm(contentType)) {
			// by its parts, never its boundary
			byte[] parts = MultipartCanonicalizer.canonicalize(contentType, read);
			if (parts != null) {
				this.fingerprintContentType = MultipartCanonicalizer.contentTypeWithoutBoundary(contentType);
				return parts;
			}
		}
		return read;
	}

	private Map<String, String[]> queryParameters() {
		Map<String, String[]> query = new LinkedHashMap<>();
		this.exchange.getRequest()
			.getQueryParams()
			.forEach((name, values) -> query.put(name, values.toArray(String[]::new)));
		return query;
	}

	private @Nullable String charset() {
		var contentType = this.exchange.getRequest().getHeaders().getContentType();
		return (contentType != null) ? contentType.getParameter("charset") : null;
	}

	private @Nullable Refusal readBodyKey() {
		IdempotencyKeySource source = this.policy.keySource();
		JsonBodyKeyReader.BodyKey bodyKey = JsonBodyKeyReader.read(this.body, Objects.requireNonNull(source.pointer()));
		this.clientKey = bodyKey.key();
		if (this.clientKey != null) {
			return null;
		}
		String header = this.filter.keyHeader(source);
		return bodyKey.absent() ? Refusal.keyMissing(source, header) : Refusal.keyInvalid(source, header);
	}

	private Mono<Void> decide() {
		IdempotencyKey key = new IdempotencyKey(this.scope, clientKey());
		this.exchange.getAttributes().put(IdempotencyWebFilter.KEY_ATTRIBUTE, key);
		RequestFingerprint fingerprint = this.policy.fingerprinter().fingerprint(fingerprintInput());
		IdempotencyPolicy requestPolicy = requestPolicy();
		long waitDeadline = System.nanoTime() + requestPolicy.inFlightWait().toNanos();
		return Mono.<Decision>create((sink) -> tryOn(sink, key, fingerprint, requestPolicy, waitDeadline, 1))
			.flatMap((decision) -> decision.handle(this))
			.doOnCancel(this::cancelled);
	}

	// a try of the store, on the store scheduler
	private void tryOn(MonoSink<Decision> sink, IdempotencyKey key, RequestFingerprint fingerprint,
			IdempotencyPolicy requestPolicy, long waitDeadline, int tries) {
		try {
			this.filter.storeScheduler()
				.schedule(() -> tryOnce(sink, key, fingerprint, requestPolicy, waitDeadline, tries));
		}
		catch (RejectedExecutionException ex) {
			sink.error(ex);
		}
	}

	private void tryOnce(MonoSink<Decision> sink, IdempotencyKey key, RequestFingerprint fingerprint,
			IdempotencyPolicy requestPolicy, long waitDeadline, int tries) {
		if (this.claim == CANCELLED) {
			// the client went away while the request waited
			return;
		}
		Decision decision;
		try {
			decision = this.filter.engine().tryBegin(key, fingerprint, requestPolicy, waitDeadline, tries);
		}
		catch (RuntimeException ex) {
			sink.error(ex);
			return;
		}
		if (decision == null) {
			// the key is in progress and the in-flight wait goes on: the next try after a
			// pause on a timer, which holds no thread of the store scheduler
			try {
				Schedulers.parallel()
					.schedule(() -> tryOn(sink, key, fingerprint, requestPolicy, waitDeadline, tries + 1),
							IdempotencyEngine.inFlightPollMillis(tries, waitDeadline), TimeUnit.MILLISECONDS);
			}
			catch (RejectedExecutionException ex) {
				sink.error(ex);
			}
			return;
		}
		if (decision instanceof Decision.Execute execute && !CLAIM.compareAndSet(this, null, execute)) {
			// the client went away while the claim was made: nobody runs the handler
			endAbandonedClaim(execute);
			return;
		}
		sink.success(decision);
	}

	// The client went away before the request was answered. A claim that the store
	// grants after that, or that it granted before and no handler took yet, is ended
	// here: released, its heartbeat stopped, so that a retry runs the handler rather
	// than wait out a claim that nobody ends. A claim already taken by its handler is
	// the handler's to end, which runs on without its client.
	private void cancelled() {
		Object previous = CLAIM.getAndSet(this, CANCELLED);
		if (previous instanceof Decision.Execute execute) {
			Mono.fromRunnable(() -> endAbandonedClaim(execute))
				.subscribeOn(this.filter.storeScheduler())
				.subscribe(null, (ex) -> logger.debug("Release of a claim whose client went away failed", ex));
		}
	}

	private void endAbandonedClaim(Decision.Execute execute) {
		if (logger.isDebugEnabled()) {
			logger.debug("The client of key '" + execute.execution().key() + "' went away before its handler ran:"
					+ " releasing the claim");
		}
		execute.execution().close();
	}

	private FingerprintInput fingerprintInput() {
		ServerHttpRequest request = this.exchange.getRequest();
		HttpHeaders headers = request.getHeaders();
		List<HttpHeader> fingerprinted = new ArrayList<>();
		for (String name : this.policy.fingerprintHeaders()) {
			for (String value : headers.getOrEmpty(name)) {
				fingerprinted.add(new HttpHeader(name, value));
			}
		}
		return FingerprintInput.of(request.getMethod().name(), request.getPath().value(),
				request.getURI().getRawQuery(),
				(this.fingerprintContentType != null) ? this.fingerprintContentType
						: headers.getFirst(HttpHeaders.CONTENT_TYPE),
				fingerprinted, this.fingerprintBody, 0, this.fingerprintBody.length);
	}

	private IdempotencyPolicy requestPolicy() {
		ClientTtlHeader ttl = this.filter.clientTtlHeader();
		String header = ttl.name();
		return ttl.policy((header != null) ? this.exchange.getRequest().getHeaders().getFirst(header) : null,
				this.policy);
	}

	@Override
	public Mono<Void> execute(Decision.Execute decision) {
		if (!CLAIM.compareAndSet(this, decision, TAKEN)) {
			// the client went away: the claim is released without running the handler
			return Mono.empty();
		}
		Execution execution = decision.execution();
		this.observation.executing(execution);
		this.detached = true;
		CapturingResponse capture = new CapturingResponse(this.exchange.getResponse(), this.policy.maxResponseBody(),
				() -> writeExpiryBeforeStreaming(execution));
		ServerWebExchange buffered = new BufferedExchange(this.exchange, this.body, capture, this.filter.formReader(),
				this.filter.codecs(), this.formConsumed);
		Sinks.One<CompletionOutcome> completed = Sinks.one();
		return Mono.deferContextual((context) -> {
			// not tied to the client: if it goes away, the handler still runs to its end
			// and its response is stored
			answerErrors(chain().filter(buffered), buffered)
				.then(Mono.fromCallable(() -> complete(execution, capture)).subscribeOn(this.filter.storeScheduler()))
				.contextWrite(context)
				.subscribe((outcome) -> {
					this.observation.stop();
					completed.tryEmitValue(outcome);
				}, (failure) -> abandon(execution, failure, completed));
			return completed.asMono();
		})
			.flatMap((outcome) -> capture.commit((outcome == CompletionOutcome.STORED && this.filter.expiresHeader())
					? HttpDates.format(execution.advertisedExpiry()) : null));
	}

	// the handler's error, answered by the application's exception handlers in their
	// order, as WebFlux would after the filter chain, so that the answer is captured
	private Mono<Void> answerErrors(Mono<Void> handled, ServerWebExchange buffered) {
		Mono<Void> answered = handled;
		for (WebExceptionHandler handler : this.filter.exceptionHandlers()) {
			answered = answered.onErrorResume((ex) -> handler.handle(buffered, ex));
		}
		return answered;
	}

	// the handler failed (and no exception handler of the application answered): release
	// so that a retry runs it again, then let the failure reach the application's error
	// handling
	private void abandon(Execution execution, Throwable failure, Sinks.One<CompletionOutcome> completed) {
		this.observation.error(failure);
		Mono.fromRunnable(execution::close)
			.doFinally((signal) -> this.observation.stop())
			.subscribeOn(this.filter.storeScheduler())
			.doFinally((signal) -> completed.tryEmitError(failure))
			.subscribe(null, (ex) -> logger.debug("Release after a failed handler failed", ex));
	}

	private CompletionOutcome complete(Execution execution, CapturingResponse capture) {
		if (capture.isBroken()) {
			// the body failed after part of it went out: a retry runs the handler again
			return execution.release();
		}
		int status = capture.status();
		List<HttpHeader> headers = capturedHeaders(capture);
		boolean streaming = capture.isStreaming();
		StoredResponse produced = streaming ? StoredResponse.withoutBody(status, headers)
				: new StoredResponse(status, headers, capture.body());
		StoredResponse stored = StoredResponseCodec.fitToLimits(produced);
		CompletionOutcome outcome = execution.complete(stored);
		if (outcome == CompletionOutcome.STORED && !stored.isBodyRetained()) {
			logger.warn("Response of key '" + execution.key() + "' (policy '" + this.policy.name() + "') "
					+ (streaming ? "is larger than max-response-body (" + this.policy.maxResponseBody() + " bytes)"
							: "has more headers than a stored response can hold (" + headers.size() + " headers)")
					+ ": only its status and the headers that fit were stored, and a retry is answered with the '"
					+ IdempotencyProblem.RESPONSE_NOT_REPLAYABLE.slug() + "' problem");
		}
		return outcome;
	}

	// the response's headers that are stored (never its cookies, which WebFlux keeps
	// apart from the headers until it commits, and which are never stored anyway)
	private List<HttpHeader> capturedHeaders(CapturingResponse capture) {
		HttpHeaders headers = capture.getHeaders();
		return this.filter.storedHeaders()
			.capture(headers.getFirst(HttpHeaders.CONTENT_TYPE), headers.headerNames(), headers::get);
	}

	private void writeExpiryBeforeStreaming(Execution execution) {
		ServerHttpResponse response = this.exchange.getResponse();
		HttpStatusCode status = response.getStatusCode();
		int code = (status != null) ? status.value() : 200;
		if (this.filter.expiresHeader() && !execution.policy().nonStorableStatuses().contains(code)) {
			response.getHeaders().set(HttpContract.EXPIRES_HEADER, HttpDates.format(execution.advertisedExpiry()));
		}
	}

	@Override
	public Mono<Void> replay(Decision.Replay decision) {
		this.observation.outcome(IdempotencyOutcome.REPLAYED);
		StoredResponse stored = decision.response();
		ServerHttpResponse response = this.exchange.getResponse();
		HttpHeaders headers = response.getHeaders();
		if (!stored.isBodyRetained()) {
			if (this.filter.expiresHeader()) {
				headers.set(HttpContract.EXPIRES_HEADER, HttpDates.format(decision.expiresAt()));
			}
			return refuse(stored.isReadable() ? Refusal.responseTooLarge(clientKey(), stored.status())
					: Refusal.responseUnreadable(clientKey()));
		}
		response.setStatusCode(HttpStatusCode.valueOf(stored.status()));
		this.filter.storedHeaders().apply(stored.headers(), new Target(headers));
		headers.set(HttpContract.REPLAYED_HEADER, "true");
		if (this.filter.expiresHeader()) {
			// after the stored headers, where a first response has it too
			headers.set(HttpContract.EXPIRES_HEADER, HttpDates.format(decision.expiresAt()));
		}
		headers.setContentLength(stored.bodyLength());
		return response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(stored.body())));
	}

	@Override
	public Mono<Void> inProgress(Decision.InProgress decision) {
		return refuse(Refusal.inProgress(clientKey(), decision.retryAfter()));
	}

	@Override
	public Mono<Void> mismatch(Decision.Mismatch decision) {
		return refuse(Refusal.keyReused(clientKey()));
	}

	@Override
	public Mono<Void> unavailable(Decision.Unavailable decision) {
		return refuse(Refusal.storeUnavailable(clientKey(), decision.retryAfter()));
	}

	@Override
	public Mono<Void> unprotected(Decision.Unprotected decision) {
		// fail-open: the engine has logged it; run without protection
		this.observation.outcome(IdempotencyOutcome.FAIL_OPEN);
		return chain().filter(new BufferedExchange(this.exchange, this.body, this.exchange.getResponse(),
				this.filter.formReader(), this.filter.codecs(), this.formConsumed));
	}

	private Mono<Void> refuse(Refusal refusal) {
		IdempotencyOutcome outcome = refusal.kind().outcome();
		if (outcome != null) {
			this.observation.outcome(outcome);
		}
		ServerHttpResponse response = this.exchange.getResponse();
		IdempotencyProblem problem = refusal.kind().problem();
		response.setStatusCode(HttpStatusCode.valueOf(problem.status()));
		HttpHeaders headers = response.getHeaders();
		Duration retryAfter = refusal.retryAfter();
		if (retryAfter != null) {
			headers.set(HttpHeaders.RETRY_AFTER, Long.toString(retryAfter.getSeconds()));
		}
		byte[] problemBody = refusal.problemDetails(this.filter.problemTypeBase(),
				this.exchange.getRequest().getPath().value());
		headers.set(HttpHeaders.CONTENT_TYPE, HttpContract.PROBLEM_CONTENT_TYPE);
		headers.setContentLength(problemBody.length);
		return response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(problemBody)));
	}

	private String clientKey() {
		return Objects.requireNonNull(this.clientKey, "the request has no key");
	}

	private WebFilterChain chain() {
		return Objects.requireNonNull(this.chain, "the exchange does not run");
	}

	/**
	 * The headers of a reactive response, as stored headers are replayed onto them.
	 */
	private record Target(HttpHeaders headers) implements StoredHeaders.Target {

		@Override
		public void setContentType(String contentType) {
			this.headers.set(HttpHeaders.CONTENT_TYPE, contentType);
		}

		@Override
		public void setHeader(String name, String value) {
			this.headers.set(name, value);
		}

		@Override
		public void addHeader(String name, String value) {
			this.headers.add(name, value);
		}

	}

}
