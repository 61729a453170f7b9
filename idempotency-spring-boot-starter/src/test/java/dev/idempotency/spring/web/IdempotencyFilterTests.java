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

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyScopes;
import dev.idempotency.core.IdempotencyStatus;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.StoredResponseCodec;
import dev.idempotency.core.engine.IdempotencyEngine;
import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.core.fingerprint.Sha256RequestFingerprinter;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.InMemoryIdempotencyStore;
import dev.idempotency.spring.NamedPolicies;
import dev.idempotency.spring.NamedPolicy;
import dev.idempotency.spring.http.AnonymousRequests;
import dev.idempotency.spring.http.IdempotentEndpoint;
import dev.idempotency.test.ForwardingIdempotencyStore;
import jakarta.servlet.ServletRequestEvent;
import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.mock.web.MockServletContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Tests for {@link IdempotencyFilter} with mock requests.
 *
 * @author Idempotency contributors
 */
@ExtendWith(OutputCaptureExtension.class)
class IdempotencyFilterTests {

	private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();

	private final IdempotencyEngine engine = new IdempotencyEngine(this.store);

	private final NamedPolicies policies = new NamedPolicies(List.of(new NamedPolicy(IdempotencyPolicy.defaults(),
			new Sha256RequestFingerprinter(), List.of(), 1024, 1024, Duration.ofMinutes(1), Duration.ofDays(1))));

	private final IdempotencyFilter filter = new IdempotencyFilter(this.engine,
			(request) -> request.getRequestURI().startsWith("/idempotent")
					? new IdempotentEndpoint(IdempotencyPolicy.DEFAULT_NAME, true) : null,
			this.policies);

	@AfterEach
	void close() {
		this.engine.close();
	}

	@Test
	void requestOfAnotherEndpointIsPassedOnAsItIs() throws Exception {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/other");
		request.addHeader("Idempotency-Key", "k");
		MockHttpServletResponse response = new MockHttpServletResponse();
		MockFilterChain chain = new MockFilterChain();
		this.filter.doFilter(request, response, chain);
		assertThat(chain.getRequest()).isSameAs(request);
		assertThat(chain.getResponse()).isSameAs(response);
	}

	@Test
	void anonymousRequestsAreAllowedInTheGlobalScopeByDefault() throws Exception {
		MockHttpServletResponse response = new MockHttpServletResponse();
		this.filter.doFilter(request("anon-1"), response, new MockFilterChain());
		assertThat(response.getStatus()).isEqualTo(200);
		assertThat(this.store.find(IdempotencyKey.global("anon-1"))).isPresent();
	}

	@Test
	void anonymousRequestsCanBeRejectedBeforeTheirKeyIsLookedAt() throws Exception {
		this.filter.setAnonymousRequests(AnonymousRequests.REJECT);
		MockHttpServletResponse response = new MockHttpServletResponse();
		MockFilterChain chain = new MockFilterChain();
		this.filter.doFilter(request("anon-2"), response, chain);
		assertThat(response.getStatus()).isEqualTo(403);
		assertThat(response.getContentType()).isEqualTo("application/problem+json");
		assertThat(response.getContentAsString()).contains("idempotency-unauthenticated");
		assertThat(chain.getRequest()).isNull();
		assertThat(this.store.find(IdempotencyKey.global("anon-2"))).isEmpty();
		// an authenticated caller is not affected
		MockHttpServletRequest authenticated = request("anon-2");
		authenticated.setUserPrincipal(() -> "alice");
		MockHttpServletResponse accepted = new MockHttpServletResponse();
		this.filter.doFilter(authenticated, accepted, new MockFilterChain());
		assertThat(accepted.getStatus()).isEqualTo(200);
		assertThat(this.store.find(new IdempotencyKey(IdempotencyScopes.principal("alice"), "anon-2"))).isPresent();
	}

