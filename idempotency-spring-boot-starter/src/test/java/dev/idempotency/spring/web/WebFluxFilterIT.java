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

import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import dev.idempotency.core.store.IdempotencyStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the WebFlux filter does beyond the shared contract of
 * {@link AbstractHttpContractIT} (the same application and context as
 * {@link WebFluxRedisHttpContractIT}): a client that goes away, form bodies, a response
 * over the limit, a chunked body over the limit, and no buffer leaked on any of these
 * paths (Netty's leak detector at its paranoid level).
 *
 * @author Idempotency contributors
 */
@SpringBootTest(classes = WebFluxContractTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "spring.main.web-application-type=reactive")
@Import(RedisHttpContractIT.RedisServer.class)
@TestPropertySource(properties = { "idempotency.store.type=redis", "idempotency.redis.key-prefix=it-http-webflux:",
		"spring.data.redis.repositories.enabled=false", "idempotency.endpoints[0].methods=POST",
		"idempotency.endpoints[0].path=/functional/**" })
class WebFluxFilterIT extends AbstractWebIT {

	@Autowired
	ApplicationContext context;

	private static final List<String> leaks = new CopyOnWriteArrayList<>();

	private static final AppenderBase<ILoggingEvent> leakAppender = new AppenderBase<>() {

		@Override
		protected void append(ILoggingEvent event) {
			if (event.getFormattedMessage().contains("LEAK")) {
				leaks.add(event.getFormattedMessage());
			}
		}

	};

	@BeforeAll
	static void detectEveryLeak() {
		ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
		leakAppender.start();
	}

	// once the application started: its logging system resets the loggers' appenders
	@BeforeEach
	void listenToTheLeakDetector() {
		Logger logger = (Logger) LoggerFactory.getLogger(ResourceLeakDetector.class);
		if (!logger.isAttached(leakAppender)) {
			logger.addAppender(leakAppender);
		}
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

	@Test
	void everyRequestIsObservedAndCountedByItsOutcome() throws Exception {
		MeterRegistry meters = this.context.getBean(MeterRegistry.class);
		double executed = requests(meters, "executed");
		double replayed = requests(meters, "replayed");
		double reused = requests(meters, "mismatch");
		String key = newKey();
		assertThat(post("/form", key, "a=1", "Content-Type", "application/x-www-form-urlencoded").statusCode())
			.isEqualTo(200);
		assertThat(post("/form", key, "a=1", "Content-Type", "application/x-www-form-urlencoded").statusCode())
			.isEqualTo(200);
		assertThat(post("/form", key, "a=2", "Content-Type", "application/x-www-form-urlencoded").statusCode())
			.isEqualTo(422);
		// each observation stops once its exchange has ended, which may be after the
		// client has the answer (the first request's once its response is stored): wait
		// for all three, with room for a busy machine
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (System.nanoTime() < deadline && (requests(meters, "executed") < executed + 1
				|| requests(meters, "replayed") < replayed + 1 || requests(meters, "mismatch") < reused + 1)) {
			Thread.sleep(20);
		}
		assertThat(requests(meters, "executed")).isEqualTo(executed + 1);
		assertThat(requests(meters, "replayed")).isEqualTo(replayed + 1);
		assertThat(requests(meters, "mismatch")).isEqualTo(reused + 1);
	}

	private static double requests(MeterRegistry meters, String outcome) {
		Counter counter = meters.find("idempotency.requests")
			.tag("policy", "default")
			.tag("outcome", outcome)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	@Test
	void aFunctionalEndpointIsIdempotentByAnEndpointRule() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/functional/orders", key, "{\"item\":1}");
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(text(first)).startsWith("order 1 ");
		HttpResponse<byte[]> retry = post("/functional/orders", key, "{\"item\":1}");
		assertThat(retry.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(post("/functional/orders", null, "{\"item\":1}").statusCode()).isEqualTo(400);
		assertThat(this.counter.count("functional", key)).isEqualTo(1);
	}

	@Test
	void aClientThatGoesAwayStillHasItsResponseStored() throws Exception {
		String key = newKey();
		byte[] request = ("POST /slow?millis=600 HTTP/1.1\r\nHost: 127.0.0.1\r\nIdempotency-Key: " + key
				+ "\r\nContent-Length: 1\r\n\r\na")
			.getBytes(StandardCharsets.US_ASCII);
		try (Socket socket = new Socket("127.0.0.1", this.port)) {
			OutputStream out = socket.getOutputStream();
			out.write(request);
			out.flush();
			awaitCount("slow", key, 1);
		}
		// the client is gone; the handler runs on, and its response is stored
		HttpResponse<byte[]> retry = post("/slow?millis=600", key, "a");
		for (int attempt = 0; retry.statusCode() == 409 && attempt < 50; attempt++) {
			Thread.sleep(100);
			retry = post("/slow?millis=600", key, "a");
		}
		assertThat(retry.statusCode()).isEqualTo(200);
		assertThat(retry.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(text(retry)).startsWith("slow 1 ");
		assertThat(this.counter.count("slow", key)).isEqualTo(1);
	}

	@Test
	void aClaimWhoseClientLeftIsReleasedSoThatARetryRunsTheHandler() throws Exception {
		claimWhoseClientLeftIsReleased(this, (OutageSimulatingStore) this.context.getBean(IdempotencyStore.class));
	}

	// The client leaves while the store makes its claim: the claim, made all the same,
	// is released as soon as its answer arrives, so a retry runs the handler (once)
	// rather
	// than wait out a claim that nobody ends.
	static void claimWhoseClientLeftIsReleased(AbstractWebIT test, OutageSimulatingStore store) throws Exception {
		String key = newKey();
		OutageSimulatingStore.Hold hold = store.holdClaim(key);
		try {
			byte[] request = ("POST /slow?millis=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nIdempotency-Key: " + key
					+ "\r\nContent-Length: 1\r\n\r\na")
				.getBytes(StandardCharsets.US_ASCII);
			try (Socket socket = new Socket("127.0.0.1", test.port)) {
				OutputStream out = socket.getOutputStream();
				out.write(request);
				out.flush();
				assertThat(hold.awaitReached()).as("the claim was made").isTrue();
			}
			// the server has seen the client go before the claim's answer arrives
			for (int i = 0; i < 500 && test.counter.count("cancelled", key) == 0; i++) {
				Thread.sleep(20);
			}
			assertThat(test.counter.count("cancelled", key)).isEqualTo(1);
		}
		finally {
			hold.release();
		}
		// the release follows the claim's answer at once; a busy machine may delay it a
		// little, never for the claim's lease (30 s) as a claim nobody ends would
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		HttpResponse<byte[]> retry = test.post("/slow?millis=1", key, "a");
		while (retry.statusCode() == 409 && System.nanoTime() < deadline) {
			Thread.sleep(50);
			retry = test.post("/slow?millis=1", key, "a");
		}
		assertThat(retry.statusCode()).isEqualTo(200);
		assertThat(retry.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).isEmpty();
		assertThat(text(retry)).startsWith("slow 1 ");
		assertThat(test.counter.count("slow", key)).isEqualTo(1);
	}

	@Test
	void duplicatesWaitingInFlightHoldUpNeitherTheOwnerNorAnotherKey() throws Exception {
		OutageSimulatingStore store = (OutageSimulatingStore) this.context.getBean(IdempotencyStore.class);
		// more than the store scheduler has threads (bounded elastic: ten a core)
		int duplicates = Math.max(40, 10 * Runtime.getRuntime().availableProcessors() + 20);
		String key = newKey();
		AtomicInteger claims = store.countClaims(key);
		long ownerSent = System.nanoTime();
		CompletableFuture<HttpResponse<byte[]>> owner = this.client.sendAsync(patient(key), BodyHandlers.ofByteArray());
		awaitCount("patient", key, 1);
		List<CompletableFuture<HttpResponse<byte[]>>> waiting = new ArrayList<>();
		for (int i = 0; i < duplicates; i++) {
			waiting.add(this.client.sendAsync(patient(key), BodyHandlers.ofByteArray()));
		}
		// every duplicate has tried once and waits (in-flight-wait: 5s)
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (claims.get() < duplicates + 1 && System.nanoTime() < deadline) {
			Thread.sleep(10);
		}
		long otherSent = System.nanoTime();
		HttpResponse<byte[]> other = post("/payments", newKey(), "{\"amount\":1}", "Content-Type", "application/json");
		long otherMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - otherSent);
		assertThat(other.statusCode()).isEqualTo(201);
		HttpResponse<byte[]> first = owner.get(20, TimeUnit.SECONDS);
		long ownerMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - ownerSent);
		assertThat(first.statusCode()).isEqualTo(200);
		// the owner's handler takes 500 ms; the duplicates would wait 5 s
		assertThat(ownerMillis).as("owner's answer, ms").isLessThan(4000);
		assertThat(otherMillis).as("another key's answer, ms").isLessThan(2000);
		for (CompletableFuture<HttpResponse<byte[]>> duplicate : waiting) {
			HttpResponse<byte[]> replay = duplicate.get(20, TimeUnit.SECONDS);
			assertThat(replay.statusCode()).isEqualTo(200);
			assertThat(replay.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
			assertThat(replay.body()).isEqualTo(first.body());
		}
		assertThat(this.counter.count("patient", key)).isEqualTo(1);
	}

	private HttpRequest patient(String key) {
		return HttpRequest.newBuilder(uri("/patient")).header(KEY, key).POST(BodyPublishers.noBody()).build();
	}

	@Test
	void aFormReachesTheHandlerAndIsFingerprintedByItsParameters() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/form", key, "b=2&a=1", "Content-Type", "application/x-www-form-urlencoded");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(text(first)).isEqualTo("form {a=[1], b=[2]} run 1");
		HttpResponse<byte[]> reordered = post("/form", key, "a=1&b=2", "Content-Type",
				"application/x-www-form-urlencoded");
		assertThat(reordered.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(reordered.body()).isEqualTo(first.body());
		HttpResponse<byte[]> other = post("/form", key, "a=1&b=3", "Content-Type", "application/x-www-form-urlencoded");
		assertThat(other.statusCode()).isEqualTo(422);
		assertThat(this.counter.count("form", key)).isEqualTo(1);
	}

	@Test
	void aFormReachesTheHandlerAsPlainWebFluxParsesIt() throws Exception {
		String form = "application/x-www-form-urlencoded";
		// UTF-8 when the content type names no charset, a name without a value, a byte
		// that is no UTF-8, a charset of the request's own
		String[][] bodies = { { "note=caf%C3%A9&amount=5", form }, { "flag&amount=5", form },
				{ "flag=&note=caf%E9", form }, { "note=caf%E9", form + "; charset=ISO-8859-1" } };
		for (String[] body : bodies) {
			HttpResponse<byte[]> plain = post("/form/plain", null, body[0], "Content-Type", body[1]);
			assertThat(plain.statusCode()).isEqualTo(200);
			HttpResponse<byte[]> idempotent = post("/form", newKey(), body[0], "Content-Type", body[1]);
			assertThat(idempotent.statusCode()).isEqualTo(200);
			assertThat(text(idempotent)).as(body[0]).isEqualTo(text(plain) + " run 1");
		}
		assertThat(text(post("/form/plain", null, "note=caf%C3%A9&flag", "Content-Type", form)))
			.isEqualTo("form {flag=[null], note=[caf\u00e9]}");
		// a malformed escape fails as it does without idempotency
		HttpResponse<byte[]> plain = post("/form/plain", null, "x=%zz&y=1", "Content-Type", form);
		assertThat(plain.statusCode()).isGreaterThanOrEqualTo(400);
		String key = newKey();
		HttpResponse<byte[]> idempotent = post("/form", key, "x=%zz&y=1", "Content-Type", form);
		assertThat(idempotent.statusCode()).isEqualTo(plain.statusCode());
		assertThat(errorOf(idempotent)).isEqualTo(errorOf(plain));
		assertThat(this.counter.count("form", key)).isZero();
	}

	private static String errorOf(HttpResponse<byte[]> response) {
		String body = text(response);
		int start = body.indexOf("\"error\":");
		return (start >= 0) ? body.substring(start, body.indexOf(',', start)) : body;
	}

	@Test
	void aUtf8FormIsTheSameRequestInEitherEncodingOfItsValues() throws Exception {
		String form = "application/x-www-form-urlencoded";
		String key = newKey();
		HttpResponse<byte[]> first = post("/form", key, "note=caf%C3%A9", "Content-Type", form);
		assertThat(text(first)).isEqualTo("form {note=[caf\u00e9]} run 1");
		HttpResponse<byte[]> again = post("/form", key, "note=caf%c3%a9", "Content-Type", form);
		assertThat(again.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(again.body()).isEqualTo(first.body());
		HttpResponse<byte[]> other = post("/form", key, "note=cafe", "Content-Type", form);
		assertThat(other.statusCode()).isEqualTo(422);
		assertThat(this.counter.count("form", key)).isEqualTo(1);
	}

	@Test
	void aMultipartBodyReachesTheHandlerFromTheFiltersCopy() throws Exception {
		String key = newKey();
		String boundary = "b0undary";
		String body = "--" + boundary + "\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhello\r\n--"
				+ boundary + "\r\nContent-Disposition: form-data; name=\"amount\"\r\n\r\n10\r\n--" + boundary
				+ "--\r\n";
		String contentType = "multipart/form-data; boundary=" + boundary;
		HttpResponse<byte[]> first = post("/multipart", key, body, "Content-Type", contentType);
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(text(first)).isEqualTo("multipart [amount, note] run 1");
		HttpResponse<byte[]> retry = post("/multipart", key, body, "Content-Type", contentType);
		assertThat(retry.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(this.counter.count("multipart", key)).isEqualTo(1);
	}

	@Test
	void aBodyThatFailsPartwayIsAnsweredByTheExceptionHandlerAloneAndThatAnswerIsStored() throws Exception {
		String key = newKey();
		RawHttp.Response first = RawHttp.exchange(this.port,
				RawHttp.ascii("POST /partial HTTP/1.1\r\nHost: 127.0.0.1\r\nIdempotency-Key: " + key), new byte[0]);
		assertThat(first.status()).isEqualTo(400);
		assertThat(first.text()).isEqualTo("{\"error\":\"the items ran out\"}");
		// the length it declares is the length it sends
		assertThat(first.headers().toLowerCase(Locale.ROOT).split("\r\n"))
			.filteredOn((line) -> line.startsWith("content-length:"))
			.containsExactly("content-length: " + first.body().length);
		HttpResponse<byte[]> retry = post("/partial", key, "");
		assertThat(retry.statusCode()).isEqualTo(400);
		assertThat(retry.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(this.counter.count("partial", key)).isEqualTo(1);
	}

	@Test
	void multipartIsFingerprintedByItsPartsNotItsBoundary() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = multipart(key, "b0undary", "10", "note.txt", "hello");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(text(first)).isEqualTo("multipart [amount, note] run 1");
		// the same upload, built again by the client with another boundary
		HttpResponse<byte[]> rebuilt = multipart(key, "another-boundary-42", "10", "note.txt", "hello");
		assertThat(rebuilt.statusCode()).isEqualTo(200);
		assertThat(rebuilt.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(rebuilt.body()).isEqualTo(first.body());
		// another request under the key: a part's bytes, a file name
		assertThat(multipart(key, "b0undary", "11", "note.txt", "hello").statusCode()).isEqualTo(422);
		assertThat(multipart(key, "b0undary", "10", "other.txt", "hello").statusCode()).isEqualTo(422);
		assertThat(multipart(key, "b0undary", "10", "note.txt", "hellO").statusCode()).isEqualTo(422);
		assertThat(this.counter.count("multipart", key)).isEqualTo(1);
	}

	private HttpResponse<byte[]> multipart(String key, String boundary, String amount, String filename, String note)
			throws Exception {
		String body = "--" + boundary + "\r\nContent-Disposition: form-data; name=\"amount\"\r\n\r\n" + amount
				+ "\r\n--" + boundary + "\r\nContent-Disposition: form-data; name=\"note\"; filename=\"" + filename
				+ "\"\r\nContent-Type: text/plain\r\n\r\n" + note + "\r\n--" + boundary + "--\r\n";
		return post("/multipart", key, body, "Content-Type", "multipart/form-data; boundary=" + boundary);
	}

	@Test
	void aResponseOverTheLimitGoesOutWholeButIsNotReplayable() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/large?size=4000", key, "");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(first.body()).hasSize(4000);
		assertThat(first.body()[0]).isEqualTo((byte) 'a');
		assertThat(first.body()[3999]).isEqualTo((byte) ('a' + 39 % 26));
		assertThat(first.headers().firstValue(IdempotencyFilter.EXPIRES_HEADER)).isPresent();
		HttpResponse<byte[]> retry = post("/large?size=4000", key, "");
		assertThat(retry.statusCode()).isEqualTo(410);
		assertThat(text(retry)).contains("response-not-replayable");
		assertThat(this.counter.count("large", key)).isEqualTo(1);
		String small = newKey();
		HttpResponse<byte[]> within = post("/large?size=1000", small, "");
		assertThat(post("/large?size=1000", small, "").body()).isEqualTo(within.body()).hasSize(1000);
	}

	@Test
	void aChunkedBodyOverTheLimitIsRefusedWithoutRunningTheHandler() throws Exception {
		String key = newKey();
		HttpRequest request = HttpRequest.newBuilder(uri("/small"))
			.header(KEY, key)
			.POST(BodyPublishers.ofInputStream(() -> new java.io.ByteArrayInputStream(new byte[2048])))
			.build();
		HttpResponse<byte[]> response = send(request);
		assertThat(response.statusCode()).isEqualTo(413);
		assertThat(text(response)).contains("idempotency-request-too-large");
		assertThat(this.counter.count("small", key)).isZero();
	}

	void awaitCount(String handler, String key, int count) throws InterruptedException {
		for (int i = 0; i < 500 && this.counter.count(handler, key) < count; i++) {
			Thread.sleep(20);
		}
		assertThat(this.counter.count(handler, key)).isEqualTo(count);
	}

}
