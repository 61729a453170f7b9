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

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.SequenceInputStream;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpRequest;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;

/**
 * {@link ClientHttpRequestInterceptor} that makes unsafe requests safe to retry: it gives
 * each logical request one idempotency key and retries transient failures with that same
 * key, so that a server honouring the key runs the operation at most once however many
 * attempts reach it.
 * <p>
 * <b>Key.</b> A request whose method is one of the {@link #setMethods methods} (POST and
 * PATCH by default) and that carries no {@link #setKeyHeader key header} is given a fresh
 * key from the {@link #setKeySupplier key supplier} (a random UUID by default) before its
 * first attempt; a request that already carries one keeps it. Every attempt of the
 * request sends that key and the same body bytes. Requests with other methods pass
 * through untouched: no key, no retry.
 * <p>
 * <b>Retries.</b> An attempt is retried when it fails with an {@link IOException}
 * (connection refused or reset, time-out) or answers one of the {@link #setRetryStatuses
 * retry statuses} (409, 429, 502, 503 and 504 by default), unless the response says it is
 * a replay ({@value #REPLAYED_HEADER}{@code : true}: a stored answer that a retry would
 * only repeat). A 409 is retried only when its body is a problem detail whose
 * {@code type} ends with {@code /request-in-progress}; any other conflict is returned at
 * once. Other statuses, a 500 among them, are returned at once. Retries stop after
 * {@link #setMaxAttempts max attempts} or when the {@link #setMaxElapsed time budget} is
 * spent; the caller then gets the last response, or the last {@code IOException} is
 * thrown.
 * <p>
 * <b>Waits.</b> Before a retry the interceptor waits for the response's
 * {@code Retry-After} (delta-seconds or HTTP-date) when there is one, else for a "full
 * jitter" back-off: a random delay between zero and
 * {@code min(maxBackoff, initialBackoff * 2^(attempt - 1))}. A wait never goes past the
 * time budget, so no attempt starts after it: a {@code Retry-After} longer than what is
 * left of the budget returns its response at once. The body of a response that is retried
 * is drained (up to a small limit) and closed.
 * <p>
 * Thread-safe: one instance may serve any number of concurrent requests. Configure it
 * before use. No argument may be {@code null} unless stated.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class IdempotentRetryInterceptor implements ClientHttpRequestInterceptor {

	/**
	 * Default name of the idempotency key header.
	 */
	public static final String DEFAULT_KEY_HEADER = RetryRules.DEFAULT_KEY_HEADER;

	/**
	 * Header by which a server marks a replayed (stored) response.
	 */
	public static final String REPLAYED_HEADER = RetryRules.REPLAYED_HEADER;

	private static final Log logger = LogFactory.getLog(IdempotentRetryInterceptor.class);

	private static final int MAX_DRAINED_BYTES = 64 * 1024;

	private final RetryRules rules = new RetryRules();

	private volatile Sleeper sleeper = (duration) -> TimeUnit.NANOSECONDS.sleep(duration.toNanos());

	/**
	 * Set the name of the idempotency key header. Defaults to
	 * {@value #DEFAULT_KEY_HEADER}.
	 * @param keyHeader the header name, not empty
	 */
	public void setKeyHeader(String keyHeader) {
		this.rules.setKeyHeader(keyHeader);
	}

	public String getKeyHeader() {
		return this.rules.getKeyHeader();
	}

	/**
	 * Set the HTTP methods whose requests are given a key and retried. Defaults to POST
	 * and PATCH. Add a method only if the servers it calls honour idempotency keys for
	 * it; GET, PUT and DELETE are idempotent by HTTP's own rules and usually retried by
	 * other means.
	 * @param methods the methods, possibly empty (the interceptor then does nothing)
	 */
	public void setMethods(Set<HttpMethod> methods) {
		this.rules.setMethods(methods);
	}

	public Set<HttpMethod> getMethods() {
		return this.rules.getMethods();
	}

	/**
	 * Set where new keys come from. Defaults to random (version 4) UUIDs. The supplier is
	 * called once per logical request, possibly from many threads at once; each key it
	 * returns must be unique and 1 to 255 characters of visible ASCII.
	 * @param keySupplier the key supplier
	 */
	public void setKeySupplier(Supplier<String> keySupplier) {
		this.rules.setKeySupplier(keySupplier);
	}

	/**
	 * Set the response statuses that are retried. Defaults to 409 (request in progress),
	 * 429, 502, 503 and 504. A 500 is not retried by default: it is usually a defect that
	 * a retry repeats, and a server built on this library has released the key so that a
	 * retry would run the operation again.
	 * @param retryStatuses the statuses, each from 100 to 599, possibly empty
	 */
	public void setRetryStatuses(Set<Integer> retryStatuses) {
		this.rules.setRetryStatuses(retryStatuses);
	}

	public Set<Integer> getRetryStatuses() {
		return this.rules.getRetryStatuses();
	}

	/**
	 * Set how many attempts a request may make in all, the first included. Defaults to 5.
	 * @param maxAttempts the number of attempts, at least 1 (1 means no retry)
	 */
	public void setMaxAttempts(int maxAttempts) {
		this.rules.setMaxAttempts(maxAttempts);
	}

	public int getMaxAttempts() {
		return this.rules.getMaxAttempts();
	}

	/**
	 * Set the back-off cap of the first retry; each further retry doubles it, up to the
	 * {@link #setMaxBackoff maximum}. Defaults to 100 milliseconds.
	 * @param initialBackoff the initial back-off, positive
	 */
	public void setInitialBackoff(Duration initialBackoff) {
		this.rules.setInitialBackoff(initialBackoff);
	}

	public Duration getInitialBackoff() {
		return this.rules.getInitialBackoff();
	}

	/**
	 * Set the largest back-off cap. Defaults to 5 seconds. A {@code Retry-After} sent by
	 * the server is not limited by it, only by the time budget.
	 * @param maxBackoff the maximum back-off, positive
	 */
	public void setMaxBackoff(Duration maxBackoff) {
		this.rules.setMaxBackoff(maxBackoff);
	}

	public Duration getMaxBackoff() {
		return this.rules.getMaxBackoff();
	}

	/**
	 * Set the time budget of a request, measured from the start of its first attempt. No
	 * attempt starts after it; an attempt under way is not interrupted (use the request
	 * factory's time-outs for that). Defaults to 30 seconds.
	 * @param maxElapsed the time budget, positive
	 */
	public void setMaxElapsed(Duration maxElapsed) {
		this.rules.setMaxElapsed(maxElapsed);
	}

	public Duration getMaxElapsed() {
		return this.rules.getMaxElapsed();
	}

	/**
	 * Set the clock that turns a {@code Retry-After} HTTP-date into a delay. Defaults to
	 * the system UTC clock.
	 * @param clock the clock
	 */
	public void setClock(Clock clock) {
		this.rules.setClock(clock);
	}

	/**
	 * Set the monotonic time source, in nanoseconds, that measures the time budget.
	 * Defaults to {@link System#nanoTime()}.
	 * @param nanoTime the time source
	 */
	public void setNanoTimeSource(LongSupplier nanoTime) {
		this.rules.setNanoTimeSource(nanoTime);
	}

	/**
	 * Set how the interceptor waits between attempts. Defaults to sleeping the calling
	 * thread.
	 * @param sleeper the sleeper
	 */
	public void setSleeper(Sleeper sleeper) {
		this.sleeper = Objects.requireNonNull(sleeper, "'sleeper' must not be null");
	}

	/**
	 * Set the random generator of the back-off jitter. Defaults to {@code null}: the
	 * calling thread's {@link ThreadLocalRandom}. A generator set here is shared by every
	 * request, so it must be thread-safe (as {@link java.util.Random} is).
	 * @param random the generator, or {@code null} for the default
	 */
	public void setRandom(@Nullable RandomGenerator random) {
		this.rules.setRandom(random);
	}

	@Override
	public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
			throws IOException {
		if (!this.rules.appliesTo(request.getMethod())) {
			return execution.execute(request, body);
		}
		String header = this.rules.getKeyHeader();
		HttpHeaders headers = request.getHeaders();
		if (!headers.containsHeader(header)) {
			headers.set(header, this.rules.newKey());
		}
		RetryRules.Call call = this.rules.newCall();
		for (int attempt = 1;; attempt++) {
			ClientHttpResponse response = null;
			int status;
			try {
				response = execution.execute(request, body);
				// some request factories only read the response here
				status = response.getStatusCode().value();
			}
			catch (IOException ex) {
				if (response != null) {
					response.close();
				}
				if (Thread.currentThread().isInterrupted()) {
					throw ex;
				}
				Duration delay = call.delayAfterFailure(attempt);
				if (delay == null) {
					throw ex;
				}
				logRetry(request, attempt, delay, ex.toString());
				waitBeforeRetry(delay, ex);
				continue;
			}
			if (!call.isRetryStatus(status, response.getHeaders())) {
				return response;
			}
			if (RetryRules.needsProblemType(status)) {
				// another conflict (a business rule, say) would only be repeated
				PeekedResponse peeked = new PeekedResponse(response, RetryRules.MAX_PROBLEM_BYTES);
				if (!RetryRules.isRequestInProgress(peeked.head())) {
					return peeked;
				}
				response = peeked;
			}
			Duration delay = call.delayAfterResponse(attempt, response.getHeaders());
			if (delay == null) {
				return response;
			}
			logRetry(request, attempt, delay, "status " + status);
			discard(response);
			waitBeforeRetry(delay, null);
		}
	}

	/**
	 * Return the rules this interceptor follows, for the auto-configuration to bind its
	 * properties to.
	 * @return the rules
	 */
	RetryRules rules() {
		return this.rules;
	}

	/**
	 * Release a response that will not be used: drain a little of its body, so that the
	 * connection can be reused, and close it.
	 * @param response the response
	 */
	private static void discard(ClientHttpResponse response) {
		try (InputStream in = response.getBody()) {
			byte[] buffer = new byte[4096];
			int drained = 0;
			int read;
			while (drained < MAX_DRAINED_BYTES && (read = in.read(buffer)) != -1) {
				drained += read;
			}
		}
		catch (IOException ex) {
			// the response is discarded either way
		}
		finally {
			response.close();
		}
	}

	private void waitBeforeRetry(Duration delay, @Nullable IOException failure) throws InterruptedIOException {
		if (delay.isZero()) {
			return;
		}
		try {
			this.sleeper.sleep(delay);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			InterruptedIOException interrupted = new InterruptedIOException("Interrupted while waiting to retry");
			if (failure != null) {
				interrupted.addSuppressed(failure);
			}
			throw interrupted;
		}
	}

	private void logRetry(HttpRequest request, int attempt, Duration delay, String reason) {
		if (logger.isDebugEnabled()) {
			logger.debug(RetryRules.describeRetry(request.getMethod(), request.getURI(), attempt, reason, delay));
		}
	}

	/**
	 * Strategy to wait between attempts.
	 *
	 * @since 0.1.0
	 */
	@FunctionalInterface
	public interface Sleeper {

		/**
		 * Wait for the given duration.
		 * @param duration how long to wait, positive
		 * @throws InterruptedException if the calling thread is interrupted while waiting
		 */
		void sleep(Duration duration) throws InterruptedException;

	}

	/**
	 * A response whose body start has been read, and is given back in front of the rest.
	 */
	private static final class PeekedResponse implements ClientHttpResponse {

		private final ClientHttpResponse response;

		private final byte[] head;

		private final InputStream body;

		PeekedResponse(ClientHttpResponse response, int limit) throws IOException {
			this.response = response;
			InputStream in = response.getBody();
			this.head = in.readNBytes(limit);
			this.body = new SequenceInputStream(new ByteArrayInputStream(this.head), in);
		}

		byte[] head() {
			return this.head;
		}

		@Override
		public HttpStatusCode getStatusCode() throws IOException {
			return this.response.getStatusCode();
		}

		@Override
		public String getStatusText() throws IOException {
			return this.response.getStatusText();
		}

		@Override
		public HttpHeaders getHeaders() {
			return this.response.getHeaders();
		}

		@Override
		public InputStream getBody() {
			return this.body;
		}

		@Override
		public void close() {
			this.response.close();
		}

	}

}