	@Test
	void anonymousRequestsCanBeWarnedAboutOncePerPolicy(CapturedOutput output) throws Exception {
		this.filter.setAnonymousRequests(AnonymousRequests.WARN);
		for (String key : new String[] { "anon-3", "anon-4" }) {
			MockHttpServletResponse response = new MockHttpServletResponse();
			this.filter.doFilter(request(key), response, new MockFilterChain());
			assertThat(response.getStatus()).isEqualTo(200);
		}
		assertThat(output.getAll().split("has no authenticated principal", -1)).hasSize(2);
		assertThat(output).contains("policy 'default'").contains("idempotency.anonymous-requests=reject");
	}

	@Test
	void handlerExceptionReleasesTheKeyAndPropagates() {
		MockHttpServletRequest request = request("k1");
		MockFilterChain chain = new MockFilterChain(new jakarta.servlet.http.HttpServlet() {

			@Override
			protected void service(jakarta.servlet.http.HttpServletRequest req, HttpServletResponse res) {
				throw new IllegalStateException("boom");
			}

		});
		assertThatIllegalStateException()
			.isThrownBy(() -> this.filter.doFilter(request, new MockHttpServletResponse(), chain))
			.withMessage("boom");
		assertThat(this.store.find(IdempotencyKey.global("k1"))).isEmpty();
	}

	@Test
	void storableSendErrorWithoutErrorDispatchIsReleasedWhenTheRequestEnds() throws Exception {
		MockHttpServletRequest request = request("k2");
		MockHttpServletResponse response = new MockHttpServletResponse();
		MockFilterChain chain = new MockFilterChain(new jakarta.servlet.http.HttpServlet() {

			@Override
			protected void service(jakarta.servlet.http.HttpServletRequest req, HttpServletResponse res)
					throws java.io.IOException {
				res.sendError(404);
			}

		});
		this.filter.doFilter(request, response, chain);
		// waiting for the error dispatch that renders the error page
		assertThat(this.store.find(IdempotencyKey.global("k2")))
			.hasValueSatisfying((record) -> assertThat(record.status()).isEqualTo(IdempotencyStatus.PROCESSING));
		this.filter.requestCleanupListener()
			.requestDestroyed(new ServletRequestEvent(new MockServletContext(), request));
		assertThat(this.store.find(IdempotencyKey.global("k2"))).isEmpty();
	}

