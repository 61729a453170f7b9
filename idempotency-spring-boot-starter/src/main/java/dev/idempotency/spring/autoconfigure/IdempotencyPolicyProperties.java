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

package dev.idempotency.spring.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.core.engine.StatusSet;
import dev.idempotency.core.engine.StoreFailureMode;
import dev.idempotency.spring.autoconfigure.IdempotencyProperties.JsonMode;
import org.jspecify.annotations.Nullable;

import org.springframework.util.unit.DataSize;

/**
 * Settings of an idempotency policy: the global ones ({@code idempotency.*}, where
 * {@link IdempotencyProperties} gives each its default) and those of each named policy
 * ({@code idempotency.policies.<name>.*}, where a setting left unset, {@code null},
 * inherits the global one).
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public class IdempotencyPolicyProperties {

	/**
	 * How long the response of a completed request is kept and replayed.
	 */
	private @Nullable Duration ttl;

	/**
	 * Lease of the request that runs a handler: how long a crashed instance blocks its
	 * key before another request may take it over. Running handlers renew it.
	 */
	private @Nullable Duration lockTimeout;

	/**
	 * How long the lease of a running handler is renewed. A handler still running after
	 * it (hung, say) loses its key once its lease lapses, one lock timeout later: another
	 * request or delivery may then take the key over, and the hung handler's completion
	 * is rejected. Defaults to ten lock timeouts.
	 */
	private @Nullable Duration maxExecutionTime;

	/**
	 * How long a duplicate of a request that is still in progress waits for it to
	 * complete before it is answered with 409. Zero answers at once.
	 */
	private @Nullable Duration inFlightWait;

	/**
	 * Largest request body accepted on an idempotent endpoint; larger requests are
	 * answered with 413 before the handler runs.
	 */
	private @Nullable DataSize maxRequestBody;

	/**
	 * Largest response body stored for replay, at most 64MB. A larger response is
	 * delivered but only its status is kept, and a retry is answered with a
	 * 'response-not-replayable' problem.
	 */
	private @Nullable DataSize maxResponseBody;

	/**
	 * What to do when the store cannot answer: refuse the request with 503 (fail-closed),
	 * or run it without protection (fail-open).
	 */
	private @Nullable StoreFailureMode onStoreFailure;

	/**
	 * Response statuses that are not stored: the key is released so that a retry runs the
	 * handler again. Comma-separated codes and classes such as 5xx.
	 */
	private @Nullable StatusSet nonStorableStatuses;

	/**
	 * Retry-After advertised when the store is unavailable.
	 */
	private @Nullable Duration unavailableRetryAfter;

	/**
	 * Retry-After advertised with 409 to a duplicate of a request still in progress,
	 * never more than the remaining lease and at least one second. When the owner is
	 * known to be gone (a takeover being confirmed), the remaining wait is sent instead.
	 */
	private @Nullable Duration inProgressRetryAfter;

	/**
	 * Whether the durable claim, the handler's own writes to the same PostgreSQL or
	 * MariaDB database and the stored response commit in one transaction, begun by the
	 * filter, or none of them does. Needs the jdbc or tiered store and a transaction
	 * manager of the store's DataSource; the response reaches the client after the
	 * commit.
	 */
	private @Nullable Boolean transactional;

	/**
	 * Shortest TTL a client may ask for with the client TTL header.
	 */
	private @Nullable Duration minTtl;

	/**
	 * Longest TTL a client may ask for with the client TTL header.
	 */
	private @Nullable Duration maxTtl;

	/**
	 * Exception types that an idempotent method or operation stores and throws again on
	 * every retry, instead of releasing its key (a subclass of one is included). Each
	 * needs a public constructor taking a String message, or one without arguments.
	 */
	private @Nullable List<Class<? extends Throwable>> deterministicExceptions;

	private final Fingerprint fingerprint = new Fingerprint();

	private final Key key = new Key();

	/**
	 * Return settings that are all set to their defaults, those of the engine's
	 * {@link IdempotencyPolicy} where it has one.
	 * @return new settings
	 */
	static IdempotencyPolicyProperties defaults() {
		IdempotencyPolicyProperties defaults = new IdempotencyPolicyProperties();
		defaults.ttl = IdempotencyPolicy.DEFAULT_TTL;
		defaults.lockTimeout = IdempotencyPolicy.DEFAULT_LOCK_TIMEOUT;
		defaults.inFlightWait = IdempotencyPolicy.DEFAULT_IN_FLIGHT_WAIT;
		defaults.maxRequestBody = DataSize.ofMegabytes(1);
		defaults.maxResponseBody = DataSize.ofMegabytes(1);
		defaults.onStoreFailure = IdempotencyPolicy.DEFAULT_ON_STORE_FAILURE;
		defaults.nonStorableStatuses = StatusSet.DEFAULT_NON_STORABLE;
		defaults.unavailableRetryAfter = IdempotencyPolicy.DEFAULT_UNAVAILABLE_RETRY_AFTER;
		defaults.inProgressRetryAfter = IdempotencyPolicy.DEFAULT_IN_PROGRESS_RETRY_AFTER;
		defaults.transactional = false;
		defaults.minTtl = Duration.ofMinutes(1);
		defaults.maxTtl = Duration.ofDays(7);
		defaults.deterministicExceptions = new ArrayList<>();
		defaults.fingerprint.headers = new ArrayList<>();
		defaults.fingerprint.json = JsonMode.CANONICAL;
		defaults.fingerprint.excludedJsonPointers = new ArrayList<>();
		return defaults;
	}

	/**
	 * Return these settings with every unset one taken from the given fallback. Neither
	 * this instance nor the fallback is changed.
	 * @param fallback the settings inherited
	 * @return new settings
	 */
	IdempotencyPolicyProperties orElse(IdempotencyPolicyProperties fallback) {
		IdempotencyPolicyProperties merged = new IdempotencyPolicyProperties();
		merged.inherit(this);
		merged.inherit(fallback);
		return merged;
	}

	/**
	 * Set every setting that is unset here to the given one.
	 * @param source the settings to take
	 */
	final void inherit(IdempotencyPolicyProperties source) {
		this.ttl = firstSet(this.ttl, source.ttl);
		this.lockTimeout = firstSet(this.lockTimeout, source.lockTimeout);
		this.maxExecutionTime = firstSet(this.maxExecutionTime, source.maxExecutionTime);
		this.inFlightWait = firstSet(this.inFlightWait, source.inFlightWait);
		this.maxRequestBody = firstSet(this.maxRequestBody, source.maxRequestBody);
		this.maxResponseBody = firstSet(this.maxResponseBody, source.maxResponseBody);
		this.onStoreFailure = firstSet(this.onStoreFailure, source.onStoreFailure);
		this.nonStorableStatuses = firstSet(this.nonStorableStatuses, source.nonStorableStatuses);
		this.unavailableRetryAfter = firstSet(this.unavailableRetryAfter, source.unavailableRetryAfter);
		this.inProgressRetryAfter = firstSet(this.inProgressRetryAfter, source.inProgressRetryAfter);
		this.transactional = firstSet(this.transactional, source.transactional);
		this.minTtl = firstSet(this.minTtl, source.minTtl);
		this.maxTtl = firstSet(this.maxTtl, source.maxTtl);
		this.deterministicExceptions = firstSet(this.deterministicExceptions, source.deterministicExceptions);
		this.fingerprint.headers = firstSet(this.fingerprint.headers, source.fingerprint.headers);
		this.fingerprint.json = firstSet(this.fingerprint.json, source.fingerprint.json);
		this.fingerprint.excludedJsonPointers = firstSet(this.fingerprint.excludedJsonPointers,
				source.fingerprint.excludedJsonPointers);
	}

	private static <T> @Nullable T firstSet(@Nullable T value, @Nullable T fallback) {
		return (value != null) ? value : fallback;
	}

	public @Nullable Duration getTtl() {
		return this.ttl;
	}

	public void setTtl(@Nullable Duration ttl) {
		this.ttl = ttl;
	}

	public @Nullable Duration getLockTimeout() {
		return this.lockTimeout;
	}

	public void setLockTimeout(@Nullable Duration lockTimeout) {
		this.lockTimeout = lockTimeout;
	}

	public @Nullable Duration getMaxExecutionTime() {
		return this.maxExecutionTime;
	}

	public void setMaxExecutionTime(@Nullable Duration maxExecutionTime) {
		this.maxExecutionTime = maxExecutionTime;
	}

	public @Nullable Duration getInFlightWait() {
		return this.inFlightWait;
	}

	public void setInFlightWait(@Nullable Duration inFlightWait) {
		this.inFlightWait = inFlightWait;
	}

	public @Nullable DataSize getMaxRequestBody() {
		return this.maxRequestBody;
	}

	public void setMaxRequestBody(@Nullable DataSize maxRequestBody) {
		this.maxRequestBody = maxRequestBody;
	}

	public @Nullable DataSize getMaxResponseBody() {
		return this.maxResponseBody;
	}

	public void setMaxResponseBody(@Nullable DataSize maxResponseBody) {
		this.maxResponseBody = maxResponseBody;
	}

	public @Nullable StoreFailureMode getOnStoreFailure() {
		return this.onStoreFailure;
	}

	public void setOnStoreFailure(@Nullable StoreFailureMode onStoreFailure) {
		this.onStoreFailure = onStoreFailure;
	}

	public @Nullable StatusSet getNonStorableStatuses() {
		return this.nonStorableStatuses;
	}

	public void setNonStorableStatuses(@Nullable StatusSet nonStorableStatuses) {
		this.nonStorableStatuses = nonStorableStatuses;
	}

	public @Nullable Duration getUnavailableRetryAfter() {
		return this.unavailableRetryAfter;
	}

	public void setUnavailableRetryAfter(@Nullable Duration unavailableRetryAfter) {
		this.unavailableRetryAfter = unavailableRetryAfter;
	}

	public @Nullable Duration getInProgressRetryAfter() {
		return this.inProgressRetryAfter;
	}

	public void setInProgressRetryAfter(@Nullable Duration inProgressRetryAfter) {
		this.inProgressRetryAfter = inProgressRetryAfter;
	}

	public @Nullable Boolean getTransactional() {
		return this.transactional;
	}

	public void setTransactional(@Nullable Boolean transactional) {
		this.transactional = transactional;
	}

	public @Nullable Duration getMinTtl() {
		return this.minTtl;
	}

	public void setMinTtl(@Nullable Duration minTtl) {
		this.minTtl = minTtl;
	}

	public @Nullable Duration getMaxTtl() {
		return this.maxTtl;
	}

	public void setMaxTtl(@Nullable Duration maxTtl) {
		this.maxTtl = maxTtl;
	}

	public @Nullable List<Class<? extends Throwable>> getDeterministicExceptions() {
		return this.deterministicExceptions;
	}

	public void setDeterministicExceptions(@Nullable List<Class<? extends Throwable>> deterministicExceptions) {
		this.deterministicExceptions = deterministicExceptions;
	}

	public Fingerprint getFingerprint() {
		return this.fingerprint;
	}

	public Key getKey() {
		return this.key;
	}

	/**
	 * What the request fingerprint covers besides method, path, query, content type and
	 * body.
	 */
	public static class Fingerprint {

		/**
		 * Names of request headers that take part in the fingerprint.
		 */
		private @Nullable List<String> headers;

		/**
		 * How JSON bodies are fingerprinted: canonical (member order and whitespace do
		 * not matter) or raw bytes.
		 */
		private @Nullable JsonMode json;

		/**
		 * JSON Pointers (RFC 6901) of volatile members of JSON bodies, such as a client
		 * timestamp, that are left out of the fingerprint.
		 */
		private @Nullable List<String> excludedJsonPointers;

		public @Nullable List<String> getHeaders() {
			return this.headers;
		}

		public void setHeaders(@Nullable List<String> headers) {
			this.headers = headers;
		}

		public @Nullable JsonMode getJson() {
			return this.json;
		}

		public void setJson(@Nullable JsonMode json) {
			this.json = json;
		}

		public @Nullable List<String> getExcludedJsonPointers() {
			return this.excludedJsonPointers;
		}

		public void setExcludedJsonPointers(@Nullable List<String> excludedJsonPointers) {
			this.excludedJsonPointers = excludedJsonPointers;
		}

	}

	/**
	 * Where the requests of a named policy carry their idempotency key, when not in the
	 * key header ({@code idempotency.key-header}): set one of the two, for example for a
	 * webhook receiver. Not inherited: a policy's key source is its own.
	 */
	public static class Key {

		/**
		 * Name of the request header that carries the key instead of the key header, such
		 * as the webhook-id header of the Standard Webhooks convention.
		 */
		private @Nullable String header;

		/**
		 * JSON Pointer (RFC 6901) to the key in the JSON request body instead of a
		 * header, such as /id for the identifier of a webhook event. A key in the body is
		 * always required.
		 */
		private @Nullable String jsonPointer;

		public @Nullable String getHeader() {
			return this.header;
		}

		public void setHeader(@Nullable String header) {
			this.header = header;
		}

		public @Nullable String getJsonPointer() {
			return this.jsonPointer;
		}

		public void setJsonPointer(@Nullable String jsonPointer) {
			this.jsonPointer = jsonPointer;
		}

	}

}
