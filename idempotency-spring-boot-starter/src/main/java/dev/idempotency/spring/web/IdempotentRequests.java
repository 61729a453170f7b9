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

import java.util.Enumeration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.idempotency.core.engine.IdempotencyEngine;
import dev.idempotency.spring.IdempotencyKeySource;
import dev.idempotency.spring.NamedPolicies;
import dev.idempotency.spring.NamedPolicy;
import dev.idempotency.spring.http.AnonymousRequests;
import dev.idempotency.spring.http.ClientTtlHeader;
import dev.idempotency.spring.http.HttpContract;
import dev.idempotency.spring.http.IdempotentEndpoint;
import dev.idempotency.spring.http.StoredHeaders;
import dev.idempotency.spring.observation.IdempotencyObservationConvention;
import dev.idempotency.spring.transaction.RequestTransactions;
import io.micrometer.observation.ObservationRegistry;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

/**
 * Where a request to an idempotent endpoint begins, and what every such request of one
 * {@link IdempotencyFilter} shares: the endpoint resolution, the policies, the engine and
 * the settings of the filter. {@link #open} resolves a request's endpoint and policy and
 * opens its {@link IdempotentExchange}, which carries the request from there to its
 * answer.
 * <p>
 * Configured by the filter's setters before it serves requests; thread-safe from then on.
 *
 * @author Idempotency contributors
 */
final class IdempotentRequests {

	/**
	 * Name of the request attribute in which a {@code REQUEST} dispatch leaves what the
	 * resolver decided: the {@link IdempotentEndpoint}, or {@link #NO_ENDPOINT}.
	 */
	static final String ENDPOINT_ATTRIBUTE = "dev.idempotency.spring.web.IdempotencyFilter.ENDPOINT";

	/**
	 * Value of {@link #ENDPOINT_ATTRIBUTE} for a request that targets no idempotent
	 * endpoint.
	 */
	static final String NO_ENDPOINT = "none";

	private final IdempotencyEngine engine;

	private final IdempotentEndpointResolver endpointResolver;

	private final NamedPolicies policies;

	// the policies whose anonymous requests were warned about: one line each
	private final Set<String> anonymousWarned = ConcurrentHashMap.newKeySet();

	private String keyHeader = HttpContract.KEY_HEADER;

	private IdempotencyScopeResolver scopeResolver = new DefaultIdempotencyScopeResolver();

	private AnonymousRequests anonymousRequests = AnonymousRequests.ALLOW;

	private ClientTtlHeader clientTtlHeader = ClientTtlHeader.NONE;

	private StoredHeaders storedHeaders = new StoredHeaders(List.of(), HttpContract.EXCLUDED_RESPONSE_HEADERS);

	private boolean expiresHeader = true;

	private ProblemWriter problems = new ProblemWriter(HttpContract.PROBLEM_TYPE_BASE, null);

	private ReplayWriter replays = new ReplayWriter(this.storedHeaders, this.expiresHeader);

	private ObservationRegistry observationRegistry = ObservationRegistry.NOOP;

	private @Nullable IdempotencyObservationConvention observationConvention;

	private @Nullable RequestTransactions requestTransactions;

	private @Nullable StoredResponseCustomizer storedResponseCustomizer;

	IdempotentRequests(IdempotencyEngine engine, IdempotentEndpointResolver endpointResolver, NamedPolicies policies) {
		this.engine = Objects.requireNonNull(engine, "'engine' must not be null");
		this.endpointResolver = Objects.requireNonNull(endpointResolver, "'endpointResolver' must not be null");
		this.policies = Objects.requireNonNull(policies, "'policies' must not be null");
	}

