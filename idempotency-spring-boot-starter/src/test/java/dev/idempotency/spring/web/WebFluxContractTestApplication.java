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
import java.security.Principal;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

import dev.idempotency.spring.Idempotent;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.reactor.netty.NettyReactiveWebServerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseCookie;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.cors.reactive.CorsWebFilter;
import org.springframework.web.cors.reactive.UrlBasedCorsConfigurationSource;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;

/**
 * The reactive twin of {@link ContractTestApplication}: the same endpoints, written as
 * WebFlux handlers (they wait with timers, never by blocking), on Reactor Netty, so that
 * the contract tests of {@link AbstractHttpContractIT} run unchanged against the WebFlux
 * filter.
 *
 * @author Idempotency contributors
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
class WebFluxContractTestApplication {

	/**
	 * Reactor Netty, whose event-loop threads the store must never be called on, even
	 * with Tomcat on the test class path.
	 * @return the server factory
	 */
	@Bean
	NettyReactiveWebServerFactory nettyReactiveWebServerFactory() {
		return new NettyReactiveWebServerFactory();
	}

	/**
	 * Wraps the store in an {@link OutageSimulatingStore}, which also counts (and fails)
	 * calls made on a non-blocking thread.
	 * @return the post-processor
	 */
	@Bean
	static BeanPostProcessor outageSimulation() {
		return OutageSimulatingStore.wrapping();
	}

	@Bean
	HandlerCounter handlerCounter() {
		return new HandlerCounter();
	}

	/**
	 * Stands in for reactive Spring Security: the {@code X-User} header becomes the
	 * exchange's principal, before the idempotency filter runs.
	 * @return the filter
	 */
	@Bean
	@Order(-100)
	WebFilter testAuthenticationFilter() {
		return (exchange, chain) -> {
			String user = exchange.getRequest().getHeaders().getFirst("X-User");
			if (user == null) {
				return chain.filter(exchange);
			}
			Principal principal = () -> user;
			return chain.filter(exchange.mutate().principal(Mono.just(principal)).build());
		};
	}

	/**
	 * Counts, under the handler name {@code cancelled}, the requests whose client went
	 * away before they were answered (the exchange's subscription was cancelled).
	 * @param counter the handler counter
	 * @return the filter
	 */
	@Bean
	@Order(-100)
	WebFilter cancellationRecorder(HandlerCounter counter) {
		return (exchange, chain) -> chain.filter(exchange)
			.doOnCancel(() -> counter.increment("cancelled",
					exchange.getRequest().getHeaders().getFirst("Idempotency-Key")));
	}

	/**
	 * CORS as a filter in front of the idempotency filter, as Spring Security's
	 * {@code cors()} installs it: every request, a replay too, gets its own CORS headers.
	 * @return the filter
	 */
	@Bean
	@Order(-100)
	CorsWebFilter corsWebFilter() {
		UrlBasedCorsConfigurationSource source = new UrlBasedCorsConfigurationSource();
		source.registerCorsConfiguration("/**", ContractTestApplication.corsConfiguration());
		return new CorsWebFilter(source);
	}

	/**
	 * A functional endpoint, which no annotation can make idempotent: an endpoint rule
	 * ({@code idempotency.endpoints}) does, where a test configures one.
	 * @param counter the handler counter
	 * @return the route
	 */
	@Bean
	RouterFunction<ServerResponse> functionalRoute(HandlerCounter counter) {
		return RouterFunctions.route()
			.POST("/functional/orders",
					(request) -> request.bodyToMono(String.class)
						.defaultIfEmpty("")
						.flatMap((body) -> ServerResponse.status(HttpStatus.CREATED)
							.bodyValue("order "
									+ counter.increment("functional", request.headers().firstHeader("Idempotency-Key"))
									+ " " + UUID.randomUUID())))
			.build();
	}

	@RestController
	static class ContractController {

		private final HandlerCounter counter;

		ContractController(HandlerCounter counter) {
			this.counter = counter;
		}

		private int count(String handler, ServerWebExchange exchange) {
			return this.counter.increment(handler, exchange.getRequest().getHeaders().getFirst("Idempotency-Key"));
		}

		@PostMapping("/plain")
		Mono<String> plain(ServerWebExchange exchange) {
			return Mono.fromSupplier(() -> "plain " + count("plain", exchange));
		}

		// the body as bytes, so that its content type is the one declared (a String body
		// would get a charset parameter from WebFlux's encoder)
		@PostMapping(path = "/payments", produces = MediaType.APPLICATION_JSON_VALUE)
		@Idempotent
		Mono<ResponseEntity<byte[]>> pay(@RequestBody(required = false) Mono<String> body, ServerWebExchange exchange) {
			return body.defaultIfEmpty("").map((text) -> {
				int run = count("payments", exchange);
				return ResponseEntity.status(HttpStatus.CREATED)
					.contentType(MediaType.APPLICATION_JSON)
					.header("X-Payment-Id", UUID.randomUUID().toString())
					.header("Set-Cookie", ResponseCookie.from("session", "s" + run).build().toString())
					.body(("{\"id\":\"" + UUID.randomUUID() + "\",\"run\":" + run + ",\"request\":" + text.length()
							+ "}")
						.getBytes(StandardCharsets.UTF_8));
			});
		}

		@PostMapping("/tokens")
		@Idempotent
		Mono<ResponseEntity<String>> tokens(ServerWebExchange exchange) {
			return Mono.fromSupplier(() -> {
				int run = count("tokens", exchange);
				return ResponseEntity.ok()
					.header("X-Payment-Id", "p-" + run)
					.header("Authorization", "Bearer secret-" + run)
					.header("WWW-Authenticate", "Bearer realm=\"payments\"")
					.header("X-Auth-Token", "token-" + run)
					.header("X-Api-Key", "key-" + run)
					.body("tokens " + run);
			});
		}

		@PostMapping("/optional")
		@Idempotent(required = false)
		Mono<String> optional(ServerWebExchange exchange) {
			return Mono.fromSupplier(() -> "optional " + UUID.randomUUID() + " " + count("optional", exchange));
		}

		@PostMapping("/status/{status}")
		@Idempotent
		Mono<ResponseEntity<String>> status(@PathVariable int status, ServerWebExchange exchange) {
			return Mono.fromSupplier(() -> {
				int run = count("status", exchange);
				return ResponseEntity.status(status).body("status " + status + " run " + run + " " + UUID.randomUUID());
			});
		}

		@PostMapping("/throw")
		@Idempotent
		Mono<String> fail(ServerWebExchange exchange) {
			return Mono.fromSupplier(() -> {
				count("throw", exchange);
				throw new IllegalStateException("handler failed");
			});
		}

		@PostMapping("/slow")
		@Idempotent
		Mono<String> slow(@RequestParam(defaultValue = "300") long millis, ServerWebExchange exchange) {
			return Mono.fromSupplier(() -> count("slow", exchange))
				.delayElement(Duration.ofMillis(millis))
				.map((run) -> "slow " + run + " " + UUID.randomUUID());
		}

		@PostMapping("/patient")
		@Idempotent("patient")
		Mono<String> patient(ServerWebExchange exchange) {
			return Mono.fromSupplier(() -> count("patient", exchange))
				.delayElement(Duration.ofMillis(500))
				.map((run) -> "patient " + run + " " + UUID.randomUUID());
		}

		@PostMapping("/crash")
		@Idempotent("crash")
		Mono<String> crash(ServerWebExchange exchange) {
			return Mono.fromSupplier(() -> "crash " + count("crash", exchange) + " " + UUID.randomUUID());
		}

		@PostMapping("/brief")
		@Idempotent("brief")
		Mono<String> brief(ServerWebExchange exchange) {
			return Mono.fromSupplier(() -> "brief " + count("brief", exchange) + " " + UUID.randomUUID());
		}

		@PostMapping("/open")
		@Idempotent("open")
		Mono<String> open(ServerWebExchange exchange) {
			return Mono.fromSupplier(() -> "open " + count("open", exchange));
		}

		@PostMapping("/small")
		@Idempotent("small")
		Mono<String> small(ServerWebExchange exchange) {
			return Mono.fromSupplier(() -> "small " + count("small", exchange));
		}

		@PostMapping("/json")
		@Idempotent
		Mono<Map<String, Object>> json(@RequestBody Mono<Map<String, Object>> body, ServerWebExchange exchange) {
			return body.map((map) -> Map.of("run", count("json", exchange), "size", map.size()));
		}

		@PostMapping("/json/lenient")
		@Idempotent("lenient")
		Mono<String> jsonLenient(@RequestBody Mono<String> body, ServerWebExchange exchange) {
			return body.map((text) -> "lenient " + count("lenient", exchange) + " " + UUID.randomUUID());
		}

		@PostMapping("/json/raw")
		@Idempotent("raw")
		Mono<String> jsonRaw(@RequestBody Mono<String> body, ServerWebExchange exchange) {
			return body.map((text) -> "raw " + count("raw", exchange) + " " + UUID.randomUUID());
		}

		@PostMapping("/webhooks/header")
		@Idempotent("webhook-header")
		Mono<String> webhookByHeader(@RequestBody Mono<String> body, ServerWebExchange exchange) {
			// long enough for concurrent deliveries to overlap
			return body.delayElement(Duration.ofMillis(100)).map((text) -> {
				int run = this.counter.increment("webhook-header",
						exchange.getRequest().getHeaders().getFirst("webhook-id"));
				return "delivery " + run + " of " + text.length() + " bytes";
			});
		}

		@PostMapping("/webhooks/body")
		@Idempotent("webhook-body")
		Mono<String> webhookByBody(@RequestBody Mono<String> body) {
			return body.delayElement(Duration.ofMillis(100))
				.map((text) -> "event " + this.counter.increment("webhook-body", text) + " " + UUID.randomUUID());
		}

		@PostMapping("/form")
		@Idempotent
		Mono<String> form(ServerWebExchange exchange) {
			return exchange.getFormData()
				.map((form) -> "form " + new TreeMap<>(form) + " run " + count("form", exchange));
		}

		// the same form, without idempotency: what plain WebFlux hands a handler
		@PostMapping("/form/plain")
		Mono<String> plainForm(ServerWebExchange exchange) {
			return exchange.getFormData().map((form) -> "form " + new TreeMap<>(form));
		}

		@PostMapping("/multipart")
		@Idempotent
		Mono<String> multipart(ServerWebExchange exchange) {
			return exchange.getMultipartData()
				.map((parts) -> "multipart " + new TreeMap<>(parts).keySet() + " run " + count("multipart", exchange));
		}

		// a body that fails after its first part: the exception handler below answers
		@PostMapping(path = "/partial", produces = MediaType.APPLICATION_JSON_VALUE)
		@Idempotent
		Flux<byte[]> partial(ServerWebExchange exchange) {
			count("partial", exchange);
			return Flux.just("[{\"item\":1}".getBytes(StandardCharsets.UTF_8))
				.concatWith(Flux.error(new ItemsRanOutException()));
		}

		@ExceptionHandler(ItemsRanOutException.class)
		ResponseEntity<byte[]> itemsRanOut() {
			return ResponseEntity.badRequest()
				.contentType(MediaType.APPLICATION_JSON)
				.body("{\"error\":\"the items ran out\"}".getBytes(StandardCharsets.UTF_8));
		}

		// the body in chunks of 100 bytes, written as a stream of buffers
		@PostMapping(path = "/large", produces = MediaType.APPLICATION_OCTET_STREAM_VALUE)
		@Idempotent("small")
		Flux<byte[]> large(@RequestParam int size, ServerWebExchange exchange) {
			count("large", exchange);
			return Flux.range(0, (size + 99) / 100).map((chunk) -> {
				byte[] bytes = new byte[Math.min(100, size - chunk * 100)];
				Arrays.fill(bytes, (byte) ('a' + chunk % 26));
				return bytes;
			});
		}

	}

	static class ItemsRanOutException extends RuntimeException {

		ItemsRanOutException() {
			super("the items ran out");
		}

	}

}
