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

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;

/**
 * The rules that {@link IdempotentRetryInterceptor} and {@link IdempotentRetryFilter}
 * share: their settings, the key a request is given, which answers are retried, and how
 * long to wait before the next attempt. The two differ only in how they send, read and
 * wait.
 * <p>
 * Thread-safe: the settings are read once per logical request, by {@link #newCall()}.
 *
 * @author Idempotency contributors
 */
final class RetryRules {

	static final String DEFAULT_KEY_HEADER = "Idempotency-Key";

	static final String REPLAYED_HEADER = "Idempotent-Replayed";

	/**
	 * How much of a 409's body is read to tell a request in progress from another
	 * conflict.
	 */
	static final int MAX_PROBLEM_BYTES = 8 * 1024;

	private static final int MAX_KEY_LENGTH = 255;

	private static final Duration MAX_RETRY_AFTER = Duration.ofSeconds(999_999_999L);

	private static final String REQUEST_IN_PROGRESS_SUFFIX = "/request-in-progress";

	private static final Pattern PROBLEM_TYPE = Pattern.compile("\"type\"\\s*:\\s*\"([^\"\\\\]*)\"");

	private volatile String keyHeader = DEFAULT_KEY_HEADER;

	private volatile Set<HttpMethod> methods = Set.of(HttpMethod.POST, HttpMethod.PATCH);

	private volatile Supplier<String> keySupplier = () -> UUID.randomUUID().toString();

	private volatile Set<Integer> retryStatuses = Set.of(409, 429, 502, 503, 504);

	private volatile int maxAttempts = 5;

	private volatile Duration initialBackoff = Duration.ofMillis(100);

	private volatile Duration maxBackoff = Duration.ofSeconds(5);

	private volatile Duration maxElapsed = Duration.ofSeconds(30);

	private volatile Clock clock = Clock.systemUTC();

	private volatile LongSupplier nanoTime = System::nanoTime;

	private volatile @Nullable RandomGenerator random;

	void setKeyHeader(String keyHeader) {
		Objects.requireNonNull(keyHeader, "'keyHeader' must not be null");
		if (keyHeader.isBlank()) {
			throw new IllegalArgumentException("'keyHeader' must not be empty");
		}
		this.keyHeader = keyHeader;
	}

	String getKeyHeader() {
		return this.keyHeader;
	}

	void setMethods(Set<HttpMethod> methods) {
		Objects.requireNonNull(methods, "'methods' must not be null");
		this.methods = Set.copyOf(methods);
	}

	Set<HttpMethod> getMethods() {
		return this.methods;
	}

	void setKeySupplier(Supplier<String> keySupplier) {
		this.keySupplier = Objects.requireNonNull(keySupplier, "'keySupplier' must not be null");
	}

	void setRetryStatuses(Set<Integer> retryStatuses) {
		Objects.requireNonNull(retryStatuses, "'retryStatuses' must not be null");
		for (Integer status : retryStatuses) {
			if (status == null || status < 100 || status > 599) {
				throw new IllegalArgumentException("'retryStatuses' must hold HTTP statuses, not " + status);
			}
		}
		this.retryStatuses = Set.copyOf(retryStatuses);
	}

	Set<Integer> getRetryStatuses() {
		return this.retryStatuses;
	}

	void setMaxAttempts(int maxAttempts) {
		if (maxAttempts < 1) {
			throw new IllegalArgumentException("'maxAttempts' must be at least 1");
		}
		this.maxAttempts = maxAttempts;
	}

	int getMaxAttempts() {
		return this.maxAttempts;
	}

	void setInitialBackoff(Duration initialBackoff) {
		this.initialBackoff = requirePositive(initialBackoff, "initialBackoff");
	}

	Duration getInitialBackoff() {
		return this.initialBackoff;
	}

	void setMaxBackoff(Duration maxBackoff) {
		this.maxBackoff = requirePositive(maxBackoff, "maxBackoff");
	}

	Duration getMaxBackoff() {
		return this.maxBackoff;
	}

	void setMaxElapsed(Duration maxElapsed) {
		this.maxElapsed = requirePositive(maxElapsed, "maxElapsed");
	}

	Duration getMaxElapsed() {
		return this.maxElapsed;
	}

