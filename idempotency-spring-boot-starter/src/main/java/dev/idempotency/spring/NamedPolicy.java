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

package dev.idempotency.spring;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

import dev.idempotency.core.StoredResponseCodec;
import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.core.engine.StatusSet;
import dev.idempotency.core.fingerprint.RequestFingerprinter;
import org.jspecify.annotations.Nullable;

/**
 * One named policy of the application ({@code idempotency.policies.<name>}, or the
 * {@value IdempotencyPolicy#DEFAULT_NAME} one of the global settings), as every entry
 * point uses it: the engine's {@link IdempotencyPolicy} and what the entry points add to
 * it (the fingerprinter, the body limits, the range of TTLs a client may ask for, where a
 * request carries its key). The HTTP filter, the {@code IdempotencyTemplate}, idempotent
 * bean methods and Kafka listeners all read the same instance, resolved once from the
 * bound properties.
 * <p>
 * Immutable and thread-safe.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 * @see NamedPolicies
 */
public final class NamedPolicy {

	/**
	 * Largest body size accepted for requests.
	 */
	public static final int MAX_BODY_SIZE = Integer.MAX_VALUE - 8;

	private final IdempotencyPolicy engine;

	private final RequestFingerprinter fingerprinter;

	private final List<String> fingerprintHeaders;

	private final int maxRequestBody;

	private final int maxResponseBody;

	private final Duration minTtl;

	private final Duration maxTtl;

	private final IdempotencyKeySource keySource;

	// a call's outcome has no HTTP status: every one is stored
	private final IdempotencyPolicy call;

	// the same, for a call whose claim joins the transaction of a transactional
	// request: the transaction holds the claim, which needs no lease renewed
	private final IdempotencyPolicy joinedCall;

	/**
	 * Create a policy, checking its arguments.
	 * @param engine the engine's policy (name, TTL, lock timeout, in-flight wait, store
	 * failure mode, non-storable statuses)
	 * @param fingerprinter the fingerprinter of the policy's requests
	 * @param fingerprintHeaders names of the request headers that take part in the
	 * fingerprint
	 * @param maxRequestBody largest request body, from 0 to {@value #MAX_BODY_SIZE}
	 * @param maxResponseBody largest stored response body, from 0 to
	 * {@value StoredResponseCodec#MAX_BODY_SIZE}
	 * @param minTtl shortest TTL a client may ask for with the client TTL header,
	 * positive
	 * @param maxTtl longest TTL a client may ask for, not shorter than {@code minTtl} nor
	 * than the lock timeout
	 * @param keySource where the requests carry their key
	 * @throws IllegalArgumentException if a limit is out of range
	 */
	public NamedPolicy(IdempotencyPolicy engine, RequestFingerprinter fingerprinter, List<String> fingerprintHeaders,
			int maxRequestBody, int maxResponseBody, Duration minTtl, Duration maxTtl, IdempotencyKeySource keySource) {
		this.engine = Objects.requireNonNull(engine, "'engine' must not be null");
		this.fingerprinter = Objects.requireNonNull(fingerprinter, "'fingerprinter' must not be null");
		this.fingerprintHeaders = List
			.copyOf(Objects.requireNonNull(fingerprintHeaders, "'fingerprintHeaders' must not be null"));
		this.minTtl = Objects.requireNonNull(minTtl, "'minTtl' must not be null");
		this.maxTtl = Objects.requireNonNull(maxTtl, "'maxTtl' must not be null");
		this.keySource = Objects.requireNonNull(keySource, "'keySource' must not be null");
		if (maxRequestBody < 0 || maxRequestBody > MAX_BODY_SIZE) {
			throw new IllegalArgumentException("max-request-body must be between 0 and " + MAX_BODY_SIZE + " bytes");
		}
		if (maxResponseBody < 0 || maxResponseBody > StoredResponseCodec.MAX_BODY_SIZE) {
			// a larger stored body could never be read back
			throw new IllegalArgumentException(
					"max-response-body must be between 0 and " + StoredResponseCodec.MAX_BODY_SIZE + " bytes");
		}
		String problem = minTtlProblem(minTtl, maxTtl);
		if (problem != null) {
			throw new IllegalArgumentException("policy '" + engine.name() + "': min-ttl " + problem);
		}
		problem = maxTtlProblem(maxTtl, engine.lockTimeout());
		if (problem != null) {
			throw new IllegalArgumentException("policy '" + engine.name() + "': max-ttl " + problem);
		}
		this.maxRequestBody = maxRequestBody;
		this.maxResponseBody = maxResponseBody;
		this.call = engine.toBuilder().nonStorableStatuses(StatusSet.of()).transactional(false).build();
		this.joinedCall = engine.toBuilder().nonStorableStatuses(StatusSet.of()).transactional(true).build();
	}

