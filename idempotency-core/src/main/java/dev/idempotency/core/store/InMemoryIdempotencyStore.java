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

package dev.idempotency.core.store;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.IdempotencyStatus;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import org.jspecify.annotations.Nullable;

/**
 * {@link IdempotencyStore} that keeps records in the memory of one JVM: for tests, local
 * runs and single-instance deployments. It protects against duplicates within this JVM
 * only, and loses every record when the JVM stops.
 * <p>
 * Every operation is atomic per key ({@link ConcurrentHashMap#compute}). Expired records
 * behave as absent at once and are reclaimed by an incremental sweep on the calling
 * threads: once per {@linkplain #setSweepInterval sweep interval} a pass over the records
 * starts, and each operation then visits at most {@value #SWEEP_STEP} records until the
 * pass ends. Memory stays bounded by the records that are alive, and no caller pays for a
 * whole pass, however many records the store holds.
 * <p>
 * Time is read from the injected {@link Clock}, which is this store's clock in the sense
 * of the {@link IdempotencyStore} contract. Thread-safe.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public class InMemoryIdempotencyStore implements IdempotencyStore {

	/**
	 * The most records one operation visits for the sweep.
	 */
	public static final int SWEEP_STEP = 1024;

	private final ConcurrentHashMap<IdempotencyKey, Entry> entries = new ConcurrentHashMap<>();

	private final ReentrantLock sweepLock = new ReentrantLock();

	// the time the next sweep step is due: at or before now while a pass is under way
	private volatile long nextSweep;

	// guarded by sweepLock: where the pass under way stands, null between passes
	private @Nullable Iterator<Map.Entry<IdempotencyKey, Entry>> sweepCursor;

	private volatile Clock clock = Clock.systemUTC();

	private volatile long sweepIntervalMillis = 1000;

	/**
	 * Set the clock that measures leases and expiry. Defaults to the system UTC clock.
	 * @param clock the clock, never {@code null}
	 */
	public void setClock(Clock clock) {
		this.clock = Objects.requireNonNull(clock, "'clock' must not be null");
	}

	/**
	 * Set how often a pass of the sweep of expired records starts. Defaults to one
	 * second. Takes effect at once: the next operation starts a pass unless one is under
	 * way.
	 * @param sweepInterval the interval, never {@code null} or negative
	 */
	public void setSweepInterval(Duration sweepInterval) {
		Objects.requireNonNull(sweepInterval, "'sweepInterval' must not be null");
		if (sweepInterval.isNegative()) {
			throw new IllegalArgumentException("'sweepInterval' must not be negative");
		}
		this.sweepIntervalMillis = sweepInterval.toMillis();
		this.nextSweep = 0;
	}

	/**
	 * Return the number of records held, including expired ones not yet reclaimed.
	 * @return the number of records
	 */
	public int size() {
		return this.entries.size();
	}

	@Override
	public AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token, Duration lease,
			Duration ttl) {
		Objects.requireNonNull(key, "'key' must not be null");
		Objects.requireNonNull(fingerprint, "'fingerprint' must not be null");
		Objects.requireNonNull(token, "'token' must not be null");
		long now = now();
		sweepIfDue(now);
		long leaseMillis = lease.toMillis();
		long ttlMillis = Math.max(ttl.toMillis(), leaseMillis);
		AcquireResult[] result = new AcquireResult[1];
		this.entries.compute(key, (k, entry) -> {
			if (entry == null || entry.isExpired(now)) {
				result[0] = new AcquireResult.Acquired(token);
				return Entry.processing(fingerprint, token, now, now + leaseMillis, now + ttlMillis);
			}
			if (!entry.fingerprint.equals(fingerprint)) {
				result[0] = new AcquireResult.Mismatch();
				return entry;
			}
			if (entry.status == IdempotencyStatus.COMPLETED) {
				result[0] = new AcquireResult.Replay(Objects.requireNonNull(entry.response),
						Instant.ofEpochMilli(entry.expiresAt));
				return entry;
			}
			if (entry.leaseExpiresAt > now) {
				result[0] = new AcquireResult.InProgress(Duration.ofMillis(entry.leaseExpiresAt - now));
				return entry;
			}
			result[0] = new AcquireResult.Acquired(token);
			return Entry.processing(fingerprint, token, now, now + leaseMillis, now + ttlMillis);
		});
		return result[0];
	}

	@Override
	public boolean complete(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
		Objects.requireNonNull(response, "'response' must not be null");
		long now = now();
		boolean[] done = new boolean[1];
		this.entries.computeIfPresent(key, (k, entry) -> {
			if (entry.isExpired(now) || !entry.owner.equals(token)) {
				return entry;
			}
			done[0] = true;
			if (entry.status == IdempotencyStatus.COMPLETED) {
				return entry;
			}
			return new Entry(entry.fingerprint, IdempotencyStatus.COMPLETED, token, entry.createdAt, 0,
					now + ttl.toMillis(), response);
		});
		return done[0];
	}

	@Override
	public boolean release(IdempotencyKey key, OwnerToken token) {
		long now = now();
		boolean[] done = new boolean[1];
		this.entries.computeIfPresent(key, (k, entry) -> {
			if (entry.isProcessingOwnedBy(token, now)) {
				done[0] = true;
				return null;
			}
			return entry;
		});
		return done[0];
	}

	@Override
	public boolean extend(IdempotencyKey key, OwnerToken token, Duration lease) {
		long now = now();
		long leaseExpiresAt = now + lease.toMillis();
		boolean[] done = new boolean[1];
		this.entries.computeIfPresent(key, (k, entry) -> {
			if (!entry.isProcessingOwnedBy(token, now)) {
				return entry;
			}
			done[0] = true;
			return Entry.processing(entry.fingerprint, token, entry.createdAt, leaseExpiresAt,
					Math.max(entry.expiresAt, leaseExpiresAt));
		});
		return done[0];
	}

	@Override
	public Optional<IdempotencyRecord> find(IdempotencyKey key) {
		Entry entry = this.entries.get(key);
		if (entry == null || entry.isExpired(now())) {
			return Optional.empty();
		}
		boolean processing = entry.status == IdempotencyStatus.PROCESSING;
		return Optional.of(new IdempotencyRecord(key, entry.fingerprint, entry.status, entry.owner,
				Instant.ofEpochMilli(entry.createdAt), processing ? Instant.ofEpochMilli(entry.leaseExpiresAt) : null,
				Instant.ofEpochMilli(entry.expiresAt), entry.response));
	}

	@Override
	public boolean evict(IdempotencyKey key) {
		Entry removed = this.entries.remove(key);
		return removed != null && !removed.isExpired(now());
	}

	@Override
	public String name() {
		return (getClass() == InMemoryIdempotencyStore.class) ? "memory" : IdempotencyStore.super.name();
	}

	/**
	 * Remove every expired record now.
	 * @return the number of records removed
	 */
	public int purgeExpired() {
		long now = now();
		int[] removed = new int[1];
		this.entries.forEach((key, entry) -> {
			if (entry.isExpired(now) && this.entries.remove(key, entry)) {
				removed[0]++;
			}
		});
		return removed[0];
	}

	private long now() {
		return this.clock.millis();
	}

	private void sweepIfDue(long now) {
		// one caller at a time sweeps; the others go on at once
		if (now < this.nextSweep || !this.sweepLock.tryLock()) {
			return;
		}
		try {
			if (now >= this.nextSweep) {
				sweepStep(now);
			}
		}
		finally {
			this.sweepLock.unlock();
		}
	}

	// called with sweepLock held
	private void sweepStep(long now) {
		Iterator<Map.Entry<IdempotencyKey, Entry>> cursor = this.sweepCursor;
		if (cursor == null) {
			// weakly consistent: never fails on concurrent updates,
			// may or may not see them
			cursor = this.entries.entrySet().iterator();
		}
		for (int visited = 0; visited < SWEEP_STEP && cursor.hasNext(); visited++) {
			Map.Entry<IdempotencyKey, Entry> record = cursor.next();
			if (record.getValue().isExpired(now)) {
				this.entries.remove(record.getKey(), record.getValue());
			}
		}
		if (cursor.hasNext()) {
			this.sweepCursor = cursor;
		}
		else {
			this.sweepCursor = null;
			this.nextSweep = now + this.sweepIntervalMillis;
		}
	}

	/**
	 * Immutable state of one record; times in epoch milliseconds of the store's clock.
	 */
	private static final class Entry {

		final RequestFingerprint fingerprint;

		final IdempotencyStatus status;

		final OwnerToken owner;

		final long createdAt;

		final long leaseExpiresAt;

		final long expiresAt;

		final @Nullable StoredResponse response;

		Entry(RequestFingerprint fingerprint, IdempotencyStatus status, OwnerToken owner, long createdAt,
				long leaseExpiresAt, long expiresAt, @Nullable StoredResponse response) {
			this.fingerprint = fingerprint;
			this.status = status;
			this.owner = owner;
			this.createdAt = createdAt;
			this.leaseExpiresAt = leaseExpiresAt;
			this.expiresAt = expiresAt;
			this.response = response;
		}

		static Entry processing(RequestFingerprint fingerprint, OwnerToken owner, long createdAt, long leaseExpiresAt,
				long expiresAt) {
			return new Entry(fingerprint, IdempotencyStatus.PROCESSING, owner, createdAt, leaseExpiresAt, expiresAt,
					null);
		}

		boolean isExpired(long now) {
			return this.expiresAt <= now;
		}

		boolean isProcessingOwnedBy(OwnerToken token, long now) {
			return this.status == IdempotencyStatus.PROCESSING && !isExpired(now) && this.owner.equals(token);
		}

	}

}
