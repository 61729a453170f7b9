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

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublisher;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.UUID;

import dev.idempotency.spring.Idempotent;
import jakarta.servlet.http.HttpServletRequest;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.web.servlet.DelegatingFilterProxyRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.Order;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configuration.EnableWebSecurity;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.csrf.CookieCsrfTokenRepository;
import org.springframework.security.web.csrf.CsrfTokenRequestAttributeHandler;
import org.springframework.web.bind.annotation.PatchMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestMethod;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Form bodies that a filter before the idempotency filter has already consumed: Spring
 * Security's CSRF check reads the {@code _csrf} parameter of every form post, which makes
 * the container parse the body, and Spring Boot's {@code FormContentFilter} parses the
 * body of form {@code PUT}, {@code PATCH} and {@code DELETE} requests. Such a request is
 * fingerprinted by its parameters, the same as when its body is still there to be read.
 *
 * @author Idempotency contributors
 */
@SpringBootTest(classes = ConsumedFormBodyIT.FormApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = {
				"spring.autoconfigure.exclude=org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration,"
						+ "org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration,"
						+ "org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration",
				"idempotency.policies.small.max-request-body=1KB" })
class ConsumedFormBodyIT {

	private static final String FORM = "application/x-www-form-urlencoded";

	private static final String CSRF_TOKEN = "c5a1e0f4-csrf-token";

	@LocalServerPort
	int port;

	@Autowired
	HandlerCounter counter;

