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
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
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
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import ch.qos.logback.core.read.ListAppender;
import dev.idempotency.spring.client.RetryTestServer.Received;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ClientHttpConnector;
import org.springframework.http.client.reactive.JdkClientHttpConnector;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientRequestException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Tests for {@link IdempotentRetryFilter}, through a {@link WebClient} on Reactor Netty
 * against a real local HTTP server: every row of the retry rules of docs/client.md, as
 * {@link IdempotentRetryInterceptorTests} does for {@code RestClient}, and what is
 * particular to a reactive client (cancellation, bodies released, request bodies written
 * again). Time is faked ({@link FakeTime}): waits are recorded, not waited. Netty's leak
 * detector watches every buffer, at its paranoid level.
 *
 * @author Idempotency contributors
 */
class IdempotentRetryFilterTests {

	private static final String BODY = "{\"amount\":\"10.00\",\"currency\":\"EUR\"}";

	// generous: only a broken test waits this long
	private static final Duration TIMEOUT = Duration.ofSeconds(30);

	private static final List<String> leaks = new CopyOnWriteArrayList<>();

	private static final AppenderBase<ILoggingEvent> leakAppender = new AppenderBase<>() {

		@Override
		protected void append(ILoggingEvent event) {
			if (event.getFormattedMessage().contains("LEAK")) {
				leaks.add(event.getFormattedMessage());
			}
		}

	};

	private final RetryTestServer server = RetryTestServer.start();

	private final FakeTime time = new FakeTime();

	private final IdempotentRetryFilter filter = new IdempotentRetryFilter();

	private final ConnectionProvider connections = ConnectionProvider.builder("retry-filter-tests").build();

	private final List<ExchangeFilterFunction> innerFilters = new ArrayList<>();

	private ClientHttpConnector connector = new ReactorClientHttpConnector(HttpClient.create(this.connections));

	IdempotentRetryFilterTests() {
		this.time.applyTo(this.filter);
		this.filter.setRandom(new Random(42));
	}

	@BeforeAll
	static void detectEveryLeak() {
		ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
		leakAppender.start();
		((Logger) LoggerFactory.getLogger(ResourceLeakDetector.class)).addAppender(leakAppender);
	}

