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

package dev.idempotency.spring.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import dev.idempotency.spring.client.RetryTestServer.Received;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.http.client.SimpleClientHttpRequestFactory;
import org.springframework.web.client.ResourceAccessException;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Tests for {@link IdempotentRetryInterceptor}, through a {@link RestClient} against a
 * real local HTTP server.
 *
 * @author Idempotency contributors
 */
class IdempotentRetryInterceptorTests {

	private static final String BODY = "{\"amount\":\"10.00\",\"currency\":\"EUR\"}";

	private final RetryTestServer server = RetryTestServer.start();

	private final FakeTime time = new FakeTime();

	private final IdempotentRetryInterceptor interceptor = new IdempotentRetryInterceptor();

	private final JdkClientHttpRequestFactory requestFactory = new JdkClientHttpRequestFactory(
			HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build());

	private final List<ClientHttpRequestInterceptor> innerInterceptors = new ArrayList<>();

	IdempotentRetryInterceptorTests() {
		this.time.applyTo(this.interceptor);
		this.interceptor.setRandom(new Random(42));
	}

	@AfterEach
	void stopServer() {
		this.server.close();
	}

	@Test
	void connectionResetsAreRetriedWithOneKey() {
		this.server.replyInOrder(RetryTestServer.reset(), RetryTestServer.reset());
		Result result = post();
		assertThat(result).isEqualTo(new Result(201, "created 1"));
		List<Received> received = this.server.received();
		assertThat(received).hasSize(3);
		String key = singleKey(received);
		assertThat(UUID.fromString(key).version()).isEqualTo(4);
		assertThat(received).extracting(Received::body).containsOnly(BODY);
		assertThat(this.server.executions()).isOne();
	}

	@Test
	void worksWithTheSimpleRequestFactory() {
		RestClient client = RestClient.builder()
			.requestFactory(new SimpleClientHttpRequestFactory())
			.requestInterceptor(this.interceptor)
			.build();
		this.server.replyInOrder(RetryTestServer.reset(), RetryTestServer.status(503));
		Result result = exchange(client.post().uri(this.server.uri("/payments")).body(BODY));
		assertThat(result).isEqualTo(new Result(201, "created 1"));
		assertThat(this.server.received()).hasSize(3).extracting(Received::body).containsOnly(BODY);
		singleKey(this.server.received());
	}

	@Test
	void worksWithRestTemplate() {
		RestTemplate restTemplate = new RestTemplate(this.requestFactory);
		restTemplate.getInterceptors().add(this.interceptor);
		this.server.replyInOrder(RetryTestServer.status(503), RetryTestServer.reset());
		ResponseEntity<String> response = restTemplate.postForEntity(this.server.uri("/payments"), BODY, String.class);
		assertThat(response.getStatusCode().value()).isEqualTo(201);
		assertThat(response.getBody()).isEqualTo("created 1");
		assertThat(this.server.received()).hasSize(3);
		singleKey(this.server.received());
	}

	@Test
	void readTimeOutIsRetriedWithTheSameKey() {
		this.requestFactory.setReadTimeout(Duration.ofMillis(200));
		this.server.replyInOrder(RetryTestServer.stall(Duration.ofSeconds(1)));
		assertThat(post()).isEqualTo(new Result(201, "created 1"));
		assertThat(this.server.received()).hasSize(2);
		singleKey(this.server.received());
	}

