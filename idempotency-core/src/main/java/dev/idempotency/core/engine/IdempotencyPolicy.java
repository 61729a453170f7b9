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

package dev.idempotency.core.engine;

import java.time.Duration;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * How the engine treats the requests of one endpoint or group of endpoints.
 * <p>
 * Instances are immutable and thread-safe. Create them with {@link #builder()}; every
 * setting has a default.
 *
 * @param name the policy's name, used in metrics and logs, never {@code null}
 * @param ttl how long a completed record is kept and replayed
 * @param lockTimeout the lease of the owner of a key: how long a crashed owner blocks the
 * key before another request may take over; live owners extend it by heartbeat
 * @param inFlightWait how long a duplicate of a request still in progress waits for its
 * completion before it is answered as in progress; zero answers at once
 * @param onStoreFailure what to do when the store cannot answer
 * @param nonStorableStatuses statuses whose responses are not stored: the key is released
 * so that a retry runs the handler again
 * @param unavailableRetryAfter the {@code Retry-After} advertised when the store is
 * unavailable
 * @param inProgressRetryAfter the {@code Retry-After} advertised to a duplicate of a
 * request still in progress; never more than the owner's remaining lease, at least one
 * second
 * @param transactional whether the store's claim and completion are made in the caller's
 * own transaction, with the handler's work: the transaction then holds the key until it
 * ends (a crashed owner's transaction is rolled back by the database), so the engine
 * renews no lease; the caller commits or rolls back the claim with its work
 * @param maxExecutionTime how long the heartbeat renews the lease of a running handler:
 * after that a handler still running (hung) is taken to be lost, its lease lapses within
 * one lock timeout, and another request may take its key over (its own completion is then
 * rejected, fenced); {@code null} for the default,
 * {@value #DEFAULT_MAX_EXECUTION_LOCK_TIMEOUTS} lock timeouts
 * @author Idempotency contributors
 * @since 0.1.0
 */
public record IdempotencyPolicy(String name, Duration ttl, Duration lockTimeout, Duration inFlightWait,
		StoreFailureMode onStoreFailure, StatusSet nonStorableStatuses, Duration unavailableRetryAfter,
		Duration inProgressRetryAfter, boolean transactional, Duration maxExecutionTime) {

	/**
	 * Name of the policy used when an endpoint names none.
	 */
	public static final String DEFAULT_NAME = "default";

	/**
	 * Shortest lock timeout accepted: a heartbeat runs every third of it.
	 */
	public static final Duration MIN_LOCK_TIMEOUT = Duration.ofMillis(300);

	/**
	 * Default time a completed record is kept and replayed: a day covers the retries of
	 * clients that back off for hours.
	 */
	public static final Duration DEFAULT_TTL = Duration.ofHours(24);

	/**
	 * Default lease of the owner of a key.
	 */
	public static final Duration DEFAULT_LOCK_TIMEOUT = Duration.ofSeconds(30);

	/**
	 * Default wait of a duplicate for the completion of a request still in progress:
	 * none, it is answered at once.
	 */
	public static final Duration DEFAULT_IN_FLIGHT_WAIT = Duration.ZERO;

	/**
	 * Default reaction to a store that cannot answer: refuse the request.
	 */
	public static final StoreFailureMode DEFAULT_ON_STORE_FAILURE = StoreFailureMode.FAIL_CLOSED;

	/**
	 * Default {@code Retry-After} advertised when the store is unavailable.
	 */
	public static final Duration DEFAULT_UNAVAILABLE_RETRY_AFTER = Duration.ofSeconds(1);

	/**
	 * Default {@code Retry-After} advertised to a duplicate of a request still in
	 * progress.
	 */
	public static final Duration DEFAULT_IN_PROGRESS_RETRY_AFTER = Duration.ofSeconds(1);

	/**
	 * Default {@link #maxExecutionTime() maximum execution time}, in lock timeouts: ten,
	 * five minutes for the default lock timeout.
	 */
	public static final int DEFAULT_MAX_EXECUTION_LOCK_TIMEOUTS = 10;

	/**
	 * Create a policy with the default maximum execution time,
	 * {@value #DEFAULT_MAX_EXECUTION_LOCK_TIMEOUTS} lock timeouts.
	 * @param name the policy's name
	 * @param ttl how long completed records are kept
	 * @param lockTimeout the owner's lease
	 * @param inFlightWait how long duplicates wait for completion
	 * @param onStoreFailure what to do when the store fails
	 * @param nonStorableStatuses statuses that release the key
	 * @param unavailableRetryAfter the {@code Retry-After} when the store is unavailable
	 * @param inProgressRetryAfter the {@code Retry-After} for a duplicate in progress
	 * @param transactional whether the claim is made in the caller's transaction
	 * @throws IllegalArgumentException if a duration is out of range or the TTL is
	 * shorter than the lock timeout
	 */
	public IdempotencyPolicy(String name, Duration ttl, Duration lockTimeout, Duration inFlightWait,
			StoreFailureMode onStoreFailure, StatusSet nonStorableStatuses, Duration unavailableRetryAfter,
			Duration inProgressRetryAfter, boolean transactional) {
		this(name, ttl, lockTimeout, inFlightWait, onStoreFailure, nonStorableStatuses, unavailableRetryAfter,
				inProgressRetryAfter, transactional, null);
	}

	/**
	 * Create a policy, checking its settings.
	 * @param name the policy's name
	 * @param ttl how long completed records are kept
	 * @param lockTimeout the owner's lease
	 * @param inFlightWait how long duplicates wait for completion
	 * @param onStoreFailure what to do when the store fails
	 * @param nonStorableStatuses statuses that release the key
	 * @param unavailableRetryAfter the {@code Retry-After} when the store is unavailable
	 * @param inProgressRetryAfter the {@code Retry-After} for a duplicate in progress
	 * @param transactional whether the claim is made in the caller's transaction
	 * @param maxExecutionTime how long the heartbeat renews a running handler's lease,
	 * {@code null} for {@value #DEFAULT_MAX_EXECUTION_LOCK_TIMEOUTS} lock timeouts
	 * @throws IllegalArgumentException if a duration is out of range or the TTL is
	 * shorter than the lock timeout
	 */
	public IdempotencyPolicy {
		Objects.requireNonNull(name, "'name' must not be null");
		Objects.requireNonNull(ttl, "'ttl' must not be null");
		Objects.requireNonNull(lockTimeout, "'lockTimeout' must not be null");
		Objects.requireNonNull(inFlightWait, "'inFlightWait' must not be null");
		Objects.requireNonNull(onStoreFailure, "'onStoreFailure' must not be null");
		Objects.requireNonNull(nonStorableStatuses, "'nonStorableStatuses' must not be null");
		Objects.requireNonNull(unavailableRetryAfter, "'unavailableRetryAfter' must not be null");
		Objects.requireNonNull(inProgressRetryAfter, "'inProgressRetryAfter' must not be null");
		if (lockTimeout.compareTo(MIN_LOCK_TIMEOUT) < 0) {
			throw new IllegalArgumentException("policy '" + name + "': lock timeout " + lockTimeout
					+ " is shorter than the minimum " + MIN_LOCK_TIMEOUT);
		}
		if (ttl.compareTo(lockTimeout) < 0) {
			throw new IllegalArgumentException(
					"policy '" + name + "': ttl " + ttl + " must not be shorter than the lock timeout " + lockTimeout);
		}
		if (inFlightWait.isNegative() || unavailableRetryAfter.isNegative() || inProgressRetryAfter.isNegative()) {
			throw new IllegalArgumentException("policy '" + name + "': durations must not be negative");
		}
		if (maxExecutionTime == null) {
			maxExecutionTime = lockTimeout.multipliedBy(DEFAULT_MAX_EXECUTION_LOCK_TIMEOUTS);
		}
		if (maxExecutionTime.isNegative() || maxExecutionTime.isZero()) {
			throw new IllegalArgumentException(
					"policy '" + name + "': max execution time " + maxExecutionTime + " must be positive");
		}
	}

	/**
	 * Return a builder with the defaults: name {@value #DEFAULT_NAME}, TTL 24 hours
	 * ({@link #DEFAULT_TTL}), lock timeout 30 seconds, no in-flight wait, fail closed,
	 * {@link StatusSet#DEFAULT_NON_STORABLE}, {@code Retry-After} of 1 second when
	 * unavailable and when in progress (the {@code DEFAULT_} constants), not
	 * transactional, a maximum execution time of ten lock timeouts.
	 * @return a new builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * Return a builder that starts from this policy's settings, to make a policy that
	 * differs from it in a few of them.
	 * @return a new builder
	 */
	public Builder toBuilder() {
		return new Builder().name(this.name)
			.ttl(this.ttl)
			.lockTimeout(this.lockTimeout)
			.inFlightWait(this.inFlightWait)
			.onStoreFailure(this.onStoreFailure)
			.nonStorableStatuses(this.nonStorableStatuses)
			.unavailableRetryAfter(this.unavailableRetryAfter)
			.inProgressRetryAfter(this.inProgressRetryAfter)
			.transactional(this.transactional)
			.maxExecutionTime(this.maxExecutionTime);
	}

	/**
	 * Return the default policy.
	 * @return the policy built from {@link #builder()} as it is
	 */
	public static IdempotencyPolicy defaults() {
		return builder().build();
	}

	/**
	 * Builder of {@link IdempotencyPolicy} instances. Not thread-safe.
	 */
	public static final class Builder {

		private String name = DEFAULT_NAME;

		private Duration ttl = DEFAULT_TTL;

		private Duration lockTimeout = DEFAULT_LOCK_TIMEOUT;

		private Duration inFlightWait = DEFAULT_IN_FLIGHT_WAIT;

		private StoreFailureMode onStoreFailure = DEFAULT_ON_STORE_FAILURE;

		private StatusSet nonStorableStatuses = StatusSet.DEFAULT_NON_STORABLE;

		private Duration unavailableRetryAfter = DEFAULT_UNAVAILABLE_RETRY_AFTER;

		private Duration inProgressRetryAfter = DEFAULT_IN_PROGRESS_RETRY_AFTER;

		private boolean transactional;

		private @Nullable Duration maxExecutionTime;

		private Builder() {
		}

		/**
		 * Set the policy's name.
		 * @param name the name
		 * @return this builder
		 */
		public Builder name(String name) {
			this.name = name;
			return this;
		}

		/**
		 * Set how long completed records are kept.
		 * @param ttl the time to live
		 * @return this builder
		 */
		public Builder ttl(Duration ttl) {
			this.ttl = ttl;
			return this;
		}

		/**
		 * Set the owner's lease.
		 * @param lockTimeout the lock timeout
		 * @return this builder
		 */
		public Builder lockTimeout(Duration lockTimeout) {
			this.lockTimeout = lockTimeout;
			return this;
		}

		/**
		 * Set how long a duplicate waits for an in-flight request to complete.
		 * @param inFlightWait the wait, zero for none
		 * @return this builder
		 */
		public Builder inFlightWait(Duration inFlightWait) {
			this.inFlightWait = inFlightWait;
			return this;
		}

		/**
		 * Set what to do when the store fails.
		 * @param onStoreFailure the mode
		 * @return this builder
		 */
		public Builder onStoreFailure(StoreFailureMode onStoreFailure) {
			this.onStoreFailure = onStoreFailure;
			return this;
		}

		/**
		 * Set the statuses whose responses are not stored.
		 * @param nonStorableStatuses the statuses
		 * @return this builder
		 */
		public Builder nonStorableStatuses(StatusSet nonStorableStatuses) {
			this.nonStorableStatuses = nonStorableStatuses;
			return this;
		}

		/**
		 * Set the {@code Retry-After} advertised when the store is unavailable.
		 * @param unavailableRetryAfter the delay
		 * @return this builder
		 */
		public Builder unavailableRetryAfter(Duration unavailableRetryAfter) {
			this.unavailableRetryAfter = unavailableRetryAfter;
			return this;
		}

		/**
		 * Set the {@code Retry-After} advertised to a duplicate of a request still in
		 * progress. The engine never advertises more than the owner's remaining lease.
		 * @param inProgressRetryAfter the delay
		 * @return this builder
		 */
		public Builder inProgressRetryAfter(Duration inProgressRetryAfter) {
			this.inProgressRetryAfter = inProgressRetryAfter;
			return this;
		}

		/**
		 * Set whether the store's claim and completion are made in the caller's own
		 * transaction. Defaults to {@code false}.
		 * @param transactional whether the claim is made in the caller's transaction
		 * @return this builder
		 */
		public Builder transactional(boolean transactional) {
			this.transactional = transactional;
			return this;
		}

		/**
		 * Set how long the heartbeat renews the lease of a running handler. Defaults to
		 * {@value #DEFAULT_MAX_EXECUTION_LOCK_TIMEOUTS} lock timeouts.
		 * @param maxExecutionTime the time, or {@code null} for the default
		 * @return this builder
		 */
		public Builder maxExecutionTime(@Nullable Duration maxExecutionTime) {
			this.maxExecutionTime = maxExecutionTime;
			return this;
		}

		/**
		 * Build the policy.
		 * @return the policy
		 * @throws IllegalArgumentException if the settings are inconsistent
		 */
		public IdempotencyPolicy build() {
			return new IdempotencyPolicy(this.name, this.ttl, this.lockTimeout, this.inFlightWait, this.onStoreFailure,
					this.nonStorableStatuses, this.unavailableRetryAfter, this.inProgressRetryAfter, this.transactional,
					this.maxExecutionTime);
		}

	}

}
