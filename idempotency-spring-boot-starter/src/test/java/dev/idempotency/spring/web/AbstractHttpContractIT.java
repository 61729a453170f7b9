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

import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.fingerprint.FingerprintInput;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.spring.NamedPolicies;
import dev.idempotency.spring.NamedPolicy;
import dev.idempotency.spring.VirtualThreads;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.core.env.Environment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The HTTP contract, one test per row of the contract table of docs/http-semantics.md (a
 * comment names each test's row), against a real server. Subclasses choose the store.
 *
 * @author Idempotency contributors
 */
@Tag("contract")
abstract class AbstractHttpContractIT extends AbstractWebIT {

	@Autowired
	IdempotencyStore store;

	@Autowired
	NamedPolicies policies;

	@Autowired
	Environment environment;

	@AfterEach
	void storeUp() {
		setStoreDown(false);
	}

	OutageSimulatingStore outage() {
		return (OutageSimulatingStore) this.store;
	}

	/**
	 * Simulate an outage of the store, or end it. By default the store bean is an
	 * {@link OutageSimulatingStore}.
	 * @param down whether the store is down
	 */
	void setStoreDown(boolean down) {
		outage().setDown(down);
	}

	/**
	 * Return the application's store without the outage simulation.
	 * @return the store
	 */
	IdempotencyStore realStore() {
		return outage().delegate();
	}

	/**
	 * Whether the policies of the contract are transactional
	 * ({@code idempotency.transactional=true}): the claim of a request is then not
	 * committed before its transaction is.
	 * @return {@code true} in the transactional mode
	 */
	protected boolean transactional() {
		return false;
	}

	/**
	 * Whether the handlers of the contract run on virtual threads: they do when the
	 * application turns them on ({@code spring.threads.virtual.enabled}, JDK 21 and
	 * later), as the compatibility lane does for every test (docs/testing.md): Tomcat's
	 * threads are then virtual. The WebFlux subclasses ask the store scheduler instead.
	 * @return {@code true} if they should run on virtual threads
	 */
	protected boolean handlersOnVirtualThreads() {
		return VirtualThreads.expected(this.environment);
	}

	// not a row: the threads every row runs on
	@Test
	void requestsRunOnTheThreadsTheApplicationTurnedOn() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/payments", key, "{}");
		HttpResponse<byte[]> replay = post("/payments", key, "{}");
		assertThat(first.statusCode()).isEqualTo(201);
		assertPaymentReplayed(replay, first, key);
		boolean expected = handlersOnVirtualThreads();
		System.out.println(getClass().getSimpleName() + ": the handler ran on a "
				+ VirtualThreads.kind(Boolean.TRUE.equals(this.counter.ranOnVirtualThread("payments", key)))
				+ " thread");
		assertThat(this.counter.ranOnVirtualThread("payments", key))
			.as("the handler ran on a %s thread", VirtualThreads.kind(expected))
			.isEqualTo(expected);
	}

	// row 1
	@Test
	void endpointThatIsNotIdempotentIsLeftUntouched() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/plain", key, "x");
		HttpResponse<byte[]> second = post("/plain", key, "x");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(text(first)).isEqualTo("plain 1");
		assertThat(text(second)).isEqualTo("plain 2");
		assertThat(first.headers().firstValue(IdempotencyFilter.EXPIRES_HEADER)).isEmpty();
		assertThat(second.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).isEmpty();
		assertThat(this.counter.count("plain", key)).isEqualTo(2);
	}

	// row 2
	@Test
	void missingRequiredKeyIsRefusedWithoutRunningTheHandler() throws Exception {
		HttpResponse<byte[]> response = post("/payments", null, "{}");
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(text(response)).isEqualTo(problem("idempotency-key-missing", 400, "Idempotency key missing",
				"This endpoint requires an 'Idempotency-Key' header.", "/payments", null));
		assertThat(this.counter.count("payments", null)).isZero();
		// a key that is not required: the request runs untouched
		HttpResponse<byte[]> optional = post("/optional", null, "");
		assertThat(optional.statusCode()).isEqualTo(200);
		assertThat(optional.headers().firstValue(IdempotencyFilter.EXPIRES_HEADER)).isEmpty();
		assertThat(this.counter.count("optional", null)).isPositive();
	}

	// row 3
	@Test
	void malformedKeyIsRefusedWithoutRunningTheHandler() throws Exception {
		String key = "\"unterminated";
		HttpResponse<byte[]> response = post("/payments", key, "{}");
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(text(response)).isEqualTo(problem("idempotency-key-invalid", 400, "Invalid idempotency key",
				"The 'Idempotency-Key' header must be sent once and hold one key of 1 to 255 visible ASCII "
						+ "characters (0x21-0x7E), as a token or a quoted string.",
				"/payments", null));
		assertThat(this.counter.count("payments", key)).isZero();
	}

	// row 4
	@Test
	void firstRequestRunsTheHandlerOnceAndAdvertisesItsExpiry() throws Exception {
		String key = newKey();
		Instant before = Instant.now();
		HttpResponse<byte[]> response = post("/payments", key, "{\"amount\":10}");
		Instant after = Instant.now();
		assertThat(response.statusCode()).isEqualTo(201);
		assertThat(text(response)).matches("\\{\"id\":\"[-0-9a-f]{36}\",\"run\":1,\"request\":13}");
		assertThat(response.headers().firstValue("X-Payment-Id")).isPresent();
		assertThat(response.headers().firstValue("Content-Type")).hasValue("application/json");
		assertThat(response.headers().firstValueAsLong("Content-Length")).hasValue(response.body().length);
		assertThat(response.headers().firstValue("Set-Cookie")).hasValue("session=s1");
		assertThat(response.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).isEmpty();
		// the header has whole seconds; the request may take a while on a busy machine
		assertThat(expiry(response)).isBetween(before.plus(Duration.ofHours(24)).minusSeconds(1),
				after.plus(Duration.ofHours(24)).plusSeconds(1));
		assertThat(this.counter.count("payments", key)).isEqualTo(1);
	}

	// row 5
	@Test
	void retryAfterCompletionReplaysTheStoredResponse() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/payments", key, "{\"amount\":10}");
		HttpResponse<byte[]> second = post("/payments", key, "{\"amount\":10}");
		HttpResponse<byte[]> third = post("/payments", key, "{\"amount\":10}");
		for (HttpResponse<byte[]> replay : List.of(second, third)) {
			assertThat(replay.statusCode()).isEqualTo(first.statusCode());
			assertThat(replay.body()).isEqualTo(first.body());
			assertThat(replay.headers().firstValue("X-Payment-Id"))
				.isEqualTo(first.headers().firstValue("X-Payment-Id"));
			assertThat(replay.headers().firstValue("Content-Type")).hasValue("application/json");
			assertThat(replay.headers().firstValueAsLong("Content-Length")).hasValue(first.body().length);
			assertThat(replay.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
			assertThat(replay.headers().firstValue("Set-Cookie")).isEmpty();
			assertThat(expiry(replay)).isCloseTo(expiry(first), within(Duration.ofSeconds(5)));
		}
		assertThat(this.counter.count("payments", key)).isEqualTo(1);
	}

	// row 6
	@Test
	void sameKeyForAnotherRequestIsRefusedAsReused() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/payments", key, "{\"amount\":10}");
		HttpResponse<byte[]> otherBody = post("/payments", key, "{\"amount\":11}");
		HttpResponse<byte[]> otherQuery = post("/payments?x=1", key, "{\"amount\":10}");
		HttpResponse<byte[]> otherPath = post("/optional", key, "{\"amount\":10}");
		String expected = problem("idempotency-key-reused", 422, "Idempotency key reused",
				"This key was already used for a different request (method, path, query, headers or body).",
				"/payments", key);
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(otherBody.statusCode()).isEqualTo(422);
		assertThat(text(otherBody)).isEqualTo(expected);
		assertThat(otherQuery.statusCode()).isEqualTo(422);
		assertThat(otherPath.statusCode()).isEqualTo(422);
		assertThat(this.counter.count("payments", key)).isEqualTo(1);
		assertThat(this.counter.count("optional", key)).isZero();
		// while the first is still processing
		String slowKey = newKey();
		CompletableFuture<HttpResponse<byte[]>> slow = CompletableFuture
			.supplyAsync(() -> call(() -> post("/slow?millis=800", slowKey, "a")));
		awaitCount("slow", slowKey, 1);
		HttpResponse<byte[]> mismatch = post("/slow?millis=800", slowKey, "b");
		if (transactional()) {
			// the first claim is not committed: another transaction reads no
			// fingerprint, only that the key is held (docs/stores/postgresql.md)
			assertThat(mismatch.statusCode()).isEqualTo(409);
			assertThat(text(mismatch)).contains("request-in-progress");
		}
		else {
			assertThat(mismatch.statusCode()).isEqualTo(422);
		}
		assertThat(slow.get().statusCode()).isEqualTo(200);
		assertThat(post("/slow?millis=800", slowKey, "b").statusCode()).isEqualTo(422);
		assertThat(this.counter.count("slow", slowKey)).isEqualTo(1);
		// and the record is unchanged: the original still replays
		HttpResponse<byte[]> replay = post("/payments", key, "{\"amount\":10}");
		assertThat(replay.body()).isEqualTo(first.body());
	}

	// row 7
	@Test
	void sameKeyWhileTheFirstRequestRunsIsAnsweredInProgress() throws Exception {
		String key = newKey();
		CompletableFuture<HttpResponse<byte[]>> first = CompletableFuture
			.supplyAsync(() -> call(() -> post("/slow?millis=1000", key, "a")));
		awaitCount("slow", key, 1);
		HttpResponse<byte[]> duplicate = post("/slow?millis=1000", key, "a");
		assertThat(duplicate.statusCode()).isEqualTo(409);
		assertThat(duplicate.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		long retryAfter = duplicate.headers().firstValueAsLong("Retry-After").orElseThrow();
		assertThat(retryAfter).isBetween(1L, 30L);
		assertThat(text(duplicate)).isEqualTo(problem("request-in-progress", 409, "Request in progress",
				"A request with this key is still being processed; retry after " + retryAfter + " second(s).", "/slow",
				key));
		HttpResponse<byte[]> original = first.get();
		HttpResponse<byte[]> replay = post("/slow?millis=1000", key, "a");
		assertThat(replay.statusCode()).isEqualTo(200);
		assertThat(replay.body()).isEqualTo(original.body());
		assertThat(this.counter.count("slow", key)).isEqualTo(1);
		// a policy with an in-flight wait answers the duplicate with the replay instead
		String patientKey = newKey();
		CompletableFuture<HttpResponse<byte[]>> patient = CompletableFuture
			.supplyAsync(() -> call(() -> post("/patient", patientKey, "")));
		awaitCount("patient", patientKey, 1);
		HttpResponse<byte[]> waited = post("/patient", patientKey, "");
		assertThat(waited.statusCode()).isEqualTo(200);
		assertThat(waited.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(waited.body()).isEqualTo(patient.get().body());
		assertThat(this.counter.count("patient", patientKey)).isEqualTo(1);
	}

	// row 8
	@Test
	void nonStorableStatusIsPassedThroughAndReleasesTheKey() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/status/503", key, "");
		HttpResponse<byte[]> second = post("/status/503", key, "");
		assertThat(first.statusCode()).isEqualTo(503);
		assertThat(text(first)).startsWith("status 503 run 1 ");
		assertThat(text(second)).startsWith("status 503 run 2 ");
		assertThat(first.headers().firstValue(IdempotencyFilter.EXPIRES_HEADER)).isEmpty();
		assertThat(second.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).isEmpty();
		assertThat(this.counter.count("status", key)).isEqualTo(2);
		for (int status : new int[] { 408, 429, 500 }) {
			String otherKey = newKey();
			post("/status/" + status, otherKey, "");
			assertThat(post("/status/" + status, otherKey, "").statusCode()).isEqualTo(status);
			assertThat(this.counter.count("status", otherKey)).isEqualTo(2);
		}
		// other 4xx responses are deterministic: stored and replayed
		String clientError = newKey();
		HttpResponse<byte[]> rejected = post("/status/409", clientError, "");
		HttpResponse<byte[]> replayed = post("/status/409", clientError, "");
		assertThat(replayed.statusCode()).isEqualTo(409);
		assertThat(replayed.body()).isEqualTo(rejected.body());
		assertThat(replayed.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(this.counter.count("status", clientError)).isEqualTo(1);
	}

	// row 9
	@Test
	void handlerThatThrowsReleasesTheKey() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/throw", key, "");
		HttpResponse<byte[]> second = post("/throw", key, "");
		assertThat(first.statusCode()).isEqualTo(500);
		assertThat(second.statusCode()).isEqualTo(500);
		assertThat(second.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).isEmpty();
		assertThat(this.counter.count("throw", key)).isEqualTo(2);
	}

	// row 10
	@Test
	void unavailableStoreRefusesTheRequestUnlessThePolicyFailsOpen() throws Exception {
		String key = newKey();
		setStoreDown(true);
		HttpResponse<byte[]> closed = post("/payments", key, "{}");
		assertThat(closed.statusCode()).isEqualTo(503);
		assertThat(closed.headers().firstValue("Retry-After")).hasValue("1");
		assertThat(text(closed))
			.isEqualTo(problem("idempotency-store-unavailable", 503, "Idempotency store unavailable",
					"The idempotency store is unavailable, so the request was not processed; retry after 1 second(s).",
					"/payments", key));
		assertThat(this.counter.count("payments", key)).isZero();
		// a fail-open policy runs the handler without protection
		HttpResponse<byte[]> open = post("/open", key, "");
		assertThat(open.statusCode()).isEqualTo(200);
		assertThat(text(open)).isEqualTo("open 1");
		assertThat(open.headers().firstValue(IdempotencyFilter.EXPIRES_HEADER)).isEmpty();
		assertThat(this.counter.count("open", key)).isEqualTo(1);
		setStoreDown(false);
		HttpResponse<byte[]> recovered = post("/payments", key, "{}");
		assertThat(recovered.statusCode()).isEqualTo(201);
		assertThat(this.counter.count("payments", key)).isEqualTo(1);
	}

	/**
	 * Whether the store takes a lapsed lease over only a lease after a request first
	 * found it lapsed (PostgreSQL decides the takeover).
	 * @return {@code true} if the takeover is confirmed
	 */
	protected boolean confirmsTakeover() {
		return false;
	}

	// row 11
	@Test
	void lapsedLeaseOfACrashedOwnerIsTakenOver() throws Exception {
		String key = newKey();
		NamedPolicy policy = this.policies.get("crash");
		assertThat(policy).isNotNull();
		RequestFingerprint fingerprint = policy.fingerprinter()
			.fingerprint(FingerprintInput.of("POST", "/crash", null, null, List.of(), new byte[0], 0, 0));
		// the server's first request may outlast the lease: not the one that must find
		// it live. In the transactional mode it then outlasts its transaction's time-out
		// too (the lock timeout, 500 ms here) and is answered 503, as the mode promises
		int warmUp = post("/crash", newKey(), "").statusCode();
		assertThat(warmUp).isIn(transactional() ? List.of(200, 503) : List.of(200));
		// an owner that acquired the key and crashed: it never completes nor extends. Its
		// lease is four of the policy's, so that a request on a busy machine still finds
		// it live; whether it did is read from the clock, not assumed
		Duration crashedLease = policy.engine().lockTimeout().multipliedBy(4);
		long acquiring = System.nanoTime();
		AcquireResult crashed = realStore().acquire(IdempotencyKey.global(key), fingerprint, OwnerToken.generate(),
				crashedLease, Duration.ofHours(1));
		assertThat(crashed).isInstanceOf(AcquireResult.Acquired.class);
		HttpResponse<byte[]> whileLeased = post("/crash", key, "");
		boolean foundLive = System.nanoTime() - acquiring < crashedLease.toNanos();
		if (!foundLive) {
			// answered after the lease lapsed, so it may have found the lease live or
			// lapsed: retries are told 409 until the key is taken over, and it runs once
			HttpResponse<byte[]> ran = whileLeased;
			for (int retry = 0; ran.statusCode() == 409 && retry < 2; retry++) {
				Thread.sleep(policy.engine().lockTimeout().toMillis() + 300);
				ran = post("/crash", key, "");
			}
			assertThat(ran.statusCode()).isEqualTo(200);
			assertThat(text(ran)).startsWith("crash 1 ");
			assertThat(this.counter.count("crash", key)).isEqualTo(1);
			return;
		}
		assertThat(whileLeased.statusCode()).isEqualTo(409);
		assertThat(this.counter.count("crash", key)).isZero();
		Thread.sleep(crashedLease.toMillis() + 300);
		HttpResponse<byte[]> takeover = post("/crash", key, "");
		if (confirmsTakeover()) {
			// the first retry to find the lease lapsed
			// schedules the takeover a lease later
			assertThat(takeover.statusCode()).isEqualTo(409);
			assertThat(takeover.headers().firstValue("Retry-After")).isPresent();
			assertThat(this.counter.count("crash", key)).isZero();
			Thread.sleep(policy.engine().lockTimeout().toMillis() + 300);
			takeover = post("/crash", key, "");
		}
		assertThat(takeover.statusCode()).isEqualTo(200);
		assertThat(text(takeover)).startsWith("crash 1 ");
		HttpResponse<byte[]> replay = post("/crash", key, "");
		assertThat(replay.body()).isEqualTo(takeover.body());
		assertThat(replay.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(this.counter.count("crash", key)).isEqualTo(1);
	}

	// row 12
	@Test
	void requestAfterTheTtlRunsAsAFirstRequest() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/brief", key, "");
		HttpResponse<byte[]> replay = post("/brief", key, "");
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(expiry(first)).isBefore(Instant.now().plusSeconds(3));
		Thread.sleep(1500);
		HttpResponse<byte[]> afterTtl = post("/brief", key, "");
		assertThat(afterTtl.statusCode()).isEqualTo(200);
		assertThat(text(afterTtl)).startsWith("brief 2 ");
		assertThat(afterTtl.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).isEmpty();
		assertThat(this.counter.count("brief", key)).isEqualTo(2);
	}

	// row 13
	@Test
	void requestBodyOverTheLimitIsRefusedWithoutRunningTheHandler() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> small = post("/small", key, "x".repeat(1025));
		assertThat(small.statusCode()).isEqualTo(413);
		assertThat(text(small)).isEqualTo(problem("idempotency-request-too-large", 413, "Request body too large",
				"The request body exceeds the 1024 bytes accepted for idempotent requests to this endpoint.", "/small",
				key));
		assertThat(this.counter.count("small", key)).isZero();
		HttpResponse<byte[]> atLimit = post("/small", key, "x".repeat(1024));
		assertThat(atLimit.statusCode()).isEqualTo(200);
		// the default limit is 1 MiB
		String otherKey = newKey();
		HttpResponse<byte[]> large = post("/payments", otherKey, "x".repeat(1024 * 1024 + 1));
		assertThat(large.statusCode()).isEqualTo(413);
		assertThat(this.counter.count("payments", otherKey)).isZero();
	}

	// row 14
	@Test
	void sameKeyUnderAnotherScopeIsAnIndependentRecord() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> tenantA = post("/payments", key, "{}", "X-Tenant", "a");
		HttpResponse<byte[]> tenantB = post("/payments", key, "{}", "X-Tenant", "b");
		assertThat(tenantA.statusCode()).isEqualTo(201);
		assertThat(tenantB.statusCode()).isEqualTo(201);
		assertThat(tenantB.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).isEmpty();
		assertThat(tenantB.body()).isNotEqualTo(tenantA.body());
		assertThat(post("/payments", key, "{}", "X-Tenant", "a").body()).isEqualTo(tenantA.body());
		assertThat(post("/payments", key, "{}", "X-Tenant", "b").body()).isEqualTo(tenantB.body());
		// principals scope keys when there is no scope header
		HttpResponse<byte[]> alice = post("/payments", key, "{}", "X-User", "alice");
		HttpResponse<byte[]> bob = post("/payments", key, "{}", "X-User", "bob");
		assertThat(bob.body()).isNotEqualTo(alice.body());
		assertThat(post("/payments", key, "{}", "X-User", "alice").body()).isEqualTo(alice.body());
		// and a key of one scope does not meet the global one
		HttpResponse<byte[]> global = post("/payments", key, "{}");
		assertThat(global.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).isEmpty();
		assertThat(this.counter.count("payments", key)).isEqualTo(5);
	}

	static Instant expiry(HttpResponse<byte[]> response) {
		String value = response.headers().firstValue(IdempotencyFilter.EXPIRES_HEADER).orElseThrow();
		assertThat(value).matches("[A-Z][a-z]{2}, \\d{2} [A-Z][a-z]{2} \\d{4} \\d{2}:\\d{2}:\\d{2} GMT");
		return ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
	}

	/**
	 * Assert that a retry of {@code POST /payments} replayed the first answer: the same
	 * status, body and content type, marked as a replay, and the handler ran once.
	 */
	void assertPaymentReplayed(HttpResponse<byte[]> replay, HttpResponse<byte[]> first, String key) {
		assertThat(replay.statusCode()).isEqualTo(first.statusCode());
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(replay.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
		assertThat(replay.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(this.counter.count("payments", key)).isOne();
	}

	void awaitCount(String handler, String key, int count) throws InterruptedException {
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (this.counter.count(handler, key) < count) {
			assertThat(System.nanoTime()).as("handler %s did not run in time", handler).isLessThan(deadline);
			Thread.sleep(10);
		}
	}

	static <T> T call(ThrowingSupplier<T> supplier) {
		try {
			return supplier.get();
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	interface ThrowingSupplier<T> {

		T get() throws Exception;

	}

}
