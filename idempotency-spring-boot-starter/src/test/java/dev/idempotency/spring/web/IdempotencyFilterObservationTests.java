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
import java.time.Duration;
import java.util.List;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.engine.IdempotencyEngine;
import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.core.engine.StoreFailureMode;
import dev.idempotency.core.fingerprint.Sha256RequestFingerprinter;
import dev.idempotency.core.store.InMemoryIdempotencyStore;
import dev.idempotency.spring.NamedPolicies;
import dev.idempotency.spring.NamedPolicy;
import dev.idempotency.spring.http.IdempotentEndpoint;
import dev.idempotency.spring.observation.DefaultIdempotencyObservationConvention;
import dev.idempotency.spring.observation.IdempotencyObservation;
import dev.idempotency.spring.observation.IdempotencyObservationContext;
import dev.idempotency.spring.observation.IdempotencyObservationDocumentation;
import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.ServletRequestEvent;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.mock.web.MockServletContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Tests for the observations of {@link IdempotencyFilter}.
 *
 * @author Idempotency contributors
 */
class IdempotencyFilterObservationTests {

	private static final String NAME = "idempotency.request";

	private static final String KEY = "secret-key-1234";

	private final TestObservationRegistry registry = TestObservationRegistry.create();

	private final OutageSimulatingStore store = new OutageSimulatingStore(new InMemoryIdempotencyStore());

	private final IdempotencyEngine engine = new IdempotencyEngine(this.store);

	private final NamedPolicies policies = new NamedPolicies(List.of(policy(IdempotencyPolicy.defaults()),
			policy(IdempotencyPolicy.builder().name("open").onStoreFailure(StoreFailureMode.FAIL_OPEN).build())));

	private final IdempotencyFilter filter = new IdempotencyFilter(this.engine, this::endpoint, this.policies);

	@BeforeEach
	void observe() {
		this.filter.setObservationRegistry(this.registry);
	}

	@AfterEach
	void close() {
		this.engine.close();
	}

	@Test
	void executedRequestIsObservedUntilItsResponseIsStored() throws Exception {
		MockHttpServletResponse response = new MockHttpServletResponse();
		this.filter.doFilter(request("/idempotent", KEY), response, chain(201, "created"));
		assertThat(response.getStatus()).isEqualTo(201);
		assertSingleObservation("executed", "default", "false", "stored");
		assertThat(this.registry).hasSingleObservationThat()
			.hasContextualNameEqualTo("idempotency default")
			.doesNotHaveError();
	}

	@Test
	void replayIsObserved() throws Exception {
		this.filter.doFilter(request("/idempotent", KEY), new MockHttpServletResponse(), chain(201, "created"));
		this.registry.clear();
		MockHttpServletResponse replay = new MockHttpServletResponse();
		this.filter.doFilter(request("/idempotent", KEY), replay, new MockFilterChain());
		assertThat(replay.getHeader(IdempotencyFilter.REPLAYED_HEADER)).isEqualTo("true");
		assertSingleObservation("replayed", "default", "true", "none");
	}

	@Test
	void inProgressIsObserved() throws Exception {
		this.engine.store()
			.acquire(IdempotencyKey.global(KEY),
					new Sha256RequestFingerprinter()
						.fingerprint(dev.idempotency.core.fingerprint.FingerprintInput.of("POST", "/idempotent", null,
								"application/json", List.of(), "{}".getBytes(StandardCharsets.UTF_8), 0, 2)),
					OwnerToken.generate(), Duration.ofMinutes(1), Duration.ofDays(1));
		MockHttpServletResponse response = new MockHttpServletResponse();
		this.filter.doFilter(request("/idempotent", KEY), response, new MockFilterChain());
		assertThat(response.getStatus()).isEqualTo(409);
		assertSingleObservation("in_progress", "default", "false", "none");
	}

	@Test
	void mismatchIsObserved() throws Exception {
		this.filter.doFilter(request("/idempotent", KEY), new MockHttpServletResponse(), chain(201, "created"));
		this.registry.clear();
		MockHttpServletRequest other = request("/idempotent", KEY);
		other.setContent("{\"other\":true}".getBytes(StandardCharsets.UTF_8));
		MockHttpServletResponse response = new MockHttpServletResponse();
		this.filter.doFilter(other, response, new MockFilterChain());
		assertThat(response.getStatus()).isEqualTo(422);
		assertSingleObservation("mismatch", "default", "false", "none");
	}

	@Test
	void missingKeyIsObserved() throws Exception {
		MockHttpServletResponse response = new MockHttpServletResponse();
		this.filter.doFilter(request("/idempotent", null), response, new MockFilterChain());
		assertThat(response.getStatus()).isEqualTo(400);
		assertSingleObservation("missing_key", "default", "false", "none");
	}

	@Test
	void invalidKeyIsObserved() throws Exception {
		MockHttpServletResponse response = new MockHttpServletResponse();
		this.filter.doFilter(request("/idempotent", "two words"), response, new MockFilterChain());
		assertThat(response.getStatus()).isEqualTo(400);
		assertSingleObservation("invalid_key", "default", "false", "none");
	}