	@Test
	void refusedConnectionIsRetriedUntilAttemptsRunOut() throws IOException {
		URI closed;
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			closed = URI.create("http://127.0.0.1:" + socket.getLocalPort() + "/payments");
		}
		assertThatExceptionOfType(ResourceAccessException.class)
			.isThrownBy(() -> client().post().uri(closed).body(BODY).retrieve().toBodilessEntity())
			.withCauseInstanceOf(ConnectException.class);
		assertThat(this.time.sleeps()).hasSize(4);
	}

	@Test
	void conflictIsRetriedAfterRetryAfterSeconds() {
		this.server.replyInOrder(RetryTestServer.inProgress("Retry-After", "1"));
		assertThat(post()).isEqualTo(new Result(201, "created 1"));
		assertThat(this.time.sleeps()).singleElement()
			.satisfies((sleep) -> assertThat(sleep).isGreaterThanOrEqualTo(Duration.ofSeconds(1)))
			.isEqualTo(Duration.ofSeconds(1));
		assertThat(this.server.received()).hasSize(2);
		singleKey(this.server.received());
		assertThat(this.server.executions()).isOne();
	}

	@Test
	void serviceUnavailableIsRetriedAfterRetryAfterDate() {
		String date = DateTimeFormatter.RFC_1123_DATE_TIME
			.format(this.time.now().plusSeconds(3).atOffset(ZoneOffset.UTC));
		this.server.replyInOrder(RetryTestServer.status(503, "Retry-After", date));
		assertThat(post()).isEqualTo(new Result(201, "created 1"));
		assertThat(this.time.sleeps()).containsExactly(Duration.ofSeconds(3));
		singleKey(this.server.received());
	}

	@Test
	void retryAfterDateInThePastRetriesAtOnce() {
		String date = DateTimeFormatter.RFC_1123_DATE_TIME
			.format(this.time.now().minusSeconds(3).atOffset(ZoneOffset.UTC));
		this.server.replyInOrder(RetryTestServer.status(503, "Retry-After", date));
		assertThat(post()).isEqualTo(new Result(201, "created 1"));
		assertThat(this.time.sleeps()).isEmpty();
		assertThat(this.server.received()).hasSize(2);
	}

	@Test
	void unreadableRetryAfterFallsBackToBackOff() {
		this.server.replyInOrder(RetryTestServer.status(503, "Retry-After", "soon"));
		assertThat(post()).isEqualTo(new Result(201, "created 1"));
		assertThat(this.time.sleeps()).singleElement()
			.satisfies((sleep) -> assertThat(sleep).isBetween(Duration.ZERO, Duration.ofMillis(100)));
	}

	@Test
	void retryAfterBeyondTheRemainingTimeBudgetReturnsTheResponseAtOnce() {
		this.server.replyInOrder(RetryTestServer.status(503, "Retry-After", "86400"));
		long start = System.nanoTime();
		assertThat(post()).isEqualTo(new Result(503, "status 503"));
		assertThat(this.time.sleeps()).isEmpty();
		assertThat(this.server.received()).hasSize(1);
		this.interceptor.setSleeper((duration) -> TimeUnit.NANOSECONDS.sleep(duration.toNanos()));
		this.interceptor.setNanoTimeSource(System::nanoTime);
		this.server.replyInOrder(RetryTestServer.status(503, "Retry-After", "86400"));
		assertThat(post()).isEqualTo(new Result(503, "status 503"));
		// with real time: no wait out of the 30 s
		// budget (generous bound for a busy machine)
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(20));
	}

	@Test
	void retryAfterWithinTheBudgetIsWaitedThenOneBeyondItIsReturned() {
		this.server.replyInOrder(RetryTestServer.status(503, "Retry-After", "20"),
				RetryTestServer.status(503, "Retry-After", "20"));
		assertThat(post()).isEqualTo(new Result(503, "status 503"));
		assertThat(this.time.sleeps()).containsExactly(Duration.ofSeconds(20));
		assertThat(this.server.received()).hasSize(2);
	}

	@Test
	void conflictThatIsNotRequestInProgressIsNotRetried() {
		this.server.replyAlways(RetryTestServer.status(409, "Retry-After", "1"));
		assertThat(post()).isEqualTo(new Result(409, "status 409"));
		String otherType = "https://api.example.com/problems/insufficient-funds";
		this.server.replyAlways(RetryTestServer.problem(409, otherType, "Retry-After", "1"));
		assertThat(post()).isEqualTo(new Result(409, RetryTestServer.problemBody(409, otherType)));
		String lookalike = "https://api.example.com/problems/request-in-progress-not";
		this.server.replyAlways(RetryTestServer.problem(409, lookalike));
		assertThat(post()).isEqualTo(new Result(409, RetryTestServer.problemBody(409, lookalike)));
		assertThat(this.server.received()).hasSize(3);
		assertThat(this.time.sleeps()).isEmpty();
	}

	@Test
	void requestInProgressIsRetriedWhateverTheProblemTypeBase() {
		this.server.replyInOrder(RetryTestServer.problem(409, "urn:example:problems/request-in-progress"));
		assertThat(post()).isEqualTo(new Result(201, "created 1"));
		assertThat(this.server.received()).hasSize(2);
	}

	@Test
	void conflictWithALargeBodyIsReturnedWhole() {
		String body = "x".repeat(100_000);
		this.server.replyAlways((exchange) -> {
			byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
			exchange.sendResponseHeaders(409, bytes.length);
			exchange.getResponseBody().write(bytes);
			exchange.close();
		});
		assertThat(post()).isEqualTo(new Result(409, body));
		assertThat(this.server.received()).hasSize(1);
	}

	@ParameterizedTest
	@ValueSource(ints = { 409, 429, 502, 503, 504 })
	void transientStatusIsRetriedWithTheSameKey(int status) {
		RetryTestServer.Reply reply = (status == 409) ? RetryTestServer.inProgress() : RetryTestServer.status(status);
		this.server.replyInOrder(reply, reply);
		assertThat(post()).isEqualTo(new Result(201, "created 1"));
		List<Received> received = this.server.received();
		assertThat(received).hasSize(3);
		singleKey(received);
		assertThat(received).extracting(Received::body).containsOnly(BODY);
		assertThat(this.server.executions()).isOne();
		assertThat(this.time.sleeps()).hasSize(2);
	}

	@ParameterizedTest
	@ValueSource(ints = { 400, 401, 403, 404, 422, 500 })
	void otherStatusIsNotRetried(int status) {
		this.server.replyAlways(RetryTestServer.status(status));
		assertThat(post()).isEqualTo(new Result(status, "status " + status));
		assertThat(this.server.received()).hasSize(1);
		assertThat(this.time.sleeps()).isEmpty();
	}

	@Test
	void replayedResponseIsNotRetried() {
		this.server.replyAlways(RetryTestServer.status(409, "Idempotent-Replayed", "true"));
		assertThat(post()).isEqualTo(new Result(409, "status 409"));
		assertThat(this.server.received()).hasSize(1);
	}

	@Test
	void retryStatusesAreConfigurable() {
		this.interceptor.setRetryStatuses(Set.of(500));
		this.server.replyInOrder(RetryTestServer.status(500));
		assertThat(post()).isEqualTo(new Result(201, "created 1"));
		assertThat(this.server.received()).hasSize(2);
		this.server.replyAlways(RetryTestServer.status(503));
		assertThat(post()).isEqualTo(new Result(503, "status 503"));
		assertThat(this.server.received()).hasSize(3);
	}

	@Test
	void lastResponseIsReturnedWhenAttemptsRunOut() {
		this.server.replyAlways(RetryTestServer.status(503));
		assertThat(post()).isEqualTo(new Result(503, "status 503"));
		assertThat(this.server.received()).hasSize(5);
		singleKey(this.server.received());
		assertThat(this.time.sleeps()).hasSize(4);
	}

	@Test
	void maxAttemptsIsConfigurable() {
		this.interceptor.setMaxAttempts(2);
		this.server.replyAlways(RetryTestServer.status(503));
		assertThat(post().status()).isEqualTo(503);
		assertThat(this.server.received()).hasSize(2);
		this.interceptor.setMaxAttempts(1);
		assertThat(post().status()).isEqualTo(503);
		assertThat(this.server.received()).hasSize(3);
	}

	@Test
	void timeBudgetStopsRetriesAndReturnsTheLastResponse() {
		this.interceptor.setMaxAttempts(100);
		this.interceptor.setMaxElapsed(Duration.ofMillis(2500));
		this.server.replyAlways(RetryTestServer.inProgress("Retry-After", "1"));
		assertThat(post())
			.isEqualTo(new Result(409, RetryTestServer.problemBody(409, RetryTestServer.IN_PROGRESS_TYPE)));
		// waits at 0 s and 1 s; at 2 s a 1 s wait would outlast the budget
		assertThat(this.time.sleeps()).containsExactly(Duration.ofSeconds(1), Duration.ofSeconds(1));
		assertThat(this.server.received()).hasSize(3);
		singleKey(this.server.received());
	}

	@Test
	void timeBudgetStopsRetriesAndThrowsTheLastFailure() {
		this.interceptor.setMaxAttempts(100);
		this.interceptor.setMaxElapsed(Duration.ofSeconds(3));
		// each attempt takes one second
		this.server.onRequest(() -> this.time.advance(Duration.ofSeconds(1)));
		this.server.replyAlways(RetryTestServer.reset());
		assertThatExceptionOfType(ResourceAccessException.class).isThrownBy(this::post)
			.withCauseInstanceOf(IOException.class);
		// attempts start at 0 s, about 1 s and about 2 s; the third ends past the budget
		assertThat(this.server.received()).hasSize(3);
		assertThat(this.time.sleeps()).hasSize(2);
		assertThat(this.time.nanoTime()).isGreaterThanOrEqualTo(Duration.ofSeconds(3).toNanos());
	}

	@Test
	void requestWithKeyKeepsIt() {
		this.server.replyInOrder(RetryTestServer.status(503));
		Result result = exchange(client().post()
			.uri(this.server.uri("/payments"))
			.header("Idempotency-Key", "order-42")
			.contentType(MediaType.APPLICATION_JSON)
			.body(BODY));
		assertThat(result.status()).isEqualTo(201);
		assertThat(this.server.received()).hasSize(2)
			.allSatisfy((request) -> assertThat(request.keys()).containsExactly("order-42"));
	}

	@ParameterizedTest
	@ValueSource(strings = { "GET", "PUT", "DELETE" })
	void otherMethodIsNeitherKeyedNorRetried(String method) {
		this.server.replyAlways(RetryTestServer.status(503));
		Result result = exchange(client().method(HttpMethod.valueOf(method)).uri(this.server.uri("/payments")));
		assertThat(result.status()).isEqualTo(503);
		assertThat(this.server.received()).singleElement().satisfies((request) -> assertThat(request.keys()).isNull());
		assertThat(this.time.sleeps()).isEmpty();
	}

	@Test
	void patchIsKeyedAndRetried() {
		this.server.replyInOrder(RetryTestServer.status(502));
		Result result = exchange(client().patch().uri(this.server.uri("/payments/1")).body(BODY));
		assertThat(result.status()).isEqualTo(201);
		assertThat(this.server.received()).hasSize(2).extracting(Received::method).containsOnly("PATCH");
		singleKey(this.server.received());
	}

	@Test
	void methodsAreConfigurable() {
		this.interceptor.setMethods(Set.of(HttpMethod.PUT));
		this.server.replyInOrder(RetryTestServer.status(503));
		assertThat(exchange(client().put().uri(this.server.uri("/payments/1")).body(BODY)).status()).isEqualTo(201);
		assertThat(this.server.received()).hasSize(2);
		singleKey(this.server.received());
		this.server.replyAlways(RetryTestServer.status(503));
		assertThat(post().status()).isEqualTo(503);
		assertThat(this.server.received()).hasSize(3);
		assertThat(this.server.received().get(2).keys()).isNull();
	}

	@Test
	void keyHeaderIsConfigurable() {
		this.interceptor.setKeyHeader("X-Request-Key");
		this.server.replyInOrder(RetryTestServer.status(503));
		assertThat(post().status()).isEqualTo(201);
		// the server reads Idempotency-Key only
		assertThat(this.server.received()).allSatisfy((request) -> assertThat(request.keys()).isNull());
	}

	@Test
	void keySupplierIsConfigurable() {
		AtomicInteger keys = new AtomicInteger();
		this.interceptor.setKeySupplier(() -> "key-" + keys.incrementAndGet());
		this.server.replyInOrder(RetryTestServer.status(503));
		post();
		post();
		assertThat(this.server.received()).extracting(Received::key).containsExactly("key-1", "key-1", "key-2");
	}

	@Test
	void invalidSuppliedKeyFailsBeforeSending() {
		this.interceptor.setKeySupplier(() -> "not a key");
		assertThatIllegalStateException().isThrownBy(this::post).withMessageContaining("invalid idempotency key");
		assertThat(this.server.received()).isEmpty();
	}

	@Test
	void fullJitterDelaysStayWithinTheCap() {
		this.interceptor.setMaxAttempts(8);
		this.interceptor.setInitialBackoff(Duration.ofMillis(100));
		this.interceptor.setMaxBackoff(Duration.ofSeconds(1));
		this.server.replyAlways(RetryTestServer.status(503));
		List<Duration> caps = List.of(Duration.ofMillis(100), Duration.ofMillis(200), Duration.ofMillis(400),
				Duration.ofMillis(800), Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(1));
		int rounds = 10;
		for (int i = 0; i < rounds; i++) {
			assertThat(post().status()).isEqualTo(503);
		}
		List<Duration> sleeps = this.time.sleeps();
		assertThat(sleeps).hasSize(rounds * caps.size());
		int belowHalf = 0;
		for (int i = 0; i < sleeps.size(); i++) {
			Duration cap = caps.get(i % caps.size());
			assertThat(sleeps.get(i)).isBetween(Duration.ZERO, cap);
			if (sleeps.get(i).compareTo(cap.dividedBy(2)) < 0) {
				belowHalf++;
			}
		}
		// full jitter spreads the delays over the whole range, not near the cap
		assertThat(belowHalf).isBetween(sleeps.size() / 4, sleeps.size() * 3 / 4);
	}

	@Test
	void retriedResponsesAreClosed() {
		List<ClosingResponse> responses = Collections.synchronizedList(new ArrayList<>());
		this.innerInterceptors.add((request, body, execution) -> {
			ClosingResponse response = new ClosingResponse(execution.execute(request, body));
			responses.add(response);
			return response;
		});
		this.server.replyInOrder(RetryTestServer.status(503), RetryTestServer.status(502));
		List<Boolean> closedWhenDelivered = client().post()
			.uri(this.server.uri("/payments"))
			.body(BODY)
			.exchange((request, response) -> responses.stream().map((each) -> each.closed).toList());
		assertThat(closedWhenDelivered).containsExactly(true, true, false);
	}

	@Test
	void interruptedWaitStopsRetries() {
		this.interceptor.setSleeper((duration) -> {
			throw new InterruptedException();
		});
		this.server.replyAlways(RetryTestServer.status(503));
		try {
			assertThatExceptionOfType(ResourceAccessException.class).isThrownBy(this::post)
				.withCauseInstanceOf(InterruptedIOException.class);
			assertThat(Thread.currentThread().isInterrupted()).isTrue();
		}
		finally {
			Thread.interrupted();
		}
		assertThat(this.server.received()).hasSize(1);
	}

	@Test
	void concurrentRequestsEachKeepTheirOwnKey() throws Exception {
		IdempotentRetryInterceptor shared = new IdempotentRetryInterceptor();
		shared.setInitialBackoff(Duration.ofMillis(1));
		Set<String> failedOnce = Collections.newSetFromMap(new ConcurrentHashMap<>());
		this.server
			.plan((request) -> failedOnce.add(request.key()) ? RetryTestServer.status(503) : this.server.success());
		RestClient client = RestClient.builder().requestFactory(this.requestFactory).requestInterceptor(shared).build();
		int threads = 8;
		int perThread = 10;
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		try {
			List<Future<Integer>> futures = new ArrayList<>();
			for (int i = 0; i < threads * perThread; i++) {
				futures.add(executor
					.submit(() -> exchange(client.post().uri(this.server.uri("/payments")).body(BODY)).status()));
			}
			for (Future<Integer> future : futures) {
				assertThat(future.get(30, TimeUnit.SECONDS)).isEqualTo(201);
			}
		}
		finally {
			executor.shutdownNow();
		}
		Map<String, Long> attemptsPerKey = this.server.received()
			.stream()
			.collect(Collectors.groupingBy(Received::key, Collectors.counting()));
		assertThat(attemptsPerKey).hasSize(threads * perThread)
			.allSatisfy((key, attempts) -> assertThat(attempts).isEqualTo(2));
		assertThat(this.server.executions()).isEqualTo(threads * perThread);
	}

	@Test
	void settersRejectInvalidValues() {
		assertThatIllegalArgumentException().isThrownBy(() -> this.interceptor.setMaxAttempts(0));
		assertThatIllegalArgumentException().isThrownBy(() -> this.interceptor.setInitialBackoff(Duration.ZERO));
		assertThatIllegalArgumentException().isThrownBy(() -> this.interceptor.setMaxBackoff(Duration.ofMillis(-1)));
		assertThatIllegalArgumentException().isThrownBy(() -> this.interceptor.setMaxElapsed(Duration.ZERO));
		assertThatIllegalArgumentException().isThrownBy(() -> this.interceptor.setRetryStatuses(Set.of(600)));
		assertThatIllegalArgumentException().isThrownBy(() -> this.interceptor.setKeyHeader(" "));
	}

	@Test
	void defaults() {
		IdempotentRetryInterceptor defaults = new IdempotentRetryInterceptor();
		assertThat(defaults.getKeyHeader()).isEqualTo("Idempotency-Key");
		assertThat(defaults.getMethods()).containsExactlyInAnyOrder(HttpMethod.POST, HttpMethod.PATCH);
		assertThat(defaults.getRetryStatuses()).containsExactlyInAnyOrder(409, 429, 502, 503, 504);
		assertThat(defaults.getMaxAttempts()).isEqualTo(5);
		assertThat(defaults.getInitialBackoff()).isEqualTo(Duration.ofMillis(100));
		assertThat(defaults.getMaxBackoff()).isEqualTo(Duration.ofSeconds(5));
		assertThat(defaults.getMaxElapsed()).isEqualTo(Duration.ofSeconds(30));
	}

	private RestClient client() {
		RestClient.Builder builder = RestClient.builder()
			.requestFactory(this.requestFactory)
			.requestInterceptor(this.interceptor);
		this.innerInterceptors.forEach(builder::requestInterceptor);
		return builder.build();
	}

	private Result post() {
		return exchange(
				client().post().uri(this.server.uri("/payments")).contentType(MediaType.APPLICATION_JSON).body(BODY));
	}

	private static Result exchange(RestClient.RequestHeadersSpec<?> spec) {
		return spec.exchangeForRequiredValue((request, response) -> new Result(response.getStatusCode().value(),
				new String(response.getBody().readAllBytes(), StandardCharsets.UTF_8)));
	}

	private static String singleKey(List<Received> received) {
		assertThat(received).isNotEmpty().allSatisfy((request) -> assertThat(request.keys()).hasSize(1));
		Set<@Nullable String> keys = received.stream().map(Received::key).collect(Collectors.toSet());
		assertThat(keys).hasSize(1).doesNotContainNull();
		return keys.iterator().next();
	}

	record Result(int status, String body) {
	}

	/**
	 * Response that remembers whether it was closed.
	 */
	private static final class ClosingResponse implements ClientHttpResponse {

		private final ClientHttpResponse delegate;

		private volatile boolean closed;

		ClosingResponse(ClientHttpResponse delegate) {
			this.delegate = delegate;
		}

		@Override
		public HttpStatusCode getStatusCode() throws IOException {
			return this.delegate.getStatusCode();
		}

		@Override
		public String getStatusText() throws IOException {
			return this.delegate.getStatusText();
		}

		@Override
		public HttpHeaders getHeaders() {
			return this.delegate.getHeaders();
		}

		@Override
		public InputStream getBody() throws IOException {
			return this.delegate.getBody();
		}

		@Override
		public void close() {
			this.closed = true;
			this.delegate.close();
		}

	}

}