	private final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@Test
	void formPostReadByTheCsrfCheckIsFingerprintedByItsParameters() throws Exception {
		for (boolean chunked : new boolean[] { false, true }) {
			String key = UUID.randomUUID().toString();
			HttpResponse<String> first = send("POST", "/forms/payments", key, form("amount=10&currency=EUR"), chunked);
			assertThat(first.statusCode()).as("chunked: %s", chunked).isEqualTo(200);
			assertThat(first.body()).startsWith("paid 10 EUR, run 1 ");
			HttpResponse<String> retry = send("POST", "/forms/payments", key, form("amount=10&currency=EUR"), chunked);
			assertThat(retry.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
			assertThat(retry.body()).isEqualTo(first.body());
			// the same parameters in another order and encoding are the same form
			HttpResponse<String> reordered = send("POST", "/forms/payments", key,
					"currency=%45UR&_csrf=" + CSRF_TOKEN + "&amount=10", chunked);
			assertThat(reordered.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
			assertThat(reordered.body()).isEqualTo(first.body());
			HttpResponse<String> other = send("POST", "/forms/payments", key, form("amount=11&currency=EUR"), chunked);
			assertThat(other.statusCode()).as("chunked: %s", chunked).isEqualTo(422);
			assertThat(this.counter.count("payments", key)).isEqualTo(1);
		}
	}

	@Test
	void formPostHasOneFingerprintWhetherOrNotTheCsrfCheckReadItsBody() throws Exception {
		String key = UUID.randomUUID().toString();
		// with the token in a header, the CSRF check leaves the body alone
		HttpResponse<String> unread = send("POST", "/forms/payments?note=a", key, form("amount=10&currency=EUR"), false,
				"X-XSRF-TOKEN", CSRF_TOKEN);
		assertThat(unread.statusCode()).isEqualTo(200);
		HttpResponse<String> read = send("POST", "/forms/payments?note=a", key, form("amount=10&currency=EUR"), true);
		assertThat(read.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(read.body()).isEqualTo(unread.body());
		String otherKey = UUID.randomUUID().toString();
		HttpResponse<String> readFirst = send("POST", "/forms/payments", otherKey, form("amount=5&currency=EUR"),
				false);
		assertThat(readFirst.statusCode()).isEqualTo(200);
		HttpResponse<String> unreadLater = send("POST", "/forms/payments", otherKey, form("amount=5&currency=EUR"),
				true, "X-XSRF-TOKEN", CSRF_TOKEN);
		assertThat(unreadLater.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(send("POST", "/forms/payments", otherKey, form("amount=6&currency=EUR"), false, "X-XSRF-TOKEN",
				CSRF_TOKEN)
			.statusCode()).isEqualTo(422);
		assertThat(this.counter.count("payments", key)).isEqualTo(1);
		assertThat(this.counter.count("payments", otherKey)).isEqualTo(1);
	}

	@Test
	void formPostsWithTwoMaskingsOfOneCsrfTokenAreTheSameRequest() throws Exception {
		String key = UUID.randomUUID().toString();
		// each render of a page masks the session's token anew
		// (XorCsrfTokenRequestAttributeHandler)
		HttpResponse<String> first = send("POST", "/forms/masked/payments", key,
				"_csrf=" + masked(CSRF_TOKEN) + "&amount=10&currency=EUR", false);
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.body()).startsWith("paid 10 EUR, run 1 ");
		HttpResponse<String> retry = send("POST", "/forms/masked/payments", key,
				"amount=10&_csrf=" + masked(CSRF_TOKEN) + "&currency=EUR", true);
		assertThat(retry.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		HttpResponse<String> other = send("POST", "/forms/masked/payments", key,
				"_csrf=" + masked(CSRF_TOKEN) + "&amount=11&currency=EUR", false);
		assertThat(other.statusCode()).isEqualTo(422);
		// a wrong token is refused by the CSRF check, before the idempotency filter
		assertThat(send("POST", "/forms/masked/payments", key,
				"_csrf=" + masked("another-token") + "&amount=10&currency=EUR", false)
			.statusCode()).isEqualTo(403);
		assertThat(this.counter.count("payments", key)).isEqualTo(1);
	}

	// the token as XorCsrfTokenRequestAttributeHandler renders it: random bytes, then the
	// token's bytes XORed with them, in URL-safe Base64
	private static String masked(String token) {
		byte[] bytes = token.getBytes(StandardCharsets.UTF_8);
		byte[] masked = new byte[bytes.length * 2];
		byte[] random = new byte[bytes.length];
		new SecureRandom().nextBytes(random);
		for (int i = 0; i < bytes.length; i++) {
			masked[i] = random[i];
			masked[bytes.length + i] = (byte) (random[i] ^ bytes[i]);
		}
		return Base64.getUrlEncoder().withoutPadding().encodeToString(masked);
	}

	@Test
	void formPatchReadByTheFormContentFilterIsFingerprintedByItsParameters() throws Exception {
		for (boolean chunked : new boolean[] { false, true }) {
			String key = UUID.randomUUID().toString();
			HttpResponse<String> first = send("PATCH", "/forms/accounts/7", key, form("limit=100"), chunked);
			assertThat(first.statusCode()).as("chunked: %s", chunked).isEqualTo(200);
			assertThat(first.body()).startsWith("account 7 limit 100, run 1 ");
			HttpResponse<String> retry = send("PATCH", "/forms/accounts/7", key, form("limit=100"), chunked);
			assertThat(retry.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
			assertThat(retry.body()).isEqualTo(first.body());
			HttpResponse<String> other = send("PATCH", "/forms/accounts/7", key, form("limit=200"), chunked);
			assertThat(other.statusCode()).as("chunked: %s", chunked).isEqualTo(422);
			assertThat(this.counter.count("accounts", key)).isEqualTo(1);
		}
	}

	@Test
	void consumedFormOverTheLimitIsTooLarge() throws Exception {
		String large = form("note=" + "x".repeat(2000));
		for (boolean chunked : new boolean[] { false, true }) {
			String key = UUID.randomUUID().toString();
			assertThat(send("PATCH", "/forms/small", key, large, chunked).statusCode()).as("chunked: %s", chunked)
				.isEqualTo(413);
			assertThat(send("POST", "/forms/small", key, large, chunked).statusCode()).as("chunked: %s", chunked)
				.isEqualTo(413);
			assertThat(this.counter.count("small", key)).isZero();
			assertThat(send("PATCH", "/forms/small", key, form("note=short"), chunked).statusCode())
				.as("chunked: %s", chunked)
				.isEqualTo(200);
		}
	}

	@Test
	void consumedMultipartBodyIsRefusedBeforeTheHandlerRuns() throws Exception {
		String body = "--b\r\nContent-Disposition: form-data; name=\"_csrf\"\r\n\r\n" + CSRF_TOKEN
				+ "\r\n--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n"
				+ "Content-Type: text/plain\r\n\r\nhello\r\n--b--\r\n";
		for (boolean chunked : new boolean[] { false, true }) {
			String key = UUID.randomUUID().toString();
			HttpResponse<String> response = send("POST", "/forms/upload", key, body, chunked, "Content-Type",
					"multipart/form-data; boundary=b");
			// never fingerprinted as an empty body
			assertThat(response.statusCode()).as("chunked: %s", chunked).isEqualTo(500);
			assertThat(this.counter.count("upload", key)).isZero();
		}
	}

	private static String form(String parameters) {
		return "_csrf=" + CSRF_TOKEN + "&" + parameters;
	}

	private HttpResponse<String> send(String method, String path, String key, String body, boolean chunked,
			String... headers) throws IOException, InterruptedException {
		byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
		// a publisher of unknown length makes the client send the body chunked
		BodyPublisher publisher = chunked ? BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(bytes))
				: BodyPublishers.ofByteArray(bytes);
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.method(method, publisher)
			.header("Cookie", "XSRF-TOKEN=" + CSRF_TOKEN)
			.header("Idempotency-Key", key);
		boolean contentType = false;
		for (int i = 0; i < headers.length; i += 2) {
			request.header(headers[i], headers[i + 1]);
			contentType |= headers[i].equalsIgnoreCase("Content-Type");
		}
		if (!contentType) {
			request.header("Content-Type", FORM);
		}
		return this.client.send(request.build(), BodyHandlers.ofString());
	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@EnableWebSecurity
	@Import(FormController.class)
	static class FormApplication {

		@Bean
		HandlerCounter handlerCounter() {
			return new HandlerCounter();
		}

		/**
		 * CSRF protection with the token in a cookie and, as in a rendered form, in the
		 * {@code _csrf} parameter (or the {@code X-XSRF-TOKEN} header).
		 * @param http the security builder
		 * @return the filter chain
		 * @throws Exception if the chain cannot be built
		 */
		/**
		 * Under {@code /forms/masked/}, the default request handler, which masks the
		 * token differently for every page it renders.
		 * @param http the security builder
		 * @return the filter chain
		 * @throws Exception if the chain cannot be built
		 */
		@Bean
		@Order(1)
		SecurityFilterChain maskedTokenFilterChain(HttpSecurity http) throws Exception {
			http.securityMatcher("/forms/masked/**")
				.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
				.csrf((csrf) -> csrf.csrfTokenRepository(CookieCsrfTokenRepository.withHttpOnlyFalse()));
			return http.build();
		}

		@Bean
		@Order(2)
		SecurityFilterChain securityFilterChain(HttpSecurity http) throws Exception {
			http.authorizeHttpRequests((requests) -> requests.anyRequest().permitAll())
				.csrf((csrf) -> csrf.csrfTokenRepository(CookieCsrfTokenRepository.withHttpOnlyFalse())
					.csrfTokenRequestHandler(new CsrfTokenRequestAttributeHandler()));
			return http.build();
		}

		/**
		 * Registers Spring Security's filter chain where Spring Boot would: at order
		 * -100, before the idempotency filter.
		 * @return the registration
		 */
		@Bean
		DelegatingFilterProxyRegistrationBean securityFilterChainRegistration() {
			DelegatingFilterProxyRegistrationBean registration = new DelegatingFilterProxyRegistrationBean(
					"springSecurityFilterChain");
			registration.setOrder(-100);
			return registration;
		}

	}

	@RestController
	static class FormController {

		private final HandlerCounter counter;

		FormController(HandlerCounter counter) {
			this.counter = counter;
		}

		@PostMapping({ "/forms/payments", "/forms/masked/payments" })
		@Idempotent
		String pay(@RequestParam int amount, @RequestParam String currency, HttpServletRequest request) {
			return "paid " + amount + " " + currency + ", run " + this.counter.increment("payments", request) + " "
					+ UUID.randomUUID();
		}

		@PatchMapping("/forms/accounts/{id}")
		@Idempotent
		String update(@PathVariable int id, @RequestParam int limit, HttpServletRequest request) {
			return "account " + id + " limit " + limit + ", run " + this.counter.increment("accounts", request) + " "
					+ UUID.randomUUID();
		}

		@PostMapping("/forms/upload")
		@Idempotent
		String upload(HttpServletRequest request) {
			return "uploaded, run " + this.counter.increment("upload", request);
		}

		@RequestMapping(path = "/forms/small", method = { RequestMethod.POST, RequestMethod.PATCH })
		@Idempotent("small")
		String small(@RequestParam String note, HttpServletRequest request) {
			return "small " + note.length() + ", run " + this.counter.increment("small", request);
		}

	}

}
