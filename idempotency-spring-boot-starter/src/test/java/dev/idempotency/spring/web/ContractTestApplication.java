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
import java.security.Principal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import dev.idempotency.spring.Idempotent;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseCookie;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.cors.CorsConfiguration;
import org.springframework.web.cors.UrlBasedCorsConfigurationSource;
import org.springframework.web.filter.CorsFilter;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.server.ResponseStatusException;

/**
 * Application whose controllers exercise the HTTP contract and count how often each
 * handler runs.
 *
 * @author Idempotency contributors
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
class ContractTestApplication {

	static final String FIRST_ORIGIN = "https://shop.example";

	static final String SECOND_ORIGIN = "https://admin.example";

	static final Executor ASYNC = Executors.newCachedThreadPool();

	/**
	 * Wraps the store in an {@link OutageSimulatingStore}, unless
	 * {@code contract.outage=data-source}: the transactional variants of the contract
	 * simulate the outage in the store's data source instead
	 * ({@link OutageSimulatingDataSource}), since the start-up of the transactional mode
	 * needs the store bean itself to be the PostgreSQL or tiered store.
	 * @return the post-processor
	 */
	@Bean
	@ConditionalOnProperty(name = "contract.outage", havingValue = "store", matchIfMissing = true)
	static BeanPostProcessor outageSimulation() {
		return OutageSimulatingStore.wrapping();
	}

	@Bean
	HandlerCounter handlerCounter() {
		return new HandlerCounter();
	}

	/**
	 * Stands in for an authentication filter: the {@code X-User} header becomes the
	 * principal. Runs before the idempotency filter, as Spring Security would.
	 * @return the registration
	 */
	@Bean
	FilterRegistrationBean<OncePerRequestFilter> testAuthenticationFilter() {
		FilterRegistrationBean<OncePerRequestFilter> registration = new FilterRegistrationBean<>(
				new OncePerRequestFilter() {

					@Override
					protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response,
							FilterChain chain) throws ServletException, IOException {
						String user = request.getHeader("X-User");
						if (user == null) {
							chain.doFilter(request, response);
							return;
						}
						Principal principal = () -> user;
						chain.doFilter(new HttpServletRequestWrapper(request) {

							@Override
							public Principal getUserPrincipal() {
								return principal;
							}

						}, response);
					}

				});
		registration.setOrder(-100);
		return registration;
	}

	/**
	 * CORS as a filter in front of the idempotency filter, as Spring Security's
	 * {@code cors()} installs it: every request, a replay too, gets its own CORS headers.
	 * @return the registration
	 */
	@Bean
	FilterRegistrationBean<CorsFilter> corsFilter() {
		UrlBasedCorsConfigurationSource source = new UrlBasedCorsConfigurationSource();
		source.registerCorsConfiguration("/**", corsConfiguration());
		FilterRegistrationBean<CorsFilter> registration = new FilterRegistrationBean<>(new CorsFilter(source));
		registration.setOrder(-100);
		return registration;
	}

	/**
	 * The CORS settings of the contract's applications, on either web stack.
	 * @return the settings
	 */
	static CorsConfiguration corsConfiguration() {
		CorsConfiguration configuration = new CorsConfiguration();
		configuration.setAllowedOrigins(List.of(FIRST_ORIGIN, SECOND_ORIGIN));
		configuration.setAllowedMethods(List.of("POST"));
		configuration.addAllowedHeader("*");
		configuration.addExposedHeader("X-Payment-Id");
		configuration.setAllowCredentials(true);
		return configuration;
	}

	@RestController
	static class ContractController {

		private final HandlerCounter counter;

		ContractController(HandlerCounter counter) {
			this.counter = counter;
		}

		@PostMapping("/plain")
		String plain(HttpServletRequest request) {
			return "plain " + this.counter.increment("plain", request);
		}

		@PostMapping(path = "/payments", produces = MediaType.APPLICATION_JSON_VALUE)
		@Idempotent
		ResponseEntity<String> pay(@RequestBody String body, HttpServletRequest request) {
			int run = this.counter.increment("payments", request);
			return ResponseEntity.status(HttpStatus.CREATED)
				.header("X-Payment-Id", UUID.randomUUID().toString())
				.header("Set-Cookie", ResponseCookie.from("session", "s" + run).build().toString())
				.body("{\"id\":\"" + UUID.randomUUID() + "\",\"run\":" + run + ",\"request\":" + body.length() + "}");
		}

		@PostMapping("/tokens")
		@Idempotent
		ResponseEntity<String> tokens(HttpServletRequest request) {
			int run = this.counter.increment("tokens", request);
			return ResponseEntity.ok()
				.header("X-Payment-Id", "p-" + run)
				.header("Authorization", "Bearer secret-" + run)
				.header("WWW-Authenticate", "Bearer realm=\"payments\"")
				.header("X-Auth-Token", "token-" + run)
				.header("X-Api-Key", "key-" + run)
				.body("tokens " + run);
		}

		@PostMapping("/webhooks/header")
		@Idempotent("webhook-header")
		String webhookByHeader(@RequestBody String body, HttpServletRequest request) throws InterruptedException {
			int run = this.counter.increment("webhook-header", request.getHeader("webhook-id"));
			// long enough for concurrent deliveries to overlap
			Thread.sleep(100);
			return "delivery " + run + " of " + body.length() + " bytes";
		}

		@PostMapping("/webhooks/body")
		@Idempotent("webhook-body")
		String webhookByBody(@RequestBody String body) throws InterruptedException {
			int run = this.counter.increment("webhook-body", body);
			Thread.sleep(100);
			return "event " + run + " " + UUID.randomUUID();
		}

		@PostMapping("/optional")
		@Idempotent(required = false)
		String optional(HttpServletRequest request) {
			return "optional " + UUID.randomUUID() + " " + this.counter.increment("optional", request);
		}

		@PostMapping("/status/{status}")
		@Idempotent
		ResponseEntity<String> status(@PathVariable int status, HttpServletRequest request) {
			int run = this.counter.increment("status", request);
			return ResponseEntity.status(status).body("status " + status + " run " + run + " " + UUID.randomUUID());
		}

		@PostMapping("/throw")
		@Idempotent
		String fail(HttpServletRequest request) {
			this.counter.increment("throw", request);
			throw new IllegalStateException("handler failed");
		}

		@PostMapping("/slow")
		@Idempotent
		String slow(@RequestParam(defaultValue = "300") long millis, HttpServletRequest request)
				throws InterruptedException {
			int run = this.counter.increment("slow", request);
			Thread.sleep(millis);
			return "slow " + run + " " + UUID.randomUUID();
		}

		@PostMapping("/patient")
		@Idempotent("patient")
		String patient(HttpServletRequest request) throws InterruptedException {
			int run = this.counter.increment("patient", request);
			Thread.sleep(500);
			return "patient " + run + " " + UUID.randomUUID();
		}

		@PostMapping("/crash")
		@Idempotent("crash")
		String crash(HttpServletRequest request) {
			return "crash " + this.counter.increment("crash", request) + " " + UUID.randomUUID();
		}

		@PostMapping("/brief")
		@Idempotent("brief")
		String brief(HttpServletRequest request) {
			return "brief " + this.counter.increment("brief", request) + " " + UUID.randomUUID();
		}

		@PostMapping("/open")
		@Idempotent("open")
		String open(HttpServletRequest request) {
			return "open " + this.counter.increment("open", request);
		}

		@PostMapping("/small")
		@Idempotent("small")
		String small(@RequestBody(required = false) String body, HttpServletRequest request) {
			return "small " + this.counter.increment("small", request);
		}

		@PostMapping("/send-error/{status}")
		@Idempotent
		void sendError(@PathVariable int status, HttpServletRequest request, HttpServletResponse response)
				throws IOException {
			this.counter.increment("send-error", request);
			response.sendError(status);
		}

		@PostMapping("/not-found")
		@Idempotent
		String notFound(HttpServletRequest request) {
			this.counter.increment("not-found", request);
			throw new ResponseStatusException(HttpStatus.NOT_FOUND, "no such thing");
		}

		@PostMapping("/json")
		@Idempotent
		Map<String, Object> json(@RequestBody Map<String, Object> body, HttpServletRequest request) {
			return Map.of("run", this.counter.increment("json", request), "size", body.size());
		}

		@PostMapping("/json/lenient")
		@Idempotent("lenient")
		String jsonLenient(@RequestBody String body, HttpServletRequest request) {
			return "lenient " + this.counter.increment("lenient", request) + " " + UUID.randomUUID();
		}

		@PostMapping("/json/raw")
		@Idempotent("raw")
		String jsonRaw(@RequestBody String body, HttpServletRequest request) {
			return "raw " + this.counter.increment("raw", request) + " " + UUID.randomUUID();
		}

		@PostMapping("/form")
		@Idempotent
		String form(@RequestParam String name, @RequestParam(required = false) String q, HttpServletRequest request) {
			return "form " + name + " " + q + " " + this.counter.increment("form", request);
		}

		@PostMapping("/writer")
		@Idempotent
		void writer(HttpServletRequest request, HttpServletResponse response) throws IOException {
			int run = this.counter.increment("writer", request);
			response.setContentType("text/plain;charset=UTF-8");
			response.getWriter().write("grüße " + run + " " + UUID.randomUUID());
			response.flushBuffer();
			response.getWriter().write(" – after flush");
		}

		@PostMapping("/large")
		@Idempotent("small")
		void large(@RequestParam int size, HttpServletRequest request, HttpServletResponse response)
				throws IOException {
			this.counter.increment("large", request);
			response.setContentType("application/octet-stream");
			byte[] chunk = new byte[100];
			for (int i = 0; i < size; i += chunk.length) {
				java.util.Arrays.fill(chunk, (byte) ('a' + (i / chunk.length) % 26));
				response.getOutputStream().write(chunk, 0, Math.min(chunk.length, size - i));
			}
		}

	}

	/**
	 * The asynchronous handlers, of the default policy. Left out when every policy is
	 * transactional ({@code idempotency.transactional=true}): an asynchronous handler of
	 * a transactional policy fails start-up, since its work would run outside the
	 * request's transaction.
	 */
	@RestController
	@ConditionalOnBooleanProperty(name = "idempotency.transactional", havingValue = false, matchIfMissing = true)
	static class AsyncController {

		private final HandlerCounter counter;

		AsyncController(HandlerCounter counter) {
			this.counter = counter;
		}

		@PostMapping("/async/callable")
		@Idempotent
		Callable<String> callable(HttpServletRequest request) {
			int run = this.counter.increment("callable", request);
			return () -> {
				Thread.sleep(50);
				return "callable " + run + " " + UUID.randomUUID();
			};
		}

		@PostMapping("/async/deferred")
		@Idempotent
		DeferredResult<String> deferred(@RequestParam(defaultValue = "false") boolean fail,
				HttpServletRequest request) {
			int run = this.counter.increment("deferred", request);
			DeferredResult<String> result = new DeferredResult<>(Duration.ofSeconds(10).toMillis());
			ASYNC.execute(() -> {
				sleep(50);
				if (fail) {
					result.setErrorResult(new IllegalStateException("async failure"));
				}
				else {
					result.setResult("deferred " + run + " " + UUID.randomUUID());
				}
			});
			return result;
		}

		@PostMapping("/async/future")
		@Idempotent
		CompletableFuture<String> future(HttpServletRequest request) {
			int run = this.counter.increment("future", request);
			return CompletableFuture.supplyAsync(() -> {
				sleep(50);
				return "future " + run + " " + UUID.randomUUID();
			}, ASYNC);
		}

		@GetMapping("/async/plain")
		String getPlain() {
			return "get";
		}

		private static void sleep(long millis) {
			try {
				TimeUnit.MILLISECONDS.sleep(millis);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

	}

}