	@Test
	void completedResponseIsStoredBeforeItIsWritten() throws Exception {
		MockHttpServletRequest request = request("k3");
		MockHttpServletResponse response = new MockHttpServletResponse();
		MockFilterChain chain = new MockFilterChain(new jakarta.servlet.http.HttpServlet() {

			@Override
			protected void service(jakarta.servlet.http.HttpServletRequest req, HttpServletResponse res)
					throws java.io.IOException {
				assertThat(new String(req.getInputStream().readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("{}");
				res.setStatus(201);
				res.getOutputStream().write("done".getBytes(StandardCharsets.US_ASCII));
				res.flushBuffer();
				assertThat(res.isCommitted()).isFalse();
			}

		});
		this.filter.doFilter(request, response, chain);
		assertThat(response.getStatus()).isEqualTo(201);
		assertThat(response.getContentAsString()).isEqualTo("done");
		assertThat(response.getHeader(IdempotencyFilter.EXPIRES_HEADER)).isNotNull();
		assertThat(this.store.find(IdempotencyKey.global("k3")))
			.hasValueSatisfying((record) -> assertThat(record.status()).isEqualTo(IdempotencyStatus.COMPLETED));
		MockHttpServletResponse replay = new MockHttpServletResponse();
		this.filter.doFilter(request("k3"), replay, new MockFilterChain());
		assertThat(replay.getStatus()).isEqualTo(201);
		assertThat(replay.getContentAsString()).isEqualTo("done");
		assertThat(replay.getHeader(IdempotencyFilter.REPLAYED_HEADER)).isEqualTo("true");
	}

	@Test
	void responseWithMoreHeadersThanAStoredResponseHoldsIsDeliveredAndStoredAsNotReplayable() throws Exception {
		IdempotencyEngine engine = new IdempotencyEngine(new CodecRoundTripStore(this.store));
		try {
			IdempotencyFilter filter = new IdempotencyFilter(engine,
					(request) -> new IdempotentEndpoint("default", true), this.policies);
			MockHttpServletResponse response = new MockHttpServletResponse();
			MockFilterChain chain = new MockFilterChain(new jakarta.servlet.http.HttpServlet() {

				@Override
				protected void service(jakarta.servlet.http.HttpServletRequest req, HttpServletResponse res)
						throws java.io.IOException {
					res.setStatus(201);
					for (int i = 0; i < 1100; i++) {
						res.addHeader("X-Trace-" + i, "t" + i);
					}
					res.getOutputStream().write("done".getBytes(StandardCharsets.US_ASCII));
				}

			});
			filter.doFilter(request("k4"), response, chain);
			// the client gets the response as the handler produced it
			assertThat(response.getStatus()).isEqualTo(201);
			assertThat(response.getContentAsString()).isEqualTo("done");
			assertThat(response.getHeaderNames()).contains("X-Trace-0", "X-Trace-1099");
			assertThat(response.getHeader(IdempotencyFilter.EXPIRES_HEADER)).isNotNull();
			// the store keeps the status and the headers that fit, without the body
			StoredResponse stored = this.store.find(IdempotencyKey.global("k4")).orElseThrow().response();
			assertThat(stored).isNotNull();
			assertThat(stored.isBodyRetained()).isFalse();
			assertThat(stored.status()).isEqualTo(201);
			assertThat(stored.headers()).hasSizeLessThanOrEqualTo(1024).isNotEmpty();
			MockHttpServletResponse replay = new MockHttpServletResponse();
			filter.doFilter(request("k4"), replay, new MockFilterChain());
			assertThat(replay.getStatus()).isEqualTo(410);
			assertThat(replay.getContentAsString()).contains("\"originalStatus\":201");
		}
		finally {
			engine.close();
		}
	}

	@Test
	void scopesOfACustomResolverHaveTheirOwnNamespace() throws Exception {
		String[] scope = { "principal:alice" };
		this.filter.setScopeResolver((request) -> scope[0]);
		MockHttpServletRequest request = request("k5");
		this.filter.doFilter(request, new MockHttpServletResponse(), new MockFilterChain());
		assertThat(request.getAttribute(IdempotencyFilter.KEY_ATTRIBUTE))
			.isEqualTo(new IdempotencyKey("custom:principal:alice", "k5"));
		// the empty scope is the global one, whatever the resolver
		scope[0] = "";
		MockHttpServletRequest global = request("k6");
		this.filter.doFilter(global, new MockHttpServletResponse(), new MockFilterChain());
		assertThat(global.getAttribute(IdempotencyFilter.KEY_ATTRIBUTE)).isEqualTo(IdempotencyKey.global("k6"));
	}

	@Test
	void scopesOfTheDefaultResolverNameTheirSource() throws Exception {
		this.filter.setScopeResolver(new DefaultIdempotencyScopeResolver("X-Tenant"));
		MockHttpServletRequest tenant = request("k7");
		tenant.addHeader("X-Tenant", " acme ");
		tenant.setUserPrincipal(() -> "alice");
		MockHttpServletRequest principal = request("k7");
		principal.setUserPrincipal(() -> "alice");
		MockHttpServletRequest emptyName = request("k7");
		emptyName.setUserPrincipal(() -> "");
		MockHttpServletRequest anonymous = request("k7");
		MockHttpServletRequest longName = request("k7");
		longName.setUserPrincipal(() -> "u".repeat(IdempotencyKey.MAX_SCOPE_LENGTH));
		for (MockHttpServletRequest request : List.of(tenant, principal, emptyName, anonymous, longName)) {
			this.filter.doFilter(request, new MockHttpServletResponse(), new MockFilterChain());
		}
		assertThat(scopeOf(tenant)).isEqualTo("header:acme");
		assertThat(scopeOf(principal)).isEqualTo("principal:alice");
		assertThat(scopeOf(emptyName)).isEqualTo("principal:");
		assertThat(scopeOf(anonymous)).isEqualTo(IdempotencyKey.GLOBAL_SCOPE);
		assertThat(scopeOf(longName)).isEqualTo("sha256:" + HexFormat.of()
			.formatHex(MessageDigest.getInstance("SHA-256")
				.digest(("principal:" + "u".repeat(IdempotencyKey.MAX_SCOPE_LENGTH))
					.getBytes(StandardCharsets.UTF_8))));
	}

	@Test
	void longScopeIsStoredAsAPinnedDigest() throws Exception {
		MockHttpServletRequest request = request("k8");
		request.setUserPrincipal(() -> "u".repeat(IdempotencyKey.MAX_SCOPE_LENGTH));
		this.filter.doFilter(request, new MockHttpServletResponse(), new MockFilterChain());
		// the stored form of records already written: it must never change
		assertThat(scopeOf(request))
			.isEqualTo("sha256:a4a9dc37934d6eb3c0bfd2f5c9c511688034cb61292f2b766c6c1cc27cffbaa5");
	}

	private static String scopeOf(MockHttpServletRequest request) {
		return ((IdempotencyKey) request.getAttribute(IdempotencyFilter.KEY_ATTRIBUTE)).scope();
	}

	@Test
	void formBodyHasOneFingerprintWhetherOrNotAFilterConsumedIt() throws Exception {
		MockFilterChain chain = new MockFilterChain(new jakarta.servlet.http.HttpServlet() {

			@Override
			protected void service(jakarta.servlet.http.HttpServletRequest req, HttpServletResponse res)
					throws java.io.IOException {
				res.getWriter().write("paid " + req.getParameter("amount") + " " + java.util.UUID.randomUUID());
			}

		});
		MockHttpServletRequest unread = formRequest("k4", 22);
		unread.setContent("amount=10&currency=EUR".getBytes(StandardCharsets.US_ASCII));
		MockHttpServletResponse first = new MockHttpServletResponse();
		this.filter.doFilter(unread, first, chain);
		assertThat(first.getContentAsString()).startsWith("paid 10 ");
		// the same form once an earlier filter had the container parse it
		MockHttpServletRequest consumed = formRequest("k4", 22);
		consumed.setParameter("currency", "EUR");
		consumed.setParameter("amount", "10");
		MockHttpServletResponse replay = new MockHttpServletResponse();
		this.filter.doFilter(consumed, replay, new MockFilterChain());
		assertThat(replay.getHeader(IdempotencyFilter.REPLAYED_HEADER)).isEqualTo("true");
		assertThat(replay.getContentAsString()).isEqualTo(first.getContentAsString());
		MockHttpServletRequest other = formRequest("k4", 22);
		other.setParameter("currency", "EUR");
		other.setParameter("amount", "11");
		MockHttpServletResponse mismatch = new MockHttpServletResponse();
		this.filter.doFilter(other, mismatch, new MockFilterChain());
		assertThat(mismatch.getStatus()).isEqualTo(422);
	}

	private static MockHttpServletRequest formRequest(String key, long contentLength) {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/idempotent") {

			@Override
			public long getContentLengthLong() {
				return contentLength;
			}

		};
		request.addHeader("Idempotency-Key", key);
		request.setContentType("application/x-www-form-urlencoded");
		request.setCharacterEncoding("UTF-8");
		return request;
	}

	private static MockHttpServletRequest request(String key) {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/idempotent");
		request.addHeader("Idempotency-Key", key);
		request.setContentType("application/json");
		request.setContent("{}".getBytes(StandardCharsets.UTF_8));
		return request;
	}

	/**
	 * Stores responses as Redis and PostgreSQL do: encoded, and decoded when read.
	 */
	private static final class CodecRoundTripStore extends ForwardingIdempotencyStore {

		private final StoredResponseCodec codec = new StoredResponseCodec();

		CodecRoundTripStore(IdempotencyStore delegate) {
			super(delegate);
		}

		@Override
		public boolean complete(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
			return delegate().complete(key, token, this.codec.decode(this.codec.encode(response)), ttl);
		}

	}

}
