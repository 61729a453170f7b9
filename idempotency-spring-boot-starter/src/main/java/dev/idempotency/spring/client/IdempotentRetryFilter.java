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
import java.nio.ByteBuffer;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Signal;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import org.springframework.core.codec.CodecException;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.client.reactive.ClientHttpRequest;
import org.springframework.http.client.reactive.ClientHttpRequestDecorator;
import org.springframework.util.ClassUtils;
import org.springframework.web.reactive.function.BodyInserter;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import org.springframework.web.reactive.function.client.WebClientRequestException;

/**
 * {@link ExchangeFilterFunction} for {@code WebClient} that makes unsafe requests safe to
 * retry: it gives each logical request one idempotency key and retries transient failures
 * with that same key, so that a server honouring the key runs the operation at most once
 * however many attempts reach it. The reactive twin of
 * {@link IdempotentRetryInterceptor}, with the same rules: it never blocks.
 * <p>
 * <b>Key.</b> A request whose method is one of the {@link #setMethods methods} (POST and
 * PATCH by default) and that carries no {@link #setKeyHeader key header} is given a fresh
 * key from the {@link #setKeySupplier key supplier} (a random UUID by default) when the
 * exchange is subscribed to; a request that already carries one keeps it. Every attempt
 * of the request sends that key, and its body is written again by the request's
 * {@code BodyInserter}: a value, or a publisher that can be subscribed to again, is sent
 * whole each time. Requests with other methods pass through untouched: no key, no retry.
 * A subscription is one logical request: a retry operator around the call
 * ({@code retryWhen} on its {@code Mono}) subscribes again, and so starts another logical
 * request with another key, unless the caller sets the key header.
 * <p>
 * <b>Retries.</b> An attempt is retried when it fails without a response (a
 * {@link WebClientRequestException}, or an {@link IOException}: connection refused or
 * reset, response time-out) or answers one of the {@link #setRetryStatuses retry
 * statuses} (409, 429, 502, 503 and 504 by default), unless the response says it is a
 * replay ({@value #REPLAYED_HEADER}{@code : true}: a stored answer that a retry would
 * only repeat). A 409 is retried only when its body is a problem detail whose
 * {@code type} ends with {@code /request-in-progress}; any other conflict is returned at
 * once, its body whole. Other statuses, a 500 among them, are returned at once. Retries
 * stop after {@link #setMaxAttempts max attempts} or when the {@link #setMaxElapsed time
 * budget} is spent; the caller then gets the last response, or the last failure.
 * <p>
 * <b>Waits.</b> Before a retry the filter waits for the response's {@code Retry-After}
 * (delta-seconds or HTTP-date) when there is one, else for a "full jitter" back-off: a
 * random delay between zero and
 * {@code min(maxBackoff, initialBackoff * 2^(attempt - 1))}. A wait is a timer on the
 * {@link #setScheduler scheduler}, never a blocked thread; it never goes past the time
 * budget, so no attempt starts after it: a {@code Retry-After} longer than what is left
 * of the budget returns its response at once. The body of a response that is retried is
 * released. Cancelling the subscription cancels the attempt under way or the wait, and no
 * further attempt is made.
 * <p>
 * Thread-safe: one instance may serve any number of concurrent requests. Configure it
 * before use. No argument may be {@code null} unless stated.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class IdempotentRetryFilter implements ExchangeFilterFunction {

	/**
	 * Default name of the idempotency key header.
	 */
	public static final String DEFAULT_KEY_HEADER = RetryRules.DEFAULT_KEY_HEADER;

	/**
	 * Header by which a server marks a replayed (stored) response.
	 */
	public static final String REPLAYED_HEADER = RetryRules.REPLAYED_HEADER;

	private static final Log logger = LogFactory.getLog(IdempotentRetryFilter.class);

	// Reactor Netty's response and read time-outs, which are no IOExceptions
	private static final @Nullable Class<?> NETTY_TIMEOUT = nettyTimeout();

	private final RetryRules rules = new RetryRules();

	private volatile Scheduler scheduler = Schedulers.parallel();

	/**
	 * Set the name of the idempotency key header. Defaults to
	 * {@value #DEFAULT_KEY_HEADER}.
	 * @param keyHeader the header name, not empty
	 */
	public void setKeyHeader(String keyHeader) {
		this.rules.setKeyHeader(keyHeader);
	}

	/**
	 * Return the name of the idempotency key header.
	 * @return the header name
	 */
	public String getKeyHeader() {
		return this.rules.getKeyHeader();
	}

	/**
	 * Set the HTTP methods whose requests are given a key and retried. Defaults to POST
	 * and PATCH. Add a method only if the servers it calls honour idempotency keys for
	 * it; GET, PUT and DELETE are idempotent by HTTP's own rules and usually retried by
	 * other means.
	 * @param methods the methods, possibly empty (the filter then does nothing)
	 */
	public void setMethods(Set<HttpMethod> methods) {
		this.rules.setMethods(methods);
	}

	/**
	 * Return the HTTP methods whose requests are given a key and retried.
	 * @return the methods
	 */
	public Set<HttpMethod> getMethods() {
		return this.rules.getMethods();
	}

	/**
	 * Set where new keys come from. Defaults to random (version 4) UUIDs. The supplier is
	 * called once per logical request, possibly from many threads at once, and must not
	 * block; each key it returns must be unique and 1 to 255 characters of visible ASCII.
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

	/**
	 * Return the response statuses that are retried.
	 * @return the statuses
	 */
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

	/**
	 * Return how many attempts a request may make in all.
	 * @return the number of attempts
	 */
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

	/**
	 * Return the back-off cap of the first retry.
	 * @return the initial back-off
	 */
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

	/**
	 * Return the largest back-off cap.
	 * @return the maximum back-off
	 */
	public Duration getMaxBackoff() {
		return this.rules.getMaxBackoff();
	}

	/**
	 * Set the time budget of a request, measured from the start of its first attempt. No
	 * attempt starts after it; an attempt under way is not cut short (use the connector's
	 * response time-out for that). Defaults to 30 seconds.
	 * @param maxElapsed the time budget, positive
	 */
	public void setMaxElapsed(Duration maxElapsed) {
		this.rules.setMaxElapsed(maxElapsed);
	}

	/**
	 * Return the time budget of a request.
	 * @return the time budget
	 */
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
	 * Set the scheduler whose timers the filter waits on between attempts. Defaults to
	 * {@link Schedulers#parallel()}, as {@link Mono#delay(Duration)} does. The next
	 * attempt is sent from the timer's thread.
	 * @param scheduler the scheduler
	 */
	public void setScheduler(Scheduler scheduler) {
		this.scheduler = Objects.requireNonNull(scheduler, "'scheduler' must not be null");
	}

	/**
	 * Set the random generator of the back-off jitter. Defaults to {@code null}: the
	 * current thread's {@link ThreadLocalRandom}. A generator set here is shared by every
	 * request, so it must be thread-safe (as {@link java.util.Random} is).
	 * @param random the generator, or {@code null} for the default
	 */
	public void setRandom(@Nullable RandomGenerator random) {
		this.rules.setRandom(random);
	}

	@Override
	public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
		if (!this.rules.appliesTo(request.method())) {
			return next.exchange(request);
		}
		return Mono.defer(() -> {
			String header = this.rules.getKeyHeader();
			ClientRequest keyed = request.headers().containsHeader(header) ? request
					: ClientRequest.from(request).header(header, this.rules.newKey()).build();
			return new Exchange(keyed, next, this.rules.newCall(), this.scheduler).attempt(1);
		});
	}

	/**
	 * Return the rules this filter follows, for the auto-configuration to bind its
	 * properties to.
	 * @return the rules
	 */
	RetryRules rules() {
		return this.rules;
	}

	/**
	 * Tell whether an attempt failed on its connection, so that it may be retried: an
	 * {@link IOException} (refused, reset or closed, the JDK client's time-outs) or a
	 * time-out (Reactor Netty's response time-out, a {@link TimeoutException}) anywhere
	 * in its causes. WebClient wraps every failure of an attempt in a
	 * {@link WebClientRequestException}, the request body's own too: a body whose
	 * publisher fails, which the encoder cannot write, or which can be read only once
	 * fails the same way on every attempt, and is handed to the caller at once.
	 * @param failure the failure
	 * @return whether the attempt may be retried
	 */
	private static boolean isConnectionFailure(Throwable failure) {
		if (!(failure instanceof WebClientRequestException) && !(failure instanceof IOException)) {
			return false;
		}
		Throwable cause = failure;
		for (int depth = 0; cause != null && depth < 16; depth++) {
			if (cause instanceof CodecException) {
				// the body could not be encoded (Jackson 2's errors are IOExceptions)
				return false;
			}
			if (cause instanceof IOException || cause instanceof TimeoutException || isNettyTimeout(cause)) {
				return true;
			}
			cause = (cause.getCause() != cause) ? cause.getCause() : null;
		}
		return false;
	}

	private static boolean isNettyTimeout(Throwable failure) {
		return NETTY_TIMEOUT != null && NETTY_TIMEOUT.isInstance(failure);
	}

	private static @Nullable Class<?> nettyTimeout() {
		String name = "io.netty.handler.timeout.TimeoutException";
		ClassLoader classLoader = IdempotentRetryFilter.class.getClassLoader();
		return ClassUtils.isPresent(name, classLoader) ? ClassUtils.resolveClassName(name, classLoader) : null;
	}

	private static String describe(Throwable failure) {
		// the wrapper's message names the request's URL, query string included
		Throwable cause = failure.getCause();
		return (failure instanceof WebClientRequestException && cause != null) ? cause.toString() : failure.toString();
	}

	/**
	 * The attempts of one logical request.
	 */
	private static final class Exchange {

		private final ClientRequest request;

		private final ExchangeFunction next;

		private final RetryRules.Call call;

		private final Scheduler scheduler;

		Exchange(ClientRequest request, ExchangeFunction next, RetryRules.Call call, Scheduler scheduler) {
			this.request = request;
			this.next = next;
			this.call = call;
			this.scheduler = scheduler;
		}

		Mono<ClientResponse> attempt(int attempt) {
			// the body is watched: a failure of its own (a file that cannot be read, an
			// IOException like a connection's) would fail every attempt again
			BodyWatch body = new BodyWatch();
			BodyInserter<?, ? super ClientHttpRequest> inserter = this.request.body();
			ClientRequest watched = ClientRequest.from(this.request)
				.body((message, context) -> inserter.insert(new WatchedRequest(message, body), context))
				.build();
			// the outcome as a signal: a failure of this attempt, not of a later
			// one, is what may be retried here
			return this.next.exchange(watched).materialize().flatMap((signal) -> outcome(signal, attempt, body));
		}

		private Mono<ClientResponse> outcome(Signal<ClientResponse> signal, int attempt, BodyWatch body) {
			ClientResponse response = signal.get();
			if (response != null) {
				return answered(response, attempt);
			}
			Throwable failure = signal.getThrowable();
			if (failure == null) {
				return Mono.empty();
			}
			Duration delay = (!body.failed && isConnectionFailure(failure)) ? this.call.delayAfterFailure(attempt)
					: null;
			if (delay == null) {
				return Mono.error(failure);
			}
			logRetry(attempt, delay, describe(failure));
			return retryAfter(delay, attempt);
		}

		private Mono<ClientResponse> answered(ClientResponse response, int attempt) {
			int status = response.statusCode().value();
			HttpHeaders headers = response.headers().asHttpHeaders();
			if (!this.call.isRetryStatus(status, headers)) {
				return Mono.just(response);
			}
			if (RetryRules.needsProblemType(status)) {
				// another conflict (a business rule, say) would only be repeated
				return PeekedBody.of(response).flatMap((peeked) -> {
					Duration delay = RetryRules.isRequestInProgress(peeked.head())
							? this.call.delayAfterResponse(attempt, headers) : null;
					if (delay == null) {
						return Mono.just(peeked.wholeResponse());
					}
					logRetry(attempt, delay, "status " + status);
					return peeked.release().then(retryAfter(delay, attempt));
				});
			}
			Duration delay = this.call.delayAfterResponse(attempt, headers);
			if (delay == null) {
				return Mono.just(response);
			}
			logRetry(attempt, delay, "status " + status);
			// a body left unread would hold its connection
			return response.releaseBody().onErrorComplete().then(retryAfter(delay, attempt));
		}

		private Mono<ClientResponse> retryAfter(Duration delay, int attempt) {
			Mono<ClientResponse> retry = Mono.defer(() -> attempt(attempt + 1));
			return delay.isZero() ? retry : Mono.delay(delay, this.scheduler).then(retry);
		}

		private void logRetry(int attempt, Duration delay, String reason) {
			if (logger.isDebugEnabled()) {
				logger
					.debug(RetryRules.describeRetry(this.request.method(), this.request.url(), attempt, reason, delay));
			}
		}

	}

	/**
	 * The body of a response whose start has been read, with the rest still to come: the
	 * start decides whether the response is retried, and the whole body goes on to the
	 * caller if it is not.
	 */
	private static final class PeekedBody {

		private final ClientResponse response;

		private final byte[] head;

		private final Flux<List<DataBuffer>> body;

		private PeekedBody(ClientResponse response, byte[] head, Flux<List<DataBuffer>> body) {
			this.response = response;
			this.head = head;
			this.body = body;
		}

		/**
		 * Read the start of a response's body, at most
		 * {@link RetryRules#MAX_PROBLEM_BYTES} (or all of it, if shorter), and keep the
		 * rest unread.
		 * @param response the response
		 * @return the peeked body
		 */
		static Mono<PeekedBody> of(ClientResponse response) {
			Flux<DataBuffer> buffers = response.bodyToFlux(DataBuffer.class);
			return Flux.defer(() -> buffers.bufferUntil(new HeadLimit(RetryRules.MAX_PROBLEM_BYTES)))
				// the first group of buffers is the head; the source stays subscribed
				// when the head is handed on, so that the rest can follow it
				.switchOnFirst((first, all) -> Mono.just(new PeekedBody(response, bytes(first.get()), all)), false)
				.single();
		}

		byte[] head() {
			return this.head;
		}

		/**
		 * Return the response with its whole body, the start included, still to be read.
		 * @return the response
		 */
		ClientResponse wholeResponse() {
			Flux<DataBuffer> whole = this.body.concatMapIterable((buffers) -> buffers);
			return this.response.mutate().body((unread) -> whole).build();
		}

		/**
		 * Read the rest of the body and release it all.
		 * @return completion once the body is released
		 */
		Mono<Void> release() {
			return this.body.doOnNext((buffers) -> buffers.forEach(DataBufferUtils::release)).then().onErrorComplete();
		}

		private static byte[] bytes(@Nullable List<DataBuffer> buffers) {
			if (buffers == null) {
				return new byte[0];
			}
			int length = 0;
			for (DataBuffer buffer : buffers) {
				length += buffer.readableByteCount();
			}
			byte[] bytes = new byte[Math.min(length, RetryRules.MAX_PROBLEM_BYTES)];
			int copied = 0;
			for (DataBuffer buffer : buffers) {
				int count = Math.min(buffer.readableByteCount(), bytes.length - copied);
				// copies without moving the buffer's read position
				buffer.toByteBuffer(buffer.readPosition(), ByteBuffer.wrap(bytes), copied, count);
				copied += count;
			}
			return bytes;
		}

	}

	/**
	 * Ends the first group of buffers once it holds enough bytes; every later buffer is a
	 * group of its own. One instance per subscription.
	 */
	private static final class HeadLimit implements Predicate<DataBuffer> {

		private final int limit;

		private long bytes;

		HeadLimit(int limit) {
			this.limit = limit;
		}

		@Override
		public boolean test(DataBuffer buffer) {
			this.bytes += buffer.readableByteCount();
			return this.bytes >= this.limit;
		}

	}

	/**
	 * Whether the request body of one attempt failed on its own.
	 */
	private static final class BodyWatch {

		private volatile boolean failed;

	}

	/**
	 * The request of one attempt, whose body's own failures are noted: a connection that
	 * fails while the body is written cancels the body, a body that fails signals it.
	 */
	private static final class WatchedRequest extends ClientHttpRequestDecorator {

		private final BodyWatch watch;

		WatchedRequest(ClientHttpRequest delegate, BodyWatch watch) {
			super(delegate);
			this.watch = watch;
		}

		@Override
		public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
			return super.writeWith(watched(body));
		}

		@Override
		public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
			return super.writeAndFlushWith(watched(body).map(this::watched));
		}

		private <T> Flux<T> watched(Publisher<T> body) {
			return Flux.from(body).doOnError((ex) -> this.watch.failed = true);
		}

	}

}