	@Test
	void tooLargeIsObserved() throws Exception {
		MockHttpServletRequest request = request("/idempotent", KEY);
		request.setContent(new byte[2048]);
		MockHttpServletResponse response = new MockHttpServletResponse();
		this.filter.doFilter(request, response, new MockFilterChain());
		assertThat(response.getStatus()).isEqualTo(413);
		assertSingleObservation("too_large", "default", "false", "none");
	}

	@Test
	void storeUnavailableIsObserved() throws Exception {
		this.store.setDown(true);
		MockHttpServletResponse response = new MockHttpServletResponse();
		this.filter.doFilter(request("/idempotent", KEY), response, new MockFilterChain());
		assertThat(response.getStatus()).isEqualTo(503);
		assertSingleObservation("store_unavailable", "default", "false", "none");
	}

	@Test
	void failOpenIsObserved() throws Exception {
		this.store.setDown(true);
		MockHttpServletResponse response = new MockHttpServletResponse();
		this.filter.doFilter(request("/open", KEY), response, chain(200, "unprotected"));
		assertThat(response.getContentAsString()).isEqualTo("unprotected");
		assertSingleObservation("fail_open", "open", "false", "none");
	}

	@Test
	void releasedExecutionIsObservedWithItsCompletion() throws Exception {
		this.filter.doFilter(request("/idempotent", KEY), new MockHttpServletResponse(), chain(503, "later"));
		assertSingleObservation("executed", "default", "false", "released");
	}

	@Test
	void handlerExceptionIsRecordedAsTheObservationsError() {
		IllegalStateException failure = new IllegalStateException("boom");
		MockFilterChain chain = new MockFilterChain(new HttpServlet() {

			@Override
			protected void service(HttpServletRequest req, HttpServletResponse res) {
				throw failure;
			}

		});
		assertThatIllegalStateException()
			.isThrownBy(() -> this.filter.doFilter(request("/idempotent", KEY), new MockHttpServletResponse(), chain));
		assertSingleObservation("executed", "default", "false", "released");
		assertThat(this.registry).hasSingleObservationThat().hasError(failure);
	}

	@Test
	void executionAwaitingAnErrorDispatchIsObservedUntilTheRequestEnds() throws Exception {
		MockHttpServletRequest request = request("/idempotent", KEY);
		MockFilterChain chain = new MockFilterChain(new HttpServlet() {

			@Override
			protected void service(HttpServletRequest req, HttpServletResponse res) throws IOException {
				res.sendError(404);
			}

		});
		this.filter.doFilter(request, new MockHttpServletResponse(), chain);
		assertThat(this.registry).hasObservationWithNameEqualTo(NAME).that().hasBeenStarted();
		assertThat(this.registry.getCurrentObservation()).isNull();
		this.filter.requestCleanupListener()
			.requestDestroyed(new ServletRequestEvent(new MockServletContext(), request));
		assertSingleObservation("executed", "default", "false", "released");
	}

	@Test
	void asyncExecutionIsObservedUntilTheAsyncDispatchStoresTheResponse() throws Exception {
		MockHttpServletRequest request = request("/idempotent", KEY);
		request.setAsyncSupported(true);
		MockHttpServletResponse response = new MockHttpServletResponse();
		MockFilterChain start = new MockFilterChain(new HttpServlet() {

			@Override
			protected void service(HttpServletRequest req, HttpServletResponse res) {
				AsyncContext async = req.startAsync();
				assertThat(async).isNotNull();
			}

		});
		this.filter.doFilter(request, response, start);
		assertThat(this.registry).hasObservationWithNameEqualTo(NAME).that().hasBeenStarted();
		request.setAsyncStarted(false);
		request.setDispatcherType(DispatcherType.ASYNC);
		this.filter.doFilter(request, response, chain(201, "async"));
		assertThat(response.getContentAsString()).isEqualTo("async");
		assertSingleObservation("executed", "default", "false", "stored");
	}

	@Test
	void observationIsAChildOfTheCurrentObservationAndCurrentWhileTheHandlerRuns() throws Exception {
		Observation parent = Observation.start("http.server.requests", this.registry);
		Observation[] current = new Observation[1];
		MockFilterChain chain = new MockFilterChain(new HttpServlet() {

			@Override
			protected void service(HttpServletRequest req, HttpServletResponse res) {
				current[0] = IdempotencyFilterObservationTests.this.registry.getCurrentObservation();
			}

		});
		try (Observation.Scope scope = parent.openScope()) {
			this.filter.doFilter(request("/idempotent", KEY), new MockHttpServletResponse(), chain);
		}
		parent.stop();
		assertThat(this.registry).hasObservationWithNameEqualTo(NAME)
			.that()
			.hasParentObservationEqualTo(parent)
			.hasBeenStopped();
		assertThat(current[0]).isNotNull();
		assertThat(current[0].getContext()).isInstanceOf(IdempotencyObservationContext.class);
	}