	void setClock(Clock clock) {
		this.clock = Objects.requireNonNull(clock, "'clock' must not be null");
	}

	void setNanoTimeSource(LongSupplier nanoTime) {
		this.nanoTime = Objects.requireNonNull(nanoTime, "'nanoTime' must not be null");
	}

	void setRandom(@Nullable RandomGenerator random) {
		this.random = random;
	}

	/**
	 * Tell whether requests of a method are given a key and retried.
	 * @param method the request's method
	 * @return whether the rules apply to the request
	 */
	boolean appliesTo(HttpMethod method) {
		return this.methods.contains(method);
	}

	/**
	 * Create the key of a new logical request.
	 * @return the key
	 * @throws IllegalStateException if the key supplier returned an invalid key
	 */
	String newKey() {
		String key = this.keySupplier.get();
		if (!isValidKey(key)) {
			throw new IllegalStateException("Key supplier returned an invalid idempotency key");
		}
		return key;
	}

	/**
	 * Start a logical request: its first attempt starts now.
	 * @return the attempts and time left to the request
	 */
	Call newCall() {
		return new Call(this);
	}

	private static boolean isValidKey(@Nullable String key) {
		if (key == null || key.isEmpty() || key.length() > MAX_KEY_LENGTH) {
			return false;
		}
		for (int i = 0; i < key.length(); i++) {
			char ch = key.charAt(i);
			if (ch < 0x21 || ch > 0x7E) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Tell whether a response's body must be read to decide on a retry: a 409 is retried
	 * only when it says that the request is still in progress.
	 * @param status the response status
	 * @return whether {@link #isRequestInProgress(byte[])} decides
	 */
	static boolean needsProblemType(int status) {
		return status == 409;
	}

	/**
	 * Tell whether the start of a 409's body is the problem detail of a request still in
	 * progress: its {@code type} ends with {@value #REQUEST_IN_PROGRESS_SUFFIX}, whatever
	 * the server's problem type base.
	 * @param head the start of the body, at most {@link #MAX_PROBLEM_BYTES}
	 * @return whether a retry may find the request completed
	 */
	static boolean isRequestInProgress(byte[] head) {
		Matcher matcher = PROBLEM_TYPE.matcher(new String(head, StandardCharsets.UTF_8));
		return matcher.find() && matcher.group(1).endsWith(REQUEST_IN_PROGRESS_SUFFIX);
	}

	/**
	 * Describe a retry for the log: no query string (it may carry secrets), no body, no
	 * key.
	 * @param method the request's method
	 * @param uri the request's URI
	 * @param attempt the number of the failed attempt, from 1
	 * @param reason why it failed
	 * @param delay the wait before the next attempt
	 * @return the message
	 */
	static String describeRetry(HttpMethod method, URI uri, int attempt, String reason, Duration delay) {
		return "Retrying " + method + " " + uri.getScheme() + "://" + uri.getRawAuthority() + uri.getRawPath()
				+ " after attempt " + attempt + " (" + reason + ") in " + delay.toMillis() + " ms";
	}

	private static Duration requirePositive(Duration duration, String name) {
		Objects.requireNonNull(duration, () -> "'" + name + "' must not be null");
		if (duration.isNegative() || duration.isZero()) {
			throw new IllegalArgumentException("'" + name + "' must be positive");
		}
		return duration;
	}

	/**
	 * Attempts and time left to one logical request, and the waits between them. Its
	 * settings are those of the rules when the request started.
	 */
	static final class Call {

		private final Set<Integer> retryStatuses;

		private final int maxAttempts;

		private final long maxElapsed;

		private final long initialBackoff;

		private final long maxBackoff;

		private final Clock clock;

		private final LongSupplier nanoTime;

		private final @Nullable RandomGenerator random;

		private final long start;

		private Call(RetryRules rules) {
			this.retryStatuses = rules.retryStatuses;
			this.maxAttempts = rules.maxAttempts;
			this.maxElapsed = nanos(rules.maxElapsed);
			this.initialBackoff = nanos(rules.initialBackoff);
			this.maxBackoff = nanos(rules.maxBackoff);
			this.clock = rules.clock;
			this.nanoTime = rules.nanoTime;
			this.random = rules.random;
			this.start = this.nanoTime.getAsLong();
		}

		/**
		 * Tell whether a response may be retried: its status is a retry status and it is
		 * not a replay (a stored answer, which a retry would only repeat). A 409 must
		 * also {@linkplain #isRequestInProgress(byte[]) say that the request is in
		 * progress}.
		 * @param status the response status
		 * @param headers the response headers
		 * @return whether the response is a candidate for a retry
		 */
		boolean isRetryStatus(int status, HttpHeaders headers) {
			return this.retryStatuses.contains(status) && !"true".equalsIgnoreCase(headers.getFirst(REPLAYED_HEADER));
		}

		/**
		 * Decide whether an attempt that failed without a response (a connection failure)
		 * is retried, and after how long.
		 * @param attempt the number of the failed attempt, from 1
		 * @return the delay before the next attempt, or {@code null} to stop
		 */
		@Nullable Duration delayAfterFailure(int attempt) {
			return nextDelay(attempt, null);
		}

		/**
		 * Decide whether an attempt that answered a retry status is retried, and after
		 * how long: the response's {@code Retry-After}, else the back-off.
		 * @param attempt the number of the failed attempt, from 1
		 * @param headers the response headers
		 * @return the delay before the next attempt, or {@code null} to stop
		 */
		@Nullable Duration delayAfterResponse(int attempt, HttpHeaders headers) {
			return nextDelay(attempt, retryAfter(headers));
		}

		private @Nullable Duration nextDelay(int attempt, @Nullable Duration retryAfter) {
			if (attempt >= this.maxAttempts) {
				return null;
			}
			long remaining = this.maxElapsed - (this.nanoTime.getAsLong() - this.start);
			if (remaining <= 0) {
				return null;
			}
			if (retryAfter != null) {
				// waiting out the budget would only
				// delay the answer the caller gets anyway
				long delay = nanos(retryAfter);
				return (delay <= remaining) ? Duration.ofNanos(delay) : null;
			}
			long cap = Math.min(backoffCap(attempt), remaining);
			RandomGenerator random = (this.random != null) ? this.random : ThreadLocalRandom.current();
			return Duration.ofNanos(random.nextLong(cap + 1));
		}

		/**
		 * Read the {@code Retry-After} header, in either of its forms.
		 * @param headers the response headers
		 * @return the delay the server asks for, or {@code null} if it asks for none (or
		 * in a form that cannot be read, in which case the back-off applies)
		 */
		private @Nullable Duration retryAfter(HttpHeaders headers) {
			String value = headers.getFirst(HttpHeaders.RETRY_AFTER);
			if (value == null || value.isBlank()) {
				return null;
			}
			value = value.trim();
			if (isDigits(value)) {
				// the time budget caps any delay, so a huge one need not be exact
				return (value.length() > 9) ? MAX_RETRY_AFTER : Duration.ofSeconds(Long.parseLong(value));
			}
			HttpHeaders date = new HttpHeaders();
			date.set(HttpHeaders.RETRY_AFTER, value);
			try {
				long millis = date.getFirstDate(HttpHeaders.RETRY_AFTER) - this.clock.millis();
				return Duration.ofMillis(Math.max(0, millis));
			}
			catch (IllegalArgumentException ex) {
				return null;
			}
		}

		private static boolean isDigits(String value) {
			for (int i = 0; i < value.length(); i++) {
				char ch = value.charAt(i);
				if (ch < '0' || ch > '9') {
					return false;
				}
			}
			return true;
		}

		// min(maxBackoff, initialBackoff * 2^(attempt - 1)), without overflowing
		private long backoffCap(int attempt) {
			int shift = Math.min(attempt - 1, 62);
			if (this.initialBackoff > (this.maxBackoff >> shift)) {
				return this.maxBackoff;
			}
			return Math.min(this.initialBackoff << shift, this.maxBackoff);
		}

		// saturates far below overflow (about 146 years),
		// so that sums and "+ 1" stay safe
		private static long nanos(Duration duration) {
			long limit = Long.MAX_VALUE / 2;
			try {
				return Math.min(duration.toNanos(), limit);
			}
			catch (ArithmeticException ex) {
				return limit;
			}
		}

	}

}
