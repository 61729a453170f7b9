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
import java.util.Enumeration;
import java.util.Objects;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyScopes;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.engine.Decision;
import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.core.store.IdempotencyStoreException;
import dev.idempotency.spring.IdempotencyKeySource;
import dev.idempotency.spring.NamedPolicy;
import dev.idempotency.spring.http.AnonymousRequests;
import dev.idempotency.spring.http.ClientTtlHeader;
import dev.idempotency.spring.http.JsonBodyKeyReader;
import dev.idempotency.spring.http.KeyHeaderParser;
import dev.idempotency.spring.http.Refusal;
import dev.idempotency.spring.observation.DefaultIdempotencyObservationConvention;
import dev.idempotency.spring.observation.IdempotencyObservation;
import dev.idempotency.spring.observation.IdempotencyObservationConvention;
import dev.idempotency.spring.observation.IdempotencyObservationDocumentation;
import dev.idempotency.spring.observation.IdempotencyOutcome;
import dev.idempotency.spring.transaction.RequestTransaction;
import dev.idempotency.spring.transaction.RequestTransactions;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * One request to an idempotent endpoint, from the moment the filter recognises it to its
 * answer: the request, its policy and observation, and what the flow learns on the way
 * (the key, its scope, the buffered body, the fingerprint). {@link #run(FilterChain)} is
 * the whole flow, in request order:
 * <ol>
 * <li>admit the request: its key (from a header, or from the body once it is read), the
 * key's scope (and the rule for anonymous callers), the body within its limit, the
 * fingerprint;</li>
 * <li>ask the engine, in the request's own transaction on a transactional endpoint;</li>
 * <li>act on the engine's decision, as its {@link Decision.Handler}: run the handler
 * ({@link PendingExecution}), replay the stored response ({@link ReplayWriter}), refuse,
 * or pass the request on unprotected (fail-open);</li>
 * <li>or answer with the {@link Refusal} that one of the steps returned.</li>
 * </ol>
 * Not thread-safe: one per request, on the request's thread.
 *
 * @author Idempotency contributors
 */
final class IdempotentExchange implements Decision.Handler<@Nullable Refusal, Exception> {

	/**
	 * Name of the request attribute that holds the request's {@link IdempotencyKey} while
	 * the handler runs.
	 */
	static final String KEY_ATTRIBUTE = "dev.idempotency.spring.web.IdempotencyFilter.KEY";

	private static final Log logger = LogFactory.getLog(IdempotentExchange.class);

	private static final IdempotencyObservationConvention DEFAULT_CONVENTION = new DefaultIdempotencyObservationConvention();

	private final IdempotentRequests requests;

	private final HttpServletRequest request;

	private final HttpServletResponse response;

	private final NamedPolicy policy;

	private final IdempotencyObservation observation;

	// the values of the key header, or null for a key in the body
	private final @Nullable Enumeration<String> keyValues;

	private @Nullable String clientKey;

	private String scope = IdempotencyKey.GLOBAL_SCOPE;

	private @Nullable BufferedRequestWrapper body;

	// the rest of the filter chain, once the exchange runs
	private @Nullable FilterChain chain;

	// the request's transaction, on a transactional endpoint once it began
	private @Nullable RequestTransaction transaction;

	/**
	 * Open the exchange of a request and start its observation.
	 * @param requests what the requests of the filter share
	 * @param target the request and its endpoint's policy
	 */
	IdempotentExchange(IdempotentRequests requests, Target target) {
		this.requests = requests;
		this.request = target.request();
		this.response = target.response();
		this.policy = target.policy();
		this.keyValues = target.keyValues();
		this.observation = observe(requests.observationRegistry(), requests.observationConvention(), this.request,
				this.policy);
	}

	/**
	 * Carry the request to its answer.
	 * @param chain the rest of the filter chain, which leads to the handler
	 * @throws ServletException if the chain throws it
	 * @throws IOException if the chain or writing the answer throws it
	 */
	void run(FilterChain chain) throws ServletException, IOException {
		this.chain = chain;
		try (Observation.Scope scope = this.observation.openScope()) {
			Refusal refusal = admit();
			if (refusal == null) {
				refusal = this.policy.transactional() ? decideInTransaction() : decide();
			}
			if (refusal != null) {
				refuse(refusal);
			}
		}
		catch (Throwable ex) {
			this.observation.fail(ex);
			throw ex;
		}
		if (PendingExecution.of(this.request) == null) {
			// otherwise the execution goes on in an async or error dispatch
			this.observation.stop();
		}
	}

	private static IdempotencyObservation observe(ObservationRegistry registry,
			@Nullable IdempotencyObservationConvention convention, HttpServletRequest request, NamedPolicy policy) {
		if (registry.isNoop()) {
			return IdempotencyObservation.NONE;
		}
		return IdempotencyObservation.start(registry, IdempotencyObservationDocumentation.IDEMPOTENT_REQUEST,
				convention, DEFAULT_CONVENTION, new IdempotentRequestObservationContext(request, policy.name()));
	}

	NamedPolicy policy() {
		return this.policy;
	}

	IdempotencyObservation observation() {
		return this.observation;
	}

	HttpServletResponse response() {
		return this.response;
	}

	IdempotentRequests requests() {
		return this.requests;
	}

	// the key, its scope, the body and, for a key in the body, that key, in this order:
	// null once all are known, or the first refusal
	private @Nullable Refusal admit() throws IOException {
		Refusal refusal = (this.keyValues != null) ? readHeaderKey(this.keyValues) : null;
		if (refusal == null) {
			refusal = resolveScope();
		}
		if (refusal == null) {
			refusal = buffer();
		}
		if (refusal == null && this.clientKey == null) {
			refusal = readBodyKey();
		}
		return refusal;
	}

	private @Nullable Refusal readHeaderKey(Enumeration<String> values) {
		IdempotencyKeySource source = this.policy.keySource();
		String header = this.requests.keyHeader(source);
		if (!values.hasMoreElements()) {
			return Refusal.keyMissing(source, header);
		}
		String value = values.nextElement();
		this.clientKey = values.hasMoreElements() ? null : KeyHeaderParser.parse(value);
		return (this.clientKey != null) ? null : Refusal.keyInvalid(source, header);
	}

	private @Nullable Refusal resolveScope() {
		this.scope = IdempotencyScopes.storable(this.requests.scopeResolver().resolveScope(this.request));
		AnonymousRequests anonymous = this.requests.anonymousRequests();
		if (anonymous == AnonymousRequests.ALLOW || !this.scope.equals(IdempotencyKey.GLOBAL_SCOPE)
				|| this.request.getUserPrincipal() != null) {
			return null;
		}
		if (anonymous == AnonymousRequests.REJECT) {
			return Refusal.unauthenticated();
		}
		if (this.requests.firstAnonymousWarning(this.policy.name()) && logger.isWarnEnabled()) {
			logger.warn("A request to an idempotent endpoint of policy '" + this.policy.name() + "' ("
					+ this.request.getMethod() + " " + this.request.getRequestURI() + ") has no authenticated"
					+ " principal: its key is in the global scope, shared by every anonymous caller. If an"
					+ " authentication filter of the application runs after this filter (idempotency.filter.order),"
					+ " order it first; set idempotency.anonymous-requests=reject to refuse such requests, or allow"
					+ " if the endpoint is meant for anonymous callers. Logged once per policy.");
		}
		return null;
	}

	private @Nullable Refusal buffer() throws IOException {
		this.body = BufferedRequestWrapper.read(this.request, this.policy.maxRequestBody());
		return (this.body != null) ? null : Refusal.requestTooLarge(this.clientKey, this.policy.maxRequestBody());
	}

	private @Nullable Refusal readBodyKey() {
		IdempotencyKeySource source = this.policy.keySource();
		JsonBodyKeyReader.BodyKey bodyKey = JsonBodyKeyReader.read(admitted().body(),
				Objects.requireNonNull(source.pointer()));
		this.clientKey = bodyKey.key();
		if (this.clientKey != null) {
			return null;
		}
		String header = this.requests.keyHeader(source);
		return bodyKey.absent() ? Refusal.keyMissing(source, header) : Refusal.keyInvalid(source, header);
	}

	private BufferedRequestWrapper admitted() {
		return Objects.requireNonNull(this.body, "the request's body was not read");
	}

	// the key of an admitted request, left on the request for the handler
	private IdempotencyKey key() {
		IdempotencyKey key = new IdempotencyKey(this.scope,
				Objects.requireNonNull(this.clientKey, "the request has no key"));
		this.request.setAttribute(KEY_ATTRIBUTE, key);
		return key;
	}

	private RequestFingerprint fingerprint() {
		return this.policy.fingerprinter().fingerprint(admitted().fingerprintInput(this.policy.fingerprintHeaders()));
	}

	private IdempotencyPolicy requestPolicy() {
		ClientTtlHeader ttl = this.requests.clientTtlHeader();
		String header = ttl.name();
		return ttl.policy((header != null) ? this.request.getHeader(header) : null, this.policy);
	}

	private @Nullable Refusal decide() throws ServletException, IOException {
		IdempotencyKey key = key();
		return act(this.requests.engine().begin(key, fingerprint(), requestPolicy()));
	}

	// The transactional mode: the claim joins a transaction begun here, which the
	// execution commits with the handler's work before its response is written, and which
	// every other answer ends before it is written.
	private @Nullable Refusal decideInTransaction() throws ServletException, IOException {
		RequestTransactions transactions = this.requests.requestTransactions();
		if (transactions == null) {
			throw new IllegalStateException(
					"Policy '" + this.policy.name() + "' is transactional, but the filter has no transaction manager");
		}
		IdempotencyKey key = key();
		RequestFingerprint fingerprint = fingerprint();
		IdempotencyPolicy requestPolicy = requestPolicy();
		RequestTransaction transaction;
		try {
			transaction = transactions.begin(requestPolicy.lockTimeout());
		}
		catch (IdempotencyStoreException ex) {
			// no connection could be had, or the database is down: the store failed
			return act(this.requests.engine().storeFailed(key, requestPolicy, ex));
		}
		this.transaction = transaction;
		try {
			return act(this.requests.engine().begin(key, fingerprint, requestPolicy));
		}
		finally {
			// a no-op once the execution committed or gave the transaction up
			transaction.rollback();
		}
	}

	// what the engine decided, done: null once the request is answered, or the refusal
	// to answer with
	private @Nullable Refusal act(Decision decision) throws ServletException, IOException {
		if (this.transaction != null && !(decision instanceof Decision.Execute)
				&& !this.transaction.endBeforeAnswer(decision)) {
			// what the store decided could not be committed
			return Refusal.storeUnavailable(clientKey(),
					Refusal.wholeSeconds(this.policy.engine().unavailableRetryAfter()));
		}
		try {
			return decision.handle(this);
		}
		catch (ServletException | IOException | RuntimeException ex) {
			throw ex;
		}
		catch (Exception ex) {
			// the methods below throw nothing else
			throw new IllegalStateException(ex);
		}
	}

	@Override
	public @Nullable Refusal execute(Decision.Execute decision) throws ServletException, IOException {
		this.observation.executing(decision.execution());
		new PendingExecution(decision.execution(), this, this.transaction).run(admitted(), chain());
		return null;
	}

	@Override
	public @Nullable Refusal replay(Decision.Replay decision) throws IOException {
		this.observation.outcome(IdempotencyOutcome.REPLAYED);
		return this.requests.replays().write(decision, clientKey(), this.response);
	}

	@Override
	public Refusal inProgress(Decision.InProgress decision) {
		return Refusal.inProgress(clientKey(), decision.retryAfter());
	}

	@Override
	public Refusal mismatch(Decision.Mismatch decision) {
		return Refusal.keyReused(clientKey());
	}

	@Override
	public Refusal unavailable(Decision.Unavailable decision) {
		return Refusal.storeUnavailable(clientKey(), decision.retryAfter());
	}

	@Override
	public @Nullable Refusal unprotected(Decision.Unprotected decision) throws ServletException, IOException {
		// fail-open: the engine has logged it; run without protection
		this.observation.outcome(IdempotencyOutcome.FAIL_OPEN);
		chain().doFilter(admitted(), this.response);
		return null;
	}

	private String clientKey() {
		return Objects.requireNonNull(this.clientKey, "the request has no key");
	}

	private FilterChain chain() {
		return Objects.requireNonNull(this.chain, "the exchange does not run");
	}

	private void refuse(Refusal refusal) throws IOException {
		IdempotencyOutcome outcome = refusal.kind().outcome();
		if (outcome != null) {
			this.observation.outcome(outcome);
		}
		this.requests.problems().write(this.request, this.response, refusal);
	}

	/**
	 * A request that the filter recognised as one to an idempotent endpoint.
	 *
	 * @param request the request
	 * @param response its response
	 * @param policy the policy of its endpoint
	 * @param keyValues the values of the key header, or {@code null} for a key in the
	 * body
	 */
	record Target(HttpServletRequest request, HttpServletResponse response, NamedPolicy policy,
			@Nullable Enumeration<String> keyValues) {

	}

}
