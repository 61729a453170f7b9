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

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration properties of the client side, under {@code idempotency.client}.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 * @see IdempotentRetryInterceptor
 * @see IdempotentRetryFilter
 */
@ConfigurationProperties("idempotency.client")
public class IdempotencyClientProperties {

	/**
	 * Whether to add the idempotent retry interceptor to every auto-configured
	 * RestClient.Builder, and the idempotent retry filter to every auto-configured
	 * WebClient.Builder.
	 */
	private boolean enabled = false;

	/**
	 * Name of the header that carries the idempotency key.
	 */
	private String keyHeader = "Idempotency-Key";

	/**
	 * HTTP methods whose requests are given a key and retried.
	 */
	private String[] methods = { "POST", "PATCH" };

	/**
	 * Maximum number of attempts of a request, the first included.
	 */
	private int maxAttempts = 5;

	/**
	 * Back-off cap of the first retry, doubled at each further retry up to max-backoff.
	 */
	private Duration initialBackoff = Duration.ofMillis(100);

	/**
	 * Largest back-off cap.
	 */
	private Duration maxBackoff = Duration.ofSeconds(5);

	/**
	 * Time budget of a request, from the start of its first attempt; no attempt starts
	 * after it.
	 */
	private Duration maxElapsed = Duration.ofSeconds(30);

	/**
	 * Response statuses that are retried.
	 */
	private int[] retryStatuses = { 409, 429, 502, 503, 504 };

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public String getKeyHeader() {
		return this.keyHeader;
	}

	public void setKeyHeader(String keyHeader) {
		this.keyHeader = keyHeader;
	}

	public String[] getMethods() {
		return this.methods;
	}

	public void setMethods(String[] methods) {
		this.methods = methods;
	}

	public int getMaxAttempts() {
		return this.maxAttempts;
	}

	public void setMaxAttempts(int maxAttempts) {
		this.maxAttempts = maxAttempts;
	}

	public Duration getInitialBackoff() {
		return this.initialBackoff;
	}

	public void setInitialBackoff(Duration initialBackoff) {
		this.initialBackoff = initialBackoff;
	}

	public Duration getMaxBackoff() {
		return this.maxBackoff;
	}

	public void setMaxBackoff(Duration maxBackoff) {
		this.maxBackoff = maxBackoff;
	}

	public Duration getMaxElapsed() {
		return this.maxElapsed;
	}

	public void setMaxElapsed(Duration maxElapsed) {
		this.maxElapsed = maxElapsed;
	}

	public int[] getRetryStatuses() {
		return this.retryStatuses;
	}

	public void setRetryStatuses(int[] retryStatuses) {
		this.retryStatuses = retryStatuses;
	}

}