	/**
	 * Open the exchange of a request to an idempotent endpoint, which starts its
	 * observation.
	 * @param request the request
	 * @param response the response
	 * @return the exchange, or {@code null} when the filter lets the request pass: it
	 * targets no idempotent endpoint, it is a later dispatch of a request, or the
	 * endpoint's key is optional and was not sent
	 */
	@Nullable IdempotentExchange open(HttpServletRequest request, HttpServletResponse response) {
		if (request.getDispatcherType() != DispatcherType.REQUEST) {
			// later dispatches belong to the request that began them
			return null;
		}
		IdempotentEndpoint endpoint = this.endpointResolver.resolve(request);
		request.setAttribute(ENDPOINT_ATTRIBUTE, (endpoint != null) ? endpoint : NO_ENDPOINT);
		if (endpoint == null) {
			return null;
		}
		NamedPolicy policy = this.policies.get(endpoint.policy());
		if (policy == null) {
			throw new IllegalStateException("Idempotency policy '" + endpoint.policy() + "' is not configured");
		}
		IdempotencyKeySource source = policy.keySource();
		Enumeration<String> keyValues = source.isBody() ? null : request.getHeaders(keyHeader(source));
		if (!endpoint.required() && keyValues != null && !keyValues.hasMoreElements()) {
			// an optional key header that was not sent
			return null;
		}
		return new IdempotentExchange(this, new IdempotentExchange.Target(request, response, policy, keyValues));
	}

	/**
	 * Return the name of the header a key source reads.
	 * @param source the key source of a policy
	 * @return its own header, or the filter's key header
	 */
	String keyHeader(IdempotencyKeySource source) {
		String header = source.header();
		return (header != null) ? header : this.keyHeader;
	}

	/**
	 * Record that a policy's anonymous requests were warned about.
	 * @param policy the policy's name
	 * @return {@code true} the first time only
	 */
	boolean firstAnonymousWarning(String policy) {
		return this.anonymousWarned.add(policy);
	}

	IdempotencyEngine engine() {
		return this.engine;
	}

	IdempotencyScopeResolver scopeResolver() {
		return this.scopeResolver;
	}

	AnonymousRequests anonymousRequests() {
		return this.anonymousRequests;
	}

	ClientTtlHeader clientTtlHeader() {
		return this.clientTtlHeader;
	}

	StoredHeaders storedHeaders() {
		return this.storedHeaders;
	}

	ProblemWriter problems() {
		return this.problems;
	}

	ReplayWriter replays() {
		return this.replays;
	}

	ObservationRegistry observationRegistry() {
		return this.observationRegistry;
	}

	@Nullable IdempotencyObservationConvention observationConvention() {
		return this.observationConvention;
	}

	@Nullable RequestTransactions requestTransactions() {
		return this.requestTransactions;
	}

	void setKeyHeader(String keyHeader) {
		this.keyHeader = keyHeader;
	}

	void setScopeResolver(IdempotencyScopeResolver scopeResolver) {
		this.scopeResolver = scopeResolver;
	}

	void setAnonymousRequests(AnonymousRequests anonymousRequests) {
		this.anonymousRequests = anonymousRequests;
	}

	void setClientTtlHeader(ClientTtlHeader clientTtlHeader) {
		this.clientTtlHeader = clientTtlHeader;
	}

	void setProblems(ProblemWriter problems) {
		this.problems = problems;
	}

	void setResponseHeaders(StoredHeaders storedHeaders, boolean expiresHeader) {
		this.storedHeaders = storedHeaders;
		this.expiresHeader = expiresHeader;
		this.replays = new ReplayWriter(storedHeaders, expiresHeader);
	}

	boolean expiresHeader() {
		return this.expiresHeader;
	}

	void setObservation(ObservationRegistry registry, @Nullable IdempotencyObservationConvention convention) {
		this.observationRegistry = registry;
		this.observationConvention = convention;
	}

	void setRequestTransactions(@Nullable RequestTransactions requestTransactions) {
		this.requestTransactions = requestTransactions;
	}

	@Nullable StoredResponseCustomizer storedResponseCustomizer() {
		return this.storedResponseCustomizer;
	}

	void setStoredResponseCustomizer(@Nullable StoredResponseCustomizer storedResponseCustomizer) {
		this.storedResponseCustomizer = storedResponseCustomizer;
	}

}
