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

package dev.idempotency.spring.metrics;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * An {@link IdempotencyStore} that times every operation of another one with the
 * {@value #OPERATIONS} timer, tagged {@code store}, {@code operation} and {@code result}:
 * <ul>
 * <li>{@code acquire}: {@code acquired}, {@code replay}, {@code in_progress},
 * {@code mismatch};
 * <li>{@code complete}, {@code release}, {@code extend}: {@code ok}, or {@code fenced}
 * when the caller no longer owned the record;
 * <li>{@code find}: {@code found} or {@code absent}; {@code evict}: {@code evicted} or
 * {@code absent};
 * <li>every operation: {@code error} when the store threw.
 * </ul>
 * The decorator changes no behaviour: results and exceptions pass through unchanged.
 * Thread-safe if the delegate is; timers are registered up front, so that timing an
 * operation does not allocate. No argument may be {@code null}.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class MeteredIdempotencyStore implements IdempotencyStore {

	/**
	 * Name of the timer of store operations.
	 */
	public static final String OPERATIONS = "idempotency.store.operations";

	private static final String ERROR = "error";

	private final IdempotencyStore delegate;

	private final Timer acquired;

	private final Timer replay;

	private final Timer inProgress;

	private final Timer mismatch;

	private final Timer acquireError;

	private final Timer[] complete;

	private final Timer[] release;

	private final Timer[] extend;

	private final Timer[] find;

	private final Timer[] evict;

	/**
	 * Create a metered store.
	 * @param delegate the store to time
	 * @param registry the registry of the timers
	 * @param storeName the value of the {@code store} tag, such as {@code redis}
	 */
	public MeteredIdempotencyStore(IdempotencyStore delegate, MeterRegistry registry, String storeName) {
		this.delegate = Objects.requireNonNull(delegate, "'delegate' must not be null");
		Objects.requireNonNull(registry, "'registry' must not be null");
		Objects.requireNonNull(storeName, "'storeName' must not be null");
		this.acquired = timer(registry, storeName, "acquire", "acquired");
		this.replay = timer(registry, storeName, "acquire", "replay");
		this.inProgress = timer(registry, storeName, "acquire", "in_progress");
		this.mismatch = timer(registry, storeName, "acquire", "mismatch");
		this.acquireError = timer(registry, storeName, "acquire", ERROR);
		this.complete = timers(registry, storeName, "complete", "ok", "fenced");
		this.release = timers(registry, storeName, "release", "ok", "fenced");
		this.extend = timers(registry, storeName, "extend", "ok", "fenced");
		this.find = timers(registry, storeName, "find", "found", "absent");
		this.evict = timers(registry, storeName, "evict", "evicted", "absent");
	}

	/**
	 * Return the value of the {@code store} tag for a store: its
	 * {@link IdempotencyStore#name() name}.
	 * @param store the store
	 * @return the tag value
	 */
	public static String storeName(IdempotencyStore store) {
		return store.name();
	}

	/**
	 * Return the store whose operations are timed.
	 * @return the delegate
	 */
	public IdempotencyStore getDelegate() {
		return this.delegate;
	}

	@Override
	public AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token, Duration lease,
			Duration ttl) {
		long start = System.nanoTime();
		AcquireResult result;
		try {
			result = this.delegate.acquire(key, fingerprint, token, lease, ttl);
		}
		catch (RuntimeException ex) {
			record(this.acquireError, start);
			throw ex;
		}
		record(timerOf(result), start);
		return result;
	}

	@Override
	public boolean complete(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
		long start = System.nanoTime();
		boolean result;
		try {
			result = this.delegate.complete(key, token, response, ttl);
		}
		catch (RuntimeException ex) {
			record(this.complete[2], start);
			throw ex;
		}
		record(this.complete[result ? 0 : 1], start);
		return result;
	}

	@Override
	public boolean release(IdempotencyKey key, OwnerToken token) {
		long start = System.nanoTime();
		boolean result;
		try {
			result = this.delegate.release(key, token);
		}
		catch (RuntimeException ex) {
			record(this.release[2], start);
			throw ex;
		}
		record(this.release[result ? 0 : 1], start);
		return result;
	}

	@Override
	public boolean extend(IdempotencyKey key, OwnerToken token, Duration lease) {
		long start = System.nanoTime();
		boolean result;
		try {
			result = this.delegate.extend(key, token, lease);
		}
		catch (RuntimeException ex) {
			record(this.extend[2], start);
			throw ex;
		}
		record(this.extend[result ? 0 : 1], start);
		return result;
	}

	@Override
	public Optional<IdempotencyRecord> find(IdempotencyKey key) {
		long start = System.nanoTime();
		Optional<IdempotencyRecord> result;
		try {
			result = this.delegate.find(key);
		}
		catch (RuntimeException ex) {
			record(this.find[2], start);
			throw ex;
		}
		record(this.find[result.isPresent() ? 0 : 1], start);
		return result;
	}

	@Override
	public boolean evict(IdempotencyKey key) {
		long start = System.nanoTime();
		boolean result;
		try {
			result = this.delegate.evict(key);
		}
		catch (RuntimeException ex) {
			record(this.evict[2], start);
			throw ex;
		}
		record(this.evict[result ? 0 : 1], start);
		return result;
	}

	@Override
	public String toString() {
		return "MeteredIdempotencyStore[" + this.delegate + "]";
	}

	private Timer timerOf(AcquireResult result) {
		if (result instanceof AcquireResult.Acquired) {
			return this.acquired;
		}
		if (result instanceof AcquireResult.Replay) {
			return this.replay;
		}
		if (result instanceof AcquireResult.InProgress) {
			return this.inProgress;
		}
		return this.mismatch;
	}

	private static void record(Timer timer, long start) {
		timer.record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
	}

	// [positive result, negative result, error]
	private static Timer[] timers(MeterRegistry registry, String store, String operation, String positive,
			String negative) {
		return new Timer[] { timer(registry, store, operation, positive), timer(registry, store, operation, negative),
				timer(registry, store, operation, ERROR) };
	}

	private static Timer timer(MeterRegistry registry, String store, String operation, String result) {
		return Timer.builder(OPERATIONS)
			.description("Operations of the idempotency store")
			.tag("store", store)
			.tag("operation", operation)
			.tag("result", result)
			.register(registry);
	}

}
