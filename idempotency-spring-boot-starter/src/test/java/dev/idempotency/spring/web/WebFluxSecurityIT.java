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

import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpMethod;
import org.springframework.security.config.annotation.web.reactive.EnableWebFluxSecurity;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.security.web.server.csrf.CsrfToken;
import org.springframework.security.web.server.util.matcher.ServerWebExchangeMatchers;
import org.springframework.test.context.TestPropertySource;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The WebFlux filter behind real reactive Spring Security: the authenticated principal
 * scopes the keys (two users with one key are two records), and an anonymous request is
 * refused under {@code idempotency.anonymous-requests=reject}, Spring Security's
 * anonymous token being no principal. Spring Security's CSRF protection, with its default
 * token repository and request handler, guards the form endpoint: its filter reads the
 * form before the idempotency filter does.
 *
 * @author Idempotency contributors
 */
@SpringBootTest(classes = { WebFluxContractTestApplication.class, WebFluxSecurityIT.Security.class },
		webEnvironment = WebEnvironment.RANDOM_PORT, properties = "spring.main.web-application-type=reactive")
@TestPropertySource(properties = "idempotency.anonymous-requests=reject")
class WebFluxSecurityIT extends AbstractWebIT {

	@Test
	void eachUsersKeysAreTheirOwn() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> alice = as("alice", key);
		HttpResponse<byte[]> bob = as("bob", key);
		assertThat(alice.statusCode()).isEqualTo(201);
		assertThat(bob.statusCode()).isEqualTo(201);
		assertThat(bob.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).isEmpty();
		assertThat(bob.body()).isNotEqualTo(alice.body());
		HttpResponse<byte[]> aliceAgain = as("alice", key);
		assertThat(aliceAgain.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(aliceAgain.body()).isEqualTo(alice.body());
		assertThat(this.counter.count("payments", key)).isEqualTo(2);
	}