	/**
	 * Create a policy whose requests carry their key in the filter's key header.
	 * @param engine the engine's policy
	 * @param fingerprinter the fingerprinter
	 * @param fingerprintHeaders the headers that take part in the fingerprint
	 * @param maxRequestBody largest request body, from 0 to {@value #MAX_BODY_SIZE}
	 * @param maxResponseBody largest stored response body, from 0 to
	 * {@value StoredResponseCodec#MAX_BODY_SIZE}
	 * @param minTtl shortest TTL a client may ask for, positive
	 * @param maxTtl longest TTL a client may ask for, not shorter than {@code minTtl} nor
	 * than the lock timeout
	 * @throws IllegalArgumentException if a limit is out of range
	 */
	public NamedPolicy(IdempotencyPolicy engine, RequestFingerprinter fingerprinter, List<String> fingerprintHeaders,
			int maxRequestBody, int maxResponseBody, Duration minTtl, Duration maxTtl) {
		this(engine, fingerprinter, fingerprintHeaders, maxRequestBody, maxResponseBody, minTtl, maxTtl,
				IdempotencyKeySource.keyHeader());
	}

	/**
	 * Return what is wrong with the shortest TTL a client may ask for.
	 * @param minTtl the shortest TTL
	 * @param maxTtl the longest TTL
	 * @return the problem, or {@code null} if there is none
	 */
	public static @Nullable String minTtlProblem(Duration minTtl, Duration maxTtl) {
		if (minTtl.isNegative() || minTtl.isZero()) {
			return "must be positive";
		}
		if (minTtl.compareTo(maxTtl) > 0) {
			return "must not be longer than max-ttl (" + maxTtl + ")";
		}
		return null;
	}

	/**
	 * Return what is wrong with the longest TTL a client may ask for.
	 * @param maxTtl the longest TTL
	 * @param lockTimeout the policy's lock timeout
	 * @return the problem, or {@code null} if there is none
	 */
	public static @Nullable String maxTtlProblem(Duration maxTtl, Duration lockTimeout) {
		if (maxTtl.compareTo(lockTimeout) < 0) {
			return "must not be shorter than the lock timeout (" + lockTimeout + ")";
		}
		return null;
	}

	/**
	 * Return the policy's name.
	 * @return the name
	 */
	public String name() {
		return this.engine.name();
	}

	/**
	 * Return the engine's policy of a request.
	 * @return the engine's policy
	 */
	public IdempotencyPolicy engine() {
		return this.engine;
	}

	/**
	 * Return the engine's policy of a call of a bean method, an
	 * {@code IdempotencyTemplate} or a Kafka listener: a call's outcome has no HTTP
	 * status, so none is left unstored.
	 * @param joined whether the call's claim joins the transaction of a transactional
	 * request, which then holds the claim without a lease to renew
	 * @return the engine's policy of the call
	 */
	public IdempotencyPolicy call(boolean joined) {
		return joined ? this.joinedCall : this.call;
	}

	/**
	 * Return the fingerprinter of the policy's requests.
	 * @return the fingerprinter
	 */
	public RequestFingerprinter fingerprinter() {
		return this.fingerprinter;
	}

	/**
	 * Return the names of the request headers that take part in the fingerprint.
	 * @return the names, unmodifiable
	 */
	public List<String> fingerprintHeaders() {
		return this.fingerprintHeaders;
	}

	/**
	 * Return the largest request body accepted.
	 * @return the size in bytes
	 */
	public int maxRequestBody() {
		return this.maxRequestBody;
	}

	/**
	 * Return the largest response body (or stored result) kept for replay.
	 * @return the size in bytes, at most {@link StoredResponseCodec#MAX_BODY_SIZE}
	 */
	public int maxResponseBody() {
		return this.maxResponseBody;
	}

	/**
	 * Return the shortest TTL a client may ask for with the client TTL header.
	 * @return the TTL
	 */
	public Duration minTtl() {
		return this.minTtl;
	}

	/**
	 * Return the longest TTL a client may ask for with the client TTL header.
	 * @return the TTL
	 */
	public Duration maxTtl() {
		return this.maxTtl;
	}

	/**
	 * Return where the requests carry their key.
	 * @return the key source
	 */
	public IdempotencyKeySource keySource() {
		return this.keySource;
	}

	/**
	 * Return whether the requests of this policy run in one transaction with their claim
	 * and stored response.
	 * @return whether the policy is transactional
	 */
	public boolean transactional() {
		return this.engine.transactional();
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
		if (ttl.compareTo(this.engine.lockTimeout()) < 0) {
			ttl = this.engine.lockTimeout();
		}
		return ttl.equals(this.engine.ttl()) ? this.engine : this.engine.toBuilder().ttl(ttl).build();
	}

	@Override
	public String toString() {
		return "NamedPolicy '" + name() + "'";
	}

}
