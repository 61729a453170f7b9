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

import java.nio.charset.Charset;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
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
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import org.springframework.core.Ordered;
import org.springframework.core.ResolvableType;
import org.springframework.http.MediaType;
import org.springframework.http.codec.FormHttpMessageReader;
import org.springframework.http.codec.HttpMessageReader;
import org.springframework.http.codec.ServerCodecConfigurer;
import org.springframework.util.MultiValueMap;
import org.springframework.util.StringUtils;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * The idempotency contract on Spring WebFlux: the reactive twin of the servlet filter
 * ({@code dev.idempotency.spring.web.IdempotencyFilter}), applying the same HTTP contract
 * ({@code dev.idempotency.spring.http}) and the same engine.
 * <p>
 * For a request to an idempotent endpoint ({@link WebFluxEndpointResolver}) it reads the
 * key, the caller's scope (the scope header, or the principal of the exchange, as
 * reactive Spring Security sets it) and the body, up to the policy's limit, then asks the
 * engine on the {@link #setStoreScheduler(Scheduler) store scheduler} (the stores block;
 * an event-loop thread never waits for them). The handler's response is kept in memory up
 * to the policy's limit, stored, and only then written, with
 * {@value HttpContract#EXPIRES_HEADER}; a retry gets it back byte for byte with
 * {@value HttpContract#REPLAYED_HEADER}. Every refusal is an RFC 9457 problem.
 * <p>
 * A handler's execution is not tied to its client: when the client goes away, the handler
 * runs to its end and its response is stored all the same, as on the servlet stack after
 * a client abort.
 * <p>
 * Thread-safe once configured.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class IdempotencyWebFilter implements WebFilter, Ordered {

	/**
	 * The default order: after Spring Security's {@code WebFilterChainProxy} (order
	 * {@code -100}), so that the principal is known, and before the handler.
	 */
	public static final int DEFAULT_ORDER = -90;

	/**
	 * Exchange attribute under which the handler finds the request's
	 * {@link dev.idempotency.core.IdempotencyKey}.
	 */
	public static final String KEY_ATTRIBUTE = "dev.idempotency.spring.webflux.IdempotencyWebFilter.KEY";

	private final IdempotencyEngine engine;

	private final WebFluxEndpointResolver endpointResolver;

	private final NamedPolicies policies;

	// the policies whose anonymous requests were warned about: one line each
	private final Set<String> anonymousWarned = ConcurrentHashMap.newKeySet();

	private String keyHeader = HttpContract.KEY_HEADER;

	private @Nullable String scopeHeader;

	private AnonymousRequests anonymousRequests = AnonymousRequests.ALLOW;

	private String problemTypeBase = HttpContract.PROBLEM_TYPE_BASE;

	private boolean expiresHeader = true;

	private ClientTtlHeader clientTtlHeader = ClientTtlHeader.NONE;

	private StoredHeaders storedHeaders = new StoredHeaders(List.of(), HttpContract.EXCLUDED_RESPONSE_HEADERS);

	private Scheduler storeScheduler = Schedulers.boundedElastic();

	private static final ResolvableType FORM_DATA = ResolvableType.forClassWithGenerics(MultiValueMap.class,
			String.class, String.class);

	private @Nullable ServerCodecConfigurer codecs;

	// the reader of the application's form data, as WebFlux reads it for an exchange
	private HttpMessageReader<MultiValueMap<String, String>> formReader = new FormHttpMessageReader();

	// the charset in which the form reader decodes a form whose content type names none
	private Charset formCharset = FormHttpMessageReader.DEFAULT_CHARSET;

	private List<WebExceptionHandler> exceptionHandlers = List.of();

	private ObservationRegistry observationRegistry = ObservationRegistry.NOOP;

	private @Nullable IdempotencyObservationConvention observationConvention;

	private int order = DEFAULT_ORDER;

	/**
	 * Create a filter.
	 * @param engine the engine
	 * @param endpointResolver finds the idempotent endpoint of a request
	 * @param policies the configured policies
	 */
	public IdempotencyWebFilter(IdempotencyEngine engine, WebFluxEndpointResolver endpointResolver,
			NamedPolicies policies) {
		this.engine = Objects.requireNonNull(engine, "'engine' must not be null");
		this.endpointResolver = Objects.requireNonNull(endpointResolver, "'endpointResolver' must not be null");
		this.policies = Objects.requireNonNull(policies, "'policies' must not be null");
	}

	/**
	 * Set the name of the key header (default {@value HttpContract#KEY_HEADER}); a
	 * policy's own key header takes precedence.
	 * @param keyHeader the header name
	 */
	public void setKeyHeader(String keyHeader) {
		this.keyHeader = Objects.requireNonNull(keyHeader, "'keyHeader' must not be null");
	}

	/**
	 * Set the header whose value scopes keys (a tenant, say), before the principal; none
	 * by default.
	 * @param scopeHeader the header name, or {@code null}
	 */
	public void setScopeHeader(@Nullable String scopeHeader) {
		this.scopeHeader = StringUtils.hasText(scopeHeader) ? scopeHeader : null;
	}

	/**
	 * Set how requests without a principal are treated (default
	 * {@link AnonymousRequests#ALLOW}).
	 * @param anonymousRequests the rule
	 */
	public void setAnonymousRequests(AnonymousRequests anonymousRequests) {
		this.anonymousRequests = Objects.requireNonNull(anonymousRequests, "'anonymousRequests' must not be null");
	}

	/**
	 * Set the base of the problems' {@code type} URIs.
	 * @param problemTypeBase the base, ending with {@code /}
	 */
	public void setProblemTypeBase(String problemTypeBase) {
		this.problemTypeBase = Objects.requireNonNull(problemTypeBase, "'problemTypeBase' must not be null");
	}

	/**
	 * Set whether first responses and replays carry {@value HttpContract#EXPIRES_HEADER}
	 * (default {@code true}).
	 * @param expiresHeader whether to send it
	 */
	public void setExpiresHeader(boolean expiresHeader) {
		this.expiresHeader = expiresHeader;
	}

	/**
	 * Set the header with which a client asks for a TTL of its own, or {@code null} for
	 * none (the default).
	 * @param clientTtlHeader the header name
	 */
	public void setClientTtlHeader(@Nullable String clientTtlHeader) {
		this.clientTtlHeader = (clientTtlHeader != null) ? new ClientTtlHeader(clientTtlHeader) : ClientTtlHeader.NONE;
	}

	/**
	 * Set which response headers are stored and replayed.
	 * @param include the patterns of the headers to store (empty: all but the excluded)
	 * @param exclude the patterns of the headers never to store
	 */
	public void setStoredHeaders(Collection<String> include, Collection<String> exclude) {
		this.storedHeaders = new StoredHeaders(include, exclude);
	}

	/**
	 * Set the scheduler on which the store is called (default
	 * {@link Schedulers#boundedElastic()}). The stores block on their network round
	 * trips, so this must be a scheduler whose threads may block.
	 * @param storeScheduler the scheduler
	 */
	public void setStoreScheduler(Scheduler storeScheduler) {
		this.storeScheduler = Objects.requireNonNull(storeScheduler, "'storeScheduler' must not be null");
	}

	/**
	 * Set the codecs with which a handler's form and multipart data are read again from
	 * the copy of the body that the filter read, as WebFlux reads them for any exchange;
	 * a form is fingerprinted in the charset in which their form reader decodes it.
	 * Without them a form is read by a {@link FormHttpMessageReader} with its defaults
	 * (UTF-8), and a multipart body reaches the handler as bytes only.
	 * @param codecs the application's codecs, or {@code null}
	 */
	@SuppressWarnings("unchecked")
	public void setCodecs(@Nullable ServerCodecConfigurer codecs) {
		this.codecs = codecs;
		HttpMessageReader<MultiValueMap<String, String>> reader = new FormHttpMessageReader();
		if (codecs != null) {
			for (HttpMessageReader<?> candidate : codecs.getReaders()) {
				if (candidate.canRead(FORM_DATA, MediaType.APPLICATION_FORM_URLENCODED)) {
					reader = (HttpMessageReader<MultiValueMap<String, String>>) candidate;
					break;
				}
			}
		}
		this.formReader = reader;
		this.formCharset = (reader instanceof FormHttpMessageReader form) ? form.getDefaultCharset()
				: FormHttpMessageReader.DEFAULT_CHARSET;
	}

	/**
	 * Set the application's exception handlers, in their order: an error of a handler
	 * that owns its key is answered by them inside the filter, where the answer is
	 * captured and stored (or the key released) like any other response, as Spring MVC
	 * answers it inside the servlet filter. Without them such an error releases the key
	 * and is answered after the filter.
	 * @param exceptionHandlers the handlers, in the order WebFlux applies them
	 */
	public void setExceptionHandlers(List<WebExceptionHandler> exceptionHandlers) {
		this.exceptionHandlers = List
			.copyOf(Objects.requireNonNull(exceptionHandlers, "'exceptionHandlers' must not be null"));
	}

	/**
	 * Set the registry of the {@code idempotency.request} observation, none by default.
	 * @param observationRegistry the registry
	 */
	public void setObservationRegistry(ObservationRegistry observationRegistry) {
		this.observationRegistry = Objects.requireNonNull(observationRegistry,
				"'observationRegistry' must not be null");
	}

	/**
	 * Set the application's convention of the {@code idempotency.request} observation, or
	 * {@code null} for the default one.
	 * @param observationConvention the convention
	 */
	public void setObservationConvention(@Nullable IdempotencyObservationConvention observationConvention) {
		this.observationConvention = observationConvention;
	}

	/**
	 * Set the order of the filter (default {@link #DEFAULT_ORDER}).
	 * @param order the order
	 */
	public void setOrder(int order) {
		this.order = order;
	}

	@Override
	public int getOrder() {
		return this.order;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		return this.endpointResolver.resolve(exchange)
			.map(Optional::of)
			.defaultIfEmpty(Optional.empty())
			.flatMap((endpoint) -> {
				WebFluxExchange idempotent = endpoint.map((found) -> open(exchange, found)).orElse(null);
				return (idempotent != null) ? idempotent.run(chain) : chain.filter(exchange);
			});
	}

	// the exchange of a request to an idempotent endpoint, or null for an optional key
	// that was not sent
	private @Nullable WebFluxExchange open(ServerWebExchange exchange, IdempotentEndpoint endpoint) {
		NamedPolicy policy = this.policies.get(endpoint.policy());
		if (policy == null) {
			throw new IllegalStateException("Idempotency policy '" + endpoint.policy() + "' is not configured");
		}
		IdempotencyKeySource source = policy.keySource();
		List<String> keyValues = source.isBody() ? null
				: exchange.getRequest().getHeaders().getOrEmpty(keyHeader(source));
		if (!endpoint.required() && keyValues != null && keyValues.isEmpty()) {
			return null;
		}
		return new WebFluxExchange(this, exchange, policy, keyValues);
	}

	IdempotencyEngine engine() {
		return this.engine;
	}

	String keyHeader(IdempotencyKeySource source) {
		String header = source.header();
		return (header != null) ? header : this.keyHeader;
	}

	@Nullable String scopeHeader() {
		return this.scopeHeader;
	}

	AnonymousRequests anonymousRequests() {
		return this.anonymousRequests;
	}

	boolean firstAnonymousWarning(String policy) {
		return this.anonymousWarned.add(policy);
	}

	String problemTypeBase() {
		return this.problemTypeBase;
	}

	boolean expiresHeader() {
		return this.expiresHeader;
	}

	ClientTtlHeader clientTtlHeader() {
		return this.clientTtlHeader;
	}

	StoredHeaders storedHeaders() {
		return this.storedHeaders;
	}

	Scheduler storeScheduler() {
		return this.storeScheduler;
	}

	@Nullable ServerCodecConfigurer codecs() {
		return this.codecs;
	}

	HttpMessageReader<MultiValueMap<String, String>> formReader() {
		return this.formReader;
	}

	Charset formCharset() {
		return this.formCharset;
	}

	List<WebExceptionHandler> exceptionHandlers() {
		return this.exceptionHandlers;
	}

	ObservationRegistry observationRegistry() {
		return this.observationRegistry;
	}

	@Nullable IdempotencyObservationConvention observationConvention() {
		return this.observationConvention;
	}

}