	@Test
	void anAnonymousRequestIsRefusedWithoutRunningTheHandler() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> anonymous = as(null, key);
		assertThat(anonymous.statusCode()).isEqualTo(403);
		assertThat(text(anonymous)).contains("idempotency-unauthenticated");
		assertThat(this.counter.count("payments", key)).isZero();
	}

	@Test
	void formReadByCsrfFilterIsFingerprintedAndHandedToTheHandler() throws Exception {
		HttpResponse<byte[]> csrf = send(authorized(HttpRequest.newBuilder(uri("/csrf")), "alice").GET().build());
		assertThat(csrf.statusCode()).isEqualTo(200);
		String token = text(csrf);
		String session = csrf.headers().firstValue("Set-Cookie").orElseThrow().split(";", 2)[0];
		String key = newKey();
		HttpResponse<byte[]> first = form(key, session, "amount=5&_csrf=" + token);
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(text(first)).contains("amount=[5]").endsWith(" run 1");
		HttpResponse<byte[]> retry = form(key, session, "_csrf=" + token + "&amount=5");
		assertThat(retry.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		HttpResponse<byte[]> other = form(key, session, "amount=7&_csrf=" + token);
		assertThat(other.statusCode()).isEqualTo(422);
		assertThat(text(other)).contains("idempotency-key-reused");
		assertThat(this.counter.count("form", key)).isEqualTo(1);
	}

	@Test
	void formPostsWithTwoMaskingsOfOneCsrfTokenAreTheSameRequest() throws Exception {
		HttpResponse<byte[]> csrf = send(authorized(HttpRequest.newBuilder(uri("/csrf")), "alice").GET().build());
		String session = csrf.headers().firstValue("Set-Cookie").orElseThrow().split(";", 2)[0];
		// each render of a page masks the session's token anew
		// (XorServerCsrfTokenRequestAttributeHandler)
		String token = text(csrf);
		String rendered = text(send(
				authorized(HttpRequest.newBuilder(uri("/csrf")), "alice").header("Cookie", session).GET().build()));
		assertThat(rendered).isNotEqualTo(token);
		String key = newKey();
		HttpResponse<byte[]> first = form(key, session, "amount=5&_csrf=" + token);
		assertThat(first.statusCode()).isEqualTo(200);
		HttpResponse<byte[]> retry = form(key, session, "amount=5&_csrf=" + rendered);
		assertThat(retry.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		HttpResponse<byte[]> other = form(key, session, "amount=7&_csrf=" + rendered);
		assertThat(other.statusCode()).isEqualTo(422);
		assertThat(this.counter.count("form", key)).isEqualTo(1);
	}

	@Test
	void formReadByCsrfFilterReachesTheHandlerAsWithoutIt() throws Exception {
		HttpResponse<byte[]> csrf = send(authorized(HttpRequest.newBuilder(uri("/csrf")), "alice").GET().build());
		String token = text(csrf);
		String session = csrf.headers().firstValue("Set-Cookie").orElseThrow().split(";", 2)[0];
		String key = newKey();
		// what WebFluxFilterIT's handler gets without Spring Security
		HttpResponse<byte[]> first = form(key, session, "note=caf%C3%A9&flag&_csrf=" + token);
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(text(first)).isEqualTo("form {_csrf=[" + token + "], flag=[null], note=[caf\u00e9]} run 1");
		HttpResponse<byte[]> retry = form(key, session, "_csrf=" + token + "&note=caf%c3%a9&flag");
		assertThat(retry.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(this.counter.count("form", key)).isEqualTo(1);
	}

	private HttpResponse<byte[]> form(String key, String session, String body) throws Exception {
		return send(authorized(HttpRequest.newBuilder(uri("/form")), "alice").header(KEY, key)
			.header("Cookie", session)
			.header("Content-Type", "application/x-www-form-urlencoded")
			.POST(BodyPublishers.ofString(body))
			.build());
	}

	private static HttpRequest.Builder authorized(HttpRequest.Builder request, String user) {
		return request.header("Authorization", "Basic "
				+ Base64.getEncoder().encodeToString((user + ":" + user + "-secret").getBytes(StandardCharsets.UTF_8)));
	}

	private HttpResponse<byte[]> as(@Nullable String user, String key) throws Exception {
		HttpRequest.Builder request = HttpRequest.newBuilder(uri("/payments"))
			.header(KEY, key)
			.header("Content-Type", "application/json")
			.POST(BodyPublishers.ofString("{\"amount\":10}"));
		if (user != null) {
			request.header("Authorization", "Basic " + Base64.getEncoder()
				.encodeToString((user + ":" + user + "-secret").getBytes(StandardCharsets.UTF_8)));
		}
		return send(request.build());
	}

	@Configuration(proxyBeanMethods = false)
	@EnableWebFluxSecurity
	static class Security {

		@Bean
		SecurityWebFilterChain securityWebFilterChain(ServerHttpSecurity http) {
			// the default CSRF protection (token repository and request handler), on the
			// form endpoint only
			return http
				.csrf((csrf) -> csrf
					.requireCsrfProtectionMatcher(ServerWebExchangeMatchers.pathMatchers(HttpMethod.POST, "/form")))
				.httpBasic((basic) -> {
				})
				.anonymous((anonymous) -> {
				})
				.authorizeExchange((exchanges) -> exchanges.pathMatchers(HttpMethod.POST, "/payments", "/form")
					.permitAll()
					.pathMatchers(HttpMethod.GET, "/csrf")
					.authenticated())
				.build();
		}

		// the session's CSRF token, as a page would carry it in its form
		@Bean
		RouterFunction<ServerResponse> csrfTokenRoute() {
			return RouterFunctions.route()
				.GET("/csrf",
						(request) -> request.exchange()
							.<Mono<CsrfToken>>getRequiredAttribute(CsrfToken.class.getName())
							.flatMap((token) -> ServerResponse.ok().bodyValue(token.getToken())))
				.build();
		}

		@Bean
		MapReactiveUserDetailsService users() {
			return new MapReactiveUserDetailsService(
					User.withUsername("alice").password("{noop}alice-secret").roles("USER").build(),
					User.withUsername("bob").password("{noop}bob-secret").roles("USER").build());
		}

	}

}