	@AfterAll
	static void noBufferLeaked() throws InterruptedException {
		try {
			// a leak is reported when a later allocation finds the lost buffer collected
			for (int round = 0; round < 5; round++) {
				System.gc();
				Thread.sleep(100);
				for (int i = 0; i < 100; i++) {
					ByteBuf buffer = PooledByteBufAllocator.DEFAULT.buffer(64);
					buffer.release();
				}
			}
			assertThat(leaks).as("buffers leaked").isEmpty();
		}
		finally {
			((Logger) LoggerFactory.getLogger(ResourceLeakDetector.class)).detachAppender(leakAppender);
			ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.SIMPLE);
		}
	}

	@AfterEach
	void stopServer() {
		this.server.close();
		this.connections.dispose();
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
		assertThat(this.time.sleeps()).hasSize(2);
	}

	@Test
	void worksWithTheJdkConnector() {
		this.connector = new JdkClientHttpConnector(
				java.net.http.HttpClient.newBuilder().version(java.net.http.HttpClient.Version.HTTP_1_1).build());
		this.server.replyInOrder(RetryTestServer.reset(), RetryTestServer.status(503));
		assertThat(post()).isEqualTo(new Result(201, "created 1"));
		assertThat(this.server.received()).hasSize(3).extracting(Received::body).containsOnly(BODY);
		singleKey(this.server.received());
	}

	@Test
	void responseTimeOutIsRetriedWithTheSameKey() {
		this.connector = new ReactorClientHttpConnector(
				HttpClient.create(this.connections).responseTimeout(Duration.ofMillis(200)));
		this.server.replyInOrder(RetryTestServer.stall(Duration.ofSeconds(1)));
		assertThat(post()).isEqualTo(new Result(201, "created 1"));
		assertThat(this.server.received()).hasSize(2);
		singleKey(this.server.received());
	}

	@Test
	void aBodyThatFailsIsHandedToTheCallerWithoutARetry() {
		// WebClient wraps the body's own failure as it wraps a connection's: it would
		// fail
		// the same way on every attempt
		assertBodyFailureIsNotRetried(new IllegalStateException("the body failed"));
	}

	@Test
	void aBodyThatFailsWithAnIOExceptionIsHandedToTheCallerWithoutARetry() {
		// a file streamed as the body that cannot be read fails as a connection would,
		// with an IOException, but fails again on every attempt
		assertBodyFailureIsNotRetried(new IOException("the file is gone"));
	}

	private void assertBodyFailureIsNotRetried(Exception failure) {
		assertThatExceptionOfType(WebClientRequestException.class)
			.isThrownBy(() -> client().post()
				.uri(this.server.uri("/payments"))
				.contentType(MediaType.TEXT_PLAIN)
				.body(Flux.<String>error(failure), String.class)
				.retrieve()
				.toBodilessEntity()
				.block(TIMEOUT))
			.withRootCauseInstanceOf(failure.getClass());
		assertThat(this.time.sleeps()).isEmpty();
		assertThat(this.server.executions()).isZero();
	}

	@Test
	void aBodyThatCanBeReadOnlyOnceFailsWithoutRetryingAfterItsFirstAttempt() {
		// the first attempt meets a 503; the second cannot subscribe to the body again,
		// and that failure is not a connection's: the caller gets it without more
		// attempts
		this.server.replyInOrder(RetryTestServer.status(503));
		Sinks.Many<String> sink = Sinks.many().unicast().onBackpressureBuffer();
		sink.tryEmitNext(BODY);
		sink.tryEmitComplete();
		assertThatExceptionOfType(WebClientRequestException.class).isThrownBy(() -> client().post()
			.uri(this.server.uri("/payments"))
			.contentType(MediaType.TEXT_PLAIN)
			.body(sink.asFlux(), String.class)
			.retrieve()
			.toBodilessEntity()
			.block(TIMEOUT));
		assertThat(this.time.sleeps()).hasSize(1);
		assertThat(this.server.received()).hasSize(1);
	}

	@Test
	void refusedConnectionIsRetriedUntilAttemptsRunOut() throws IOException {
		URI closed;
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			closed = URI.create("http://127.0.0.1:" + socket.getLocalPort() + "/payments");
		}
		assertThatExceptionOfType(WebClientRequestException.class)
			.isThrownBy(() -> client().post().uri(closed).bodyValue(BODY).retrieve().toBodilessEntity().block(TIMEOUT))
			.withCauseInstanceOf(ConnectException.class);
		assertThat(this.time.sleeps()).hasSize(4);
	}

	@Test
	void conflictIsRetriedAfterRetryAfterSeconds() {
		this.server.replyInOrder(RetryTestServer.inProgress("Retry-After", "1"));
		assertThat(post()).isEqualTo(new Result(201, "created 1"));
		assertThat(this.time.sleeps()).containsExactly(Duration.ofSeconds(1));
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
		assertThat(post()).isEqualTo(new Result(503, "status 503"));
		assertThat(this.time.sleeps()).isEmpty();
		assertThat(this.server.received()).hasSize(1);
		this.filter.setScheduler(Schedulers.parallel());
		this.filter.setNanoTimeSource(System::nanoTime);
		long start = System.nanoTime();
		this.server.replyInOrder(RetryTestServer.status(503, "Retry-After", "86400"));
		assertThat(post()).isEqualTo(new Result(503, "status 503"));
		// with real timers: no wait out of the 30 s
		// budget (generous bound for a busy machine)
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(20));
		assertThat(this.server.received()).hasSize(2);
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
	void retryAfterIsNotLimitedByTheMaximumBackOff() {
		this.filter.setMaxBackoff(Duration.ofMillis(500));
		this.server.replyInOrder(RetryTestServer.status(429, "Retry-After", "2"));
		assertThat(post()).isEqualTo(new Result(201, "created 1"));
		assertThat(this.time.sleeps()).containsExactly(Duration.ofSeconds(2));
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
		this.server.replyAlways((exchange) -> {
			exchange.sendResponseHeaders(409, -1);
			exchange.close();
		});
		assertThat(post()).isEqualTo(new Result(409, ""));
		assertThat(this.server.received()).hasSize(4);
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
		StringBuilder body = new StringBuilder();
		for (int i = 0; body.length() < 100_000; i++) {
			body.append(i).append(' ');
		}
		this.server.replyAlways((exchange) -> {
			byte[] bytes = body.toString().getBytes(StandardCharsets.UTF_8);
			exchange.sendResponseHeaders(409, bytes.length);
			exchange.getResponseBody().write(bytes);
			exchange.close();
		});
		assertThat(post()).isEqualTo(new Result(409, body.toString()));
		assertThat(this.server.received()).hasSize(1);
	}

	@Test
	void requestInProgressBeyondTheBudgetIsReturnedWhole() {
		this.server.replyAlways(RetryTestServer.inProgress("Retry-After", "86400"));
		assertThat(post())
			.isEqualTo(new Result(409, RetryTestServer.problemBody(409, RetryTestServer.IN_PROGRESS_TYPE)));
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
	@ValueSource(ints = { 200, 302, 400, 401, 403, 404, 422, 500 })
	void otherStatusIsNotRetried(int status) {
		this.server.replyAlways(RetryTestServer.status(status));
		Result result = post();
		assertThat(result.status()).isEqualTo(status);
		assertThat(this.server.received()).hasSize(1);
		assertThat(this.time.sleeps()).isEmpty();
	}

	@ParameterizedTest
	@ValueSource(ints = { 409, 503 })
	void replayedResponseIsNotRetried(int status) {
		RetryTestServer.Reply reply = (status == 409) ? RetryTestServer.inProgress("Idempotent-Replayed", "true")
				: RetryTestServer.status(status, "Idempotent-Replayed", "true");
		this.server.replyAlways(reply);
		assertThat(post().status()).isEqualTo(status);
		assertThat(this.server.received()).hasSize(1);
	}

	@Test
	void retryStatusesAreConfigurable() {
		this.filter.setRetryStatuses(Set.of(500));
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
		this.filter.setMaxAttempts(2);
		this.server.replyAlways(RetryTestServer.status(503));
		assertThat(post().status()).isEqualTo(503);
		assertThat(this.server.received()).hasSize(2);
		this.filter.setMaxAttempts(1);
		assertThat(post().status()).isEqualTo(503);
		assertThat(this.server.received()).hasSize(3);
		assertThat(this.server.received().get(2).keys()).hasSize(1);
	}

	@Test
	void timeBudgetStopsRetriesAndReturnsTheLastResponse() {
		this.filter.setMaxAttempts(100);
		this.filter.setMaxElapsed(Duration.ofMillis(2500));
		this.server.replyAlways(RetryTestServer.inProgress("Retry-After", "1"));
		assertThat(post())
			.isEqualTo(new Result(409, RetryTestServer.problemBody(409, RetryTestServer.IN_PROGRESS_TYPE)));
		// waits at 0 s and 1 s; at 2 s a 1 s wait would outlast the budget
		assertThat(this.time.sleeps()).containsExactly(Duration.ofSeconds(1), Duration.ofSeconds(1));
		assertThat(this.server.received()).hasSize(3);
		singleKey(this.server.received());
	}

	@Test
	void timeBudgetStopsRetriesAndFailsWithTheLastFailure() {
		this.filter.setMaxAttempts(100);
		this.filter.setMaxElapsed(Duration.ofSeconds(3));
		// each attempt takes one second
		this.server.onRequest(() -> this.time.advance(Duration.ofSeconds(1)));
		this.server.replyAlways(RetryTestServer.reset());
		assertThatExceptionOfType(WebClientRequestException.class).isThrownBy(this::post);
		// attempts start at 0 s, about 1 s and about 2 s; the third ends past the budget
		assertThat(this.server.received()).hasSize(3);
		assertThat(this.time.sleeps()).hasSize(2);
		assertThat(this.time.nanoTime()).isGreaterThanOrEqualTo(Duration.ofSeconds(3).toNanos());
	}

	@Test
	void backOffIsCutToWhatIsLeftOfTheBudget() {
		this.filter.setMaxAttempts(3);
		this.filter.setInitialBackoff(Duration.ofSeconds(10));
		this.filter.setMaxBackoff(Duration.ofSeconds(10));
		this.filter.setMaxElapsed(Duration.ofSeconds(2));
		this.server.replyAlways(RetryTestServer.status(502));
		assertThat(post().status()).isEqualTo(502);
		assertThat(this.time.sleeps()).isNotEmpty()
			.allSatisfy((sleep) -> assertThat(sleep).isLessThanOrEqualTo(Duration.ofSeconds(2)));
	}

	@Test
	void requestWithKeyKeepsIt() {
		this.server.replyInOrder(RetryTestServer.status(503), RetryTestServer.reset());
		Result result = exchange(client().post()
			.uri(this.server.uri("/payments"))
			.header("Idempotency-Key", "order-42")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(BODY));
		assertThat(result.status()).isEqualTo(201);
		assertThat(this.server.received()).hasSize(3)
			.allSatisfy((request) -> assertThat(request.keys()).containsExactly("order-42"));
	}

	@Test
	void eachSubscriptionIsALogicalRequestWithItsOwnKey() {
		this.server.replyInOrder(RetryTestServer.status(503));
		Mono<Result> call = client().post()
			.uri(this.server.uri("/payments"))
			.bodyValue(BODY)
			.exchangeToMono(IdempotentRetryFilterTests::result);
		assertThat(call.block(TIMEOUT)).isEqualTo(new Result(201, "created 1"));
		assertThat(call.block(TIMEOUT)).isEqualTo(new Result(201, "created 2"));
		List<@Nullable String> keys = this.server.received().stream().map(Received::key).toList();
		assertThat(keys).hasSize(3).doesNotContainNull();
		assertThat(keys.get(0)).isEqualTo(keys.get(1)).isNotEqualTo(keys.get(2));
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
	void otherMethodFailingToConnectIsNotRetried() throws IOException {
		URI closed;
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			closed = URI.create("http://127.0.0.1:" + socket.getLocalPort() + "/payments");
		}
		assertThatExceptionOfType(WebClientRequestException.class)
			.isThrownBy(() -> client().put().uri(closed).bodyValue(BODY).retrieve().toBodilessEntity().block(TIMEOUT));
		assertThat(this.time.sleeps()).isEmpty();
	}

	@Test
	void patchIsKeyedAndRetried() {
		this.server.replyInOrder(RetryTestServer.status(502));
		Result result = exchange(client().patch().uri(this.server.uri("/payments/1")).bodyValue(BODY));
		assertThat(result.status()).isEqualTo(201);
		assertThat(this.server.received()).hasSize(2).extracting(Received::method).containsOnly("PATCH");
		singleKey(this.server.received());
	}

	@Test
	void methodsAreConfigurable() {
		this.filter.setMethods(Set.of(HttpMethod.PUT));
		this.server.replyInOrder(RetryTestServer.status(503));
		assertThat(exchange(client().put().uri(this.server.uri("/payments/1")).bodyValue(BODY)).status())
			.isEqualTo(201);
		assertThat(this.server.received()).hasSize(2);
		singleKey(this.server.received());
		this.server.replyAlways(RetryTestServer.status(503));
		assertThat(post().status()).isEqualTo(503);
		assertThat(this.server.received()).hasSize(3);
		assertThat(this.server.received().get(2).keys()).isNull();
	}

	@Test
	void keyHeaderIsConfigurable() {
		this.filter.setKeyHeader("X-Request-Key");
		List<String> sent = new CopyOnWriteArrayList<>();
		this.innerFilters.add((request, next) -> {
			sent.add(String.valueOf(request.headers().getFirst("X-Request-Key")));
			return next.exchange(request);
		});
		this.server.replyInOrder(RetryTestServer.status(503));
		assertThat(post().status()).isEqualTo(201);
		// the server reads Idempotency-Key only
		assertThat(this.server.received()).hasSize(2).allSatisfy((request) -> assertThat(request.keys()).isNull());
		assertThat(sent).hasSize(2).doesNotContain("null").containsOnly(sent.get(0));
	}

	@Test
	void keySupplierIsConfigurable() {
		AtomicInteger keys = new AtomicInteger();
		this.filter.setKeySupplier(() -> "key-" + keys.incrementAndGet());
		this.server.replyInOrder(RetryTestServer.status(503));
		post();
		post();
		assertThat(this.server.received()).extracting(Received::key).containsExactly("key-1", "key-1", "key-2");
	}

	@Test
	void invalidSuppliedKeyFailsBeforeSending() {
		this.filter.setKeySupplier(() -> "not a key");
		assertThatIllegalStateException().isThrownBy(this::post).withMessageContaining("invalid idempotency key");
		assertThat(this.server.received()).isEmpty();
	}

	@Test
	void fullJitterDelaysStayWithinTheCap() {
		this.filter.setMaxAttempts(8);
		this.filter.setInitialBackoff(Duration.ofMillis(100));
		this.filter.setMaxBackoff(Duration.ofSeconds(1));
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
	void retriedResponsesAreReleased() {
		List<AtomicBoolean> released = Collections.synchronizedList(new ArrayList<>());
		this.innerFilters.add((request, next) -> next.exchange(request).map((response) -> {
			AtomicBoolean done = new AtomicBoolean();
			released.add(done);
			return response.mutate().body((body) -> body.doFinally((signal) -> done.set(true))).build();
		}));
		this.server.replyInOrder(RetryTestServer.status(503), RetryTestServer.inProgress(),
				RetryTestServer.status(502));
		List<Boolean> releasedWhenDelivered = client().post()
			.uri(this.server.uri("/payments"))
			.bodyValue(BODY)
			.exchangeToMono((response) -> Mono.just(released.stream().map(AtomicBoolean::get).toList()))
			.block(TIMEOUT);
		assertThat(releasedWhenDelivered).containsExactly(true, true, true, false);
	}

	@Test
	void requestBodyIsWrittenAgainOnEveryAttempt() {
		this.server.replyInOrder(RetryTestServer.status(503), RetryTestServer.reset());
		Result fromPublisher = exchange(client().post()
			.uri(this.server.uri("/payments"))
			.contentType(MediaType.TEXT_PLAIN)
			.body(Flux.just("{\"amount\":", "\"10.00\"}"), String.class));
		assertThat(fromPublisher.status()).isEqualTo(201);
		assertThat(this.server.received()).hasSize(3).extracting(Received::body).containsOnly("{\"amount\":\"10.00\"}");
		this.server.replyInOrder(RetryTestServer.inProgress());
		Result fromValue = exchange(client().post()
			.uri(this.server.uri("/payments"))
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(Map.of("amount", "20.00")));
		assertThat(fromValue.status()).isEqualTo(201);
		assertThat(this.server.received()).hasSize(5);
		assertThat(this.server.received().subList(3, 5)).extracting(Received::body)
			.containsOnly("{\"amount\":\"20.00\"}");
	}

	@Test
	void cancellingDuringAWaitStopsRetries() throws InterruptedException {
		HeldTimers timers = new HeldTimers();
		this.filter.setScheduler(timers);
		this.server.replyAlways(RetryTestServer.status(503, "Retry-After", "1"));
		Disposable call = client().post()
			.uri(this.server.uri("/payments"))
			.bodyValue(BODY)
			.retrieve()
			.toBodilessEntity()
			.subscribe((entity) -> {
			}, (ex) -> {
			});
		HeldTimers.Timer timer = timers.next();
		assertThat(timer.delay()).isEqualTo(Duration.ofSeconds(1));
		call.dispose();
		// the delay hands the timer's handle to the call after scheduling it, on the
		// thread that scheduled it: a cancellation in between disposes it then
		awaitDisposed(timer);
		// a timer that fires all the same starts nothing
		timer.fire();
		Thread.sleep(300);
		assertThat(this.server.received()).hasSize(1);
		assertThat(timers.pending()).isEmpty();
	}

	@Test
	void cancellingDuringAnAttemptStopsRetries() throws InterruptedException {
		HeldTimers timers = new HeldTimers();
		this.filter.setScheduler(timers);
		CountDownLatch arrived = new CountDownLatch(1);
		this.server.onRequest(arrived::countDown);
		// the attempt ends without a response: a call still under way would retry it
		this.server.replyAlways(RetryTestServer.stall(Duration.ofMillis(500)));
		Disposable call = client().post()
			.uri(this.server.uri("/payments"))
			.bodyValue(BODY)
			.retrieve()
			.toBodilessEntity()
			.subscribe((entity) -> {
			}, (ex) -> {
			});
		assertThat(arrived.await(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).isTrue();
		call.dispose();
		Thread.sleep(1500);
		assertThat(timers.pending()).isEmpty();
		assertThat(this.server.received()).hasSize(1);
	}

	@Test
	void retriesAreLoggedWithoutQueryStringKeyOrBody() {
		Logger logger = (Logger) LoggerFactory.getLogger(IdempotentRetryFilter.class);
		ListAppender<ILoggingEvent> appender = new ListAppender<>();
		appender.start();
		Level level = logger.getLevel();
		logger.addAppender(appender);
		logger.setLevel(Level.DEBUG);
		try {
			this.filter.setKeySupplier(() -> "key-that-stays-secret");
			this.server.replyInOrder(RetryTestServer.status(503, "Retry-After", "1"), RetryTestServer.reset());
			Result result = exchange(
					client().post().uri(this.server.uri("/payments?token=secret-token")).bodyValue(BODY));
			assertThat(result.status()).isEqualTo(201);
		}
		finally {
			logger.detachAppender(appender);
			logger.setLevel(level);
		}
		String url = this.server.uri("/payments").toString();
		assertThat(appender.list).extracting(ILoggingEvent::getFormattedMessage)
			.hasSize(2)
			.allSatisfy((message) -> assertThat(message).startsWith("Retrying POST " + url + " after attempt ")
				.doesNotContain("secret")
				.doesNotContain("10.00"))
			.satisfies((messages) -> {
				assertThat(messages.get(0))
					.isEqualTo("Retrying POST " + url + " after attempt 1 (status 503) in 1000 ms");
				assertThat(messages.get(1)).contains("after attempt 2 (").contains("Exception");
			});
		assertThat(appender.list).extracting(ILoggingEvent::getLevel).containsOnly(Level.DEBUG);
	}

	@Test
	void concurrentRequestsEachKeepTheirOwnKey() {
		IdempotentRetryFilter shared = new IdempotentRetryFilter();
		shared.setInitialBackoff(Duration.ofMillis(1));
		Set<String> failedOnce = ConcurrentHashMap.newKeySet();
		this.server
			.plan((request) -> failedOnce.add(request.key()) ? RetryTestServer.status(503) : this.server.success());
		WebClient client = WebClient.builder().clientConnector(this.connector).filter(shared).build();
		int requests = 80;
		List<Integer> statuses = Flux.range(0, requests)
			.flatMap(
					(i) -> client.post()
						.uri(this.server.uri("/payments"))
						.bodyValue(BODY)
						.exchangeToMono((response) -> response.releaseBody().thenReturn(response.statusCode().value())),
					16)
			.collectList()
			.block(TIMEOUT);
		assertThat(statuses).hasSize(requests).containsOnly(201);
		Map<String, Long> attemptsPerKey = this.server.received()
			.stream()
			.collect(Collectors.groupingBy(Received::key, Collectors.counting()));
		assertThat(attemptsPerKey).hasSize(requests).allSatisfy((key, attempts) -> assertThat(attempts).isEqualTo(2));
		assertThat(this.server.executions()).isEqualTo(requests);
	}

	@Test
	void settersRejectInvalidValues() {
		assertThatIllegalArgumentException().isThrownBy(() -> this.filter.setMaxAttempts(0));
		assertThatIllegalArgumentException().isThrownBy(() -> this.filter.setInitialBackoff(Duration.ZERO));
		assertThatIllegalArgumentException().isThrownBy(() -> this.filter.setMaxBackoff(Duration.ofMillis(-1)));
		assertThatIllegalArgumentException().isThrownBy(() -> this.filter.setMaxElapsed(Duration.ZERO));
		assertThatIllegalArgumentException().isThrownBy(() -> this.filter.setRetryStatuses(Set.of(600)));
		assertThatIllegalArgumentException().isThrownBy(() -> this.filter.setKeyHeader(" "));
	}

	@Test
	void defaults() {
		IdempotentRetryFilter defaults = new IdempotentRetryFilter();
		assertThat(defaults.getKeyHeader()).isEqualTo("Idempotency-Key");
		assertThat(defaults.getMethods()).containsExactlyInAnyOrder(HttpMethod.POST, HttpMethod.PATCH);
		assertThat(defaults.getRetryStatuses()).containsExactlyInAnyOrder(409, 429, 502, 503, 504);
		assertThat(defaults.getMaxAttempts()).isEqualTo(5);
		assertThat(defaults.getInitialBackoff()).isEqualTo(Duration.ofMillis(100));
		assertThat(defaults.getMaxBackoff()).isEqualTo(Duration.ofSeconds(5));
		assertThat(defaults.getMaxElapsed()).isEqualTo(Duration.ofSeconds(30));
	}

	private WebClient client() {
		WebClient.Builder builder = WebClient.builder().clientConnector(this.connector).filter(this.filter);
		this.innerFilters.forEach(builder::filter);
		return builder.build();
	}

	private Result post() {
		return exchange(client().post()
			.uri(this.server.uri("/payments"))
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(BODY));
	}

	private static Result exchange(WebClient.RequestHeadersSpec<?> spec) {
		Result result = spec.exchangeToMono(IdempotentRetryFilterTests::result).block(TIMEOUT);
		assertThat(result).isNotNull();
		return result;
	}

	private static Mono<Result> result(ClientResponse response) {
		return response.bodyToMono(String.class)
			.defaultIfEmpty("")
			.map((body) -> new Result(response.statusCode().value(), body));
	}

	private static String singleKey(List<Received> received) {
		assertThat(received).isNotEmpty().allSatisfy((request) -> assertThat(request.keys()).hasSize(1));
		Set<@Nullable String> keys = received.stream().map(Received::key).collect(Collectors.toSet());
		assertThat(keys).hasSize(1).doesNotContainNull();
		return keys.iterator().next();
	}

	private static void awaitDisposed(HeldTimers.Timer timer) throws InterruptedException {
		long deadline = System.nanoTime() + TIMEOUT.toNanos();
		while (!timer.isDisposed() && System.nanoTime() - deadline < 0) {
			Thread.sleep(5);
		}
		assertThat(timer.isDisposed()).as("the timer of the cancelled call's wait is disposed").isTrue();
	}

	record Result(int status, String body) {
	}

	/**
	 * A scheduler whose timers never fire by themselves: a test takes each one and fires
	 * it, or sees that it was cancelled.
	 */
	private static final class HeldTimers implements Scheduler {

		private final BlockingQueue<Timer> pending = new LinkedBlockingQueue<>();

		Timer next() throws InterruptedException {
			Timer timer = this.pending.poll(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
			assertThat(timer).as("a timer was set").isNotNull();
			return timer;
		}

		List<Timer> pending() {
			return List.copyOf(this.pending);
		}

		@Override
		public Disposable schedule(Runnable task) {
			return Schedulers.parallel().schedule(task);
		}

		@Override
		public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
			Timer timer = new Timer(task, Duration.ofNanos(unit.toNanos(delay)));
			this.pending.add(timer);
			return timer;
		}

		@Override
		public Worker createWorker() {
			throw new UnsupportedOperationException("Only timers are held");
		}

		static final class Timer implements Disposable {

			private final Runnable task;

			private final Duration delay;

			private volatile boolean disposed;

			Timer(Runnable task, Duration delay) {
				this.task = task;
				this.delay = delay;
			}

			Duration delay() {
				return this.delay;
			}

			void fire() {
				this.task.run();
			}

			@Override
			public void dispose() {
				this.disposed = true;
			}

			@Override
			public boolean isDisposed() {
				return this.disposed;
			}

		}

	}

}
