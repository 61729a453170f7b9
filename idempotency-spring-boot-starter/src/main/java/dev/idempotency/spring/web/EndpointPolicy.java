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

import java.time.Duration;
import java.util.List;
import java.util.Objects;

import dev.idempotency.core.StoredResponseCodec;
import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.core.fingerprint.RequestFingerprinter;

/**
 * Everything the {@link IdempotencyFilter} needs to know about one named policy: the
 * engine's {@link IdempotencyPolicy} plus the HTTP-specific settings.
 * <p>
 * Immutable and thread-safe.
 *
 * @param policy the engine's policy (name, TTL, lock timeout, in-flight wait, store
 * failure mode, non-storable statuses), never {@code null}
 * @param fingerprinter the fingerprinter of the policy's requests, never {@code null}
 * @param fingerprintHeaders names of the request headers that take part in the
 * fingerprint, never {@code null}
 * @param maxRequestBody largest request body accepted, in bytes
 * @param maxResponseBody largest response body stored for replay, in bytes, at most
 * {@link StoredResponseCodec#MAX_BODY_SIZE}
 * @param minTtl shortest TTL a client may ask for with the client TTL header
 * @param maxTtl longest TTL a client may ask for with the client TTL header
 * @param keySource where the requests carry their key, never {@code null}
 * @author Idempotency contributors
 * @since 0.1.0
 */
public record EndpointPolicy(IdempotencyPolicy policy, RequestFingerprinter fingerprinter,
		List<String> fingerprintHeaders, int maxRequestBody, int maxResponseBody, Duration minTtl, Duration maxTtl,
		IdempotencyKeySource keySource) {

	/**
	 * Largest body size accepted for requests.
	 */
	public static final int MAX_BODY_SIZE = Integer.MAX_VALUE - 8;

	/**
	 * Create a policy, checking its arguments.
	 * @param policy the engine's policy
	 * @param fingerprinter the fingerprinter
	 * @param fingerprintHeaders the headers that take part in the fingerprint
	 * @param maxRequestBody largest request body, from 0 to {@value #MAX_BODY_SIZE}
	 * @param maxResponseBody largest stored response body, from 0 to
	 * {@value StoredResponseCodec#MAX_BODY_SIZE}
	 * @param minTtl shortest TTL a client may ask for, positive
	 * @param maxTtl longest TTL a client may ask for, not shorter than {@code minTtl}
	 * @param keySource where the requests carry their key
	 */
	public EndpointPolicy {
		Objects.requireNonNull(policy, "'policy' must not be null");
		Objects.requireNonNull(fingerprinter, "'fingerprinter' must not be null");
		fingerprintHeaders = List
			.copyOf(Objects.requireNonNull(fingerprintHeaders, "'fingerprintHeaders' must not be null"));
		Objects.requireNonNull(minTtl, "'minTtl' must not be null");
		Objects.requireNonNull(maxTtl, "'maxTtl' must not be null");
		Objects.requireNonNull(keySource, "'keySource' must not be null");
		if (maxRequestBody < 0 || maxRequestBody > MAX_BODY_SIZE) {
			throw new IllegalArgumentException("max-request-body must be between 0 and " + MAX_BODY_SIZE + " bytes");
		}
		if (maxResponseBody < 0 || maxResponseBody > StoredResponseCodec.MAX_BODY_SIZE) {
			// a larger stored body could never be read back
			throw new IllegalArgumentException(
					"max-response-body must be between 0 and " + StoredResponseCodec.MAX_BODY_SIZE + " bytes");
		}
		if (minTtl.isNegative() || minTtl.isZero() || maxTtl.compareTo(minTtl) < 0) {
			throw new IllegalArgumentException(
					"policy '" + policy.name() + "': min-ttl must be positive and not longer than max-ttl");
		}
	}

	/**
	 * Create a policy whose requests carry their key in the filter's key header.
	 * @param policy the engine's policy
	 * @param fingerprinter the fingerprinter
	 * @param fingerprintHeaders the headers that take part in the fingerprint
	 * @param maxRequestBody largest request body, from 0 to {@value #MAX_BODY_SIZE}
	 * @param maxResponseBody largest stored response body, from 0 to
	 * {@value StoredResponseCodec#MAX_BODY_SIZE}
	 * @param minTtl shortest TTL a client may ask for, positive
	 * @param maxTtl longest TTL a client may ask for, not shorter than {@code minTtl}
	 */
	public EndpointPolicy(IdempotencyPolicy policy, RequestFingerprinter fingerprinter, List<String> fingerprintHeaders,
			int maxRequestBody, int maxResponseBody, Duration minTtl, Duration maxTtl) {
		this(policy, fingerprinter, fingerprintHeaders, maxRequestBody, maxResponseBody, minTtl, maxTtl,
				IdempotencyKeySource.keyHeader());
	}

	/**
	 * Return the policy's name.
	 * @return the name
	 */
	public String name() {
		return this.policy.name();
	}

	/**
	 * Return whether the requests of this policy run in one transaction with their claim
	 * and stored response.
	 * @return whether the policy is transactional
	 */
	public boolean transactional() {
		return this.policy.transactional();
	}

	/**
	 * Return the engine policy for a request whose client asked for the given TTL: the
	 * TTL is clamped to {@link #minTtl()} and {@link #maxTtl()}, and never shorter than
	 * the lock timeout.
	 * @param requested the TTL the client asked for, never {@code null}
	 * @return the policy to use for that request
	 */
	public IdempotencyPolicy withClientTtl(Duration requested) {
		Duration ttl = requested;
		if (ttl.compareTo(this.minTtl) < 0) {
			ttl = this.minTtl;
		}
		if (ttl.compareTo(this.maxTtl) > 0) {
			ttl = this.maxTtl;
		}
		if (ttl.compareTo(this.policy.lockTimeout()) < 0) {
			ttl = this.policy.lockTimeout();
		}
		if (ttl.equals(this.policy.ttl())) {
			return this.policy;
		}
		return new IdempotencyPolicy(this.policy.name(), ttl, this.policy.lockTimeout(), this.policy.inFlightWait(),
				this.policy.onStoreFailure(), this.policy.nonStorableStatuses(), this.policy.unavailableRetryAfter(),
				this.policy.inProgressRetryAfter(), this.policy.transactional(), this.policy.maxExecutionTime());
	}

}