	@Test
	void requestsThatAreNotIdempotentAreNotObserved() throws Exception {
		this.filter.doFilter(request("/other", KEY), new MockHttpServletResponse(), chain(200, "other"));
		this.filter.doFilter(request("/optional", null), new MockHttpServletResponse(), chain(200, "no key"));
		assertThat(this.registry).doesNotHaveAnyObservation();
	}

	@Test
	void customConventionIsUsed() throws Exception {
		this.filter.setObservationConvention(new DefaultIdempotencyObservationConvention("custom.name") {

			@Override
			public KeyValues getLowCardinalityKeyValues(IdempotencyObservationContext context) {
				HttpServletRequest request = ((IdempotentRequestObservationContext) context).getRequest();
				return super.getLowCardinalityKeyValues(context).and("method", request.getMethod());
			}

		});
		this.filter.doFilter(request("/idempotent", KEY), new MockHttpServletResponse(), chain(201, "created"));
		assertThat(this.registry).hasSingleObservationThat()
			.hasNameEqualTo("custom.name")
			.hasLowCardinalityKeyValue("outcome", "executed")
			.hasLowCardinalityKeyValue("method", "POST");
	}

	@Test
	void noopRegistryObservesNothingAndTheRequestStillRuns() throws Exception {
		this.filter.setObservationRegistry(ObservationRegistry.NOOP);
		MockHttpServletResponse response = new MockHttpServletResponse();
		this.filter.doFilter(request("/idempotent", KEY), response, chain(201, "created"));
		assertThat(response.getContentAsString()).isEqualTo("created");
		assertThat(this.registry).doesNotHaveAnyObservation();
	}

	@Test
	void observationSwitchedOffByAPredicateIsTheNoOpOneAndTheRequestStillRuns() throws Exception {
		this.registry.observationConfig().observationPredicate((name, context) -> !name.equals(NAME));
		NamedPolicy policy = policy(IdempotencyPolicy.defaults());
		assertThat(observe(this.registry, policy)).isSameAs(IdempotencyObservation.NONE);
		assertThat(observe(TestObservationRegistry.create(), policy)).isNotSameAs(IdempotencyObservation.NONE);
		MockHttpServletResponse response = new MockHttpServletResponse();
		this.filter.doFilter(request("/idempotent", KEY), response, chain(201, "created"));
		assertThat(response.getContentAsString()).isEqualTo("created");
		assertThat(this.registry).doesNotHaveAnyObservation();
	}

	private void assertSingleObservation(String outcome, String policy, String replayed, String completion) {
		assertThat(this.registry).hasSingleObservationThat()
			.hasNameEqualTo(NAME)
			.hasBeenStarted()
			.hasBeenStopped()
			.hasLowCardinalityKeyValue("outcome", outcome)
			.hasLowCardinalityKeyValue("policy", policy)
			.hasLowCardinalityKeyValue("replayed", replayed)
			.hasLowCardinalityKeyValue("completion", completion)
			.satisfies((context) -> {
				assertThat(context.getHighCardinalityKeyValues()).isEmpty();
				assertThat(context.getLowCardinalityKeyValues()).extracting(KeyValue::getValue)
					.noneMatch((value) -> value.contains(KEY));
			});
	}

	private IdempotentEndpoint endpoint(HttpServletRequest request) {
		String uri = request.getRequestURI();
		if (uri.startsWith("/idempotent")) {
			return new IdempotentEndpoint(IdempotencyPolicy.DEFAULT_NAME, true);
		}
		if (uri.startsWith("/open")) {
			return new IdempotentEndpoint("open", true);
		}
		if (uri.startsWith("/optional")) {
			return new IdempotentEndpoint(IdempotencyPolicy.DEFAULT_NAME, false);
		}
		return null;
	}

	private static NamedPolicy policy(IdempotencyPolicy policy) {
		return new NamedPolicy(policy, new Sha256RequestFingerprinter(), List.of(), 1024, 1024, Duration.ofMinutes(1),
				Duration.ofDays(1));
	}

	private static MockHttpServletRequest request(String path, String key) {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", path);
		if (key != null) {
			request.addHeader("Idempotency-Key", key);
		}
		request.setContentType("application/json");
		request.setContent("{}".getBytes(StandardCharsets.UTF_8));
		return request;
	}

	private static MockFilterChain chain(int status, String body) {
		return new MockFilterChain(new HttpServlet() {

			@Override
			protected void service(HttpServletRequest req, HttpServletResponse res) throws IOException {
				res.setStatus(status);
				res.getOutputStream().write(body.getBytes(StandardCharsets.UTF_8));
			}

		});
	}

	private static IdempotencyObservation observe(ObservationRegistry registry, NamedPolicy policy) {
		return IdempotencyObservation.start(registry, IdempotencyObservationDocumentation.IDEMPOTENT_REQUEST, null,
				new DefaultIdempotencyObservationConvention(),
				new IdempotentRequestObservationContext(request("/idempotent", KEY), policy.name()));
	}

}
