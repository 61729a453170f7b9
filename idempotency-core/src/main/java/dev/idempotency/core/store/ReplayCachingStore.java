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
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;

/**
 * {@link IdempotencyStore} that answers repeated replays of a completed key from this
 * JVM's memory for a few seconds, in front of the store that holds the records: a retry
 * storm on one key then costs no round trip to the store after the first replay.
 * <p>
 * <b>What is cached.</b> Only {@link AcquireResult.Replay replays} the store answered,
 * with their fingerprint, for the shorter of the {@linkplain #setTimeToLive cache's time
 * to live} and the record's remaining lifetime as the store reported it
 * ({@link AcquireResult.Replay#timeToLive()}, counted from before the call, so that a
 * cached copy never outlives the record). A store that does not report it (the Redis
 * store: its records carry their expiry instant by Redis' clock) gets its replays cached
 * only while, by this JVM's clock, the record has at least twice the cache's time to live
 * left: a copy could then outlive its record only if the two clocks were further apart
 * than the time to live. An unreadable response is not cached, nor is one larger than an
 * eighth of the {@linkplain #setMaxBytes size limit}. An acquisition with another
 * fingerprint, and every other operation, goes to the store. A completed record never
 * changes until it expires, so a cached replay is the answer the store would give, with
 * one exception:
 * <p>
 * <b>Evictions.</b> {@link #evict} removes the key from this cache and from the store,
 * and no replay fetched before it is cached after it. An eviction made through another
 * instance, or directly in the store, is not seen here: this instance may replay the
 * evicted response until its copy's time to live has passed. A duplicate is never run
 * because of the cache; what it can do is answer with the old response a little longer.
 * <p>
 * <b>Memory.</b> Bounded by {@link #setMaxBytes}: the body, header names and values of
 * each response plus a fixed overhead per entry. When an insertion passes the limit,
 * expired copies are dropped, then arbitrary ones, until a quarter of the limit is free.
 * <p>
 * Thread-safe. Configure it before use. No argument may be {@code null}.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class ReplayCachingStore implements IdempotencyStore {

	/**
	 * Default time to live of a cached replay: 5 seconds.
	 */
	public static final Duration DEFAULT_TIME_TO_LIVE = Duration.ofSeconds(5);

	/**
	 * Default size limit: 32 MiB.
	 */
	public static final long DEFAULT_MAX_BYTES = 32L * 1024 * 1024;

	// about 73 years: longer lifetimes are reported as this much
	private static final long MAX_LIFETIME_NANOS = Long.MAX_VALUE / 4;

	// the key, the entry, the map node and the response object around the bytes
	private static final int ENTRY_OVERHEAD = 256;

	private final IdempotencyStore delegate;

	private final LongSupplier ticker;

	private final Clock clock;

	private final ConcurrentHashMap<IdempotencyKey, Entry> entries = new ConcurrentHashMap<>();

	private final AtomicLong bytes = new AtomicLong();

	// counts evictions: a replay fetched across one is not cached
	private final AtomicLong evictions = new AtomicLong();

	private final ReentrantLock trimLock = new ReentrantLock();

	private volatile long timeToLiveNanos = DEFAULT_TIME_TO_LIVE.toNanos();

	private volatile long maxBytes = DEFAULT_MAX_BYTES;

	/**
	 * Create a cache in front of a store.
	 * @param delegate the store that holds the records
	 */
	public ReplayCachingStore(IdempotencyStore delegate) {
		this(delegate, System::nanoTime, Clock.systemUTC());
	}

	ReplayCachingStore(IdempotencyStore delegate, LongSupplier ticker, Clock clock) {
		this.delegate = Objects.requireNonNull(delegate, "'delegate' must not be null");
		this.ticker = ticker;
		this.clock = clock;
	}

	/**
	 * Set how long a replay is answered from this cache at most. Defaults to
	 * {@link #DEFAULT_TIME_TO_LIVE}. It is also how long an eviction made elsewhere may
	 * go unseen here.
	 * @param timeToLive the time to live, positive
	 */
	public void setTimeToLive(Duration timeToLive) {
		if (timeToLive.isNegative() || timeToLive.isZero()) {
			throw new IllegalArgumentException("'timeToLive' must be positive");
		}
		this.timeToLiveNanos = Math.min(saturatedNanos(timeToLive), MAX_LIFETIME_NANOS);
	}

	/**
	 * Set the most bytes the cached responses may take. Defaults to
	 * {@link #DEFAULT_MAX_BYTES}.
	 * @param maxBytes the limit, positive
	 */
	public void setMaxBytes(long maxBytes) {
		if (maxBytes <= 0) {
			throw new IllegalArgumentException("'maxBytes' must be positive");
		}
		this.maxBytes = maxBytes;
	}

	/**
	 * Return the store behind this cache.
	 * @return the store
	 */
	public IdempotencyStore getDelegate() {
		return this.delegate;
	}

	/**
	 * Return how many bytes the cached responses take, as the size limit counts them.
	 * @return the bytes
	 */
	public long getCachedBytes() {
		return this.bytes.get();
	}

	/**
	 * Return how many replays are cached, expired ones not yet dropped included.
	 * @return the number of entries
	 */
	public int size() {
		return this.entries.size();
	}

	@Override
	public AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token, Duration lease,
			Duration ttl) {
		long now = this.ticker.getAsLong();
		Entry cached = this.entries.get(key);
		if (cached != null) {
			if (now - cached.cachedUntil < 0) {
				if (cached.fingerprint.equals(fingerprint)) {
					return cached.replay(now);
				}
			}
			else {
				remove(key, cached);
			}
		}
		long evictionsBefore = this.evictions.get();
		AcquireResult result = this.delegate.acquire(key, fingerprint, token, lease, ttl);
		if (result instanceof AcquireResult.Replay replay) {
			remember(key, fingerprint, replay, now, evictionsBefore);
		}
		return result;
	}

	private void remember(IdempotencyKey key, RequestFingerprint fingerprint, AcquireResult.Replay replay, long askedAt,
			long evictionsBefore) {
		StoredResponse response = replay.response();
		if (!response.isReadable()) {
			return;
		}
		int weight = weight(response);
		long limit = this.maxBytes;
		long timeToLive = this.timeToLiveNanos;
		Duration reported = replay.timeToLive();
		long recordNanos;
		if (reported != null) {
			recordNanos = saturatedNanos(reported);
		}
		else {
			// by this JVM's clock, which may differ from the store's: keep a margin of a
			// whole time to live
			long left = saturatedNanos(Duration.between(this.clock.instant(), replay.expiresAt()));
			recordNanos = (left / 2 >= timeToLive) ? left - timeToLive : 0;
		}
		// capped so that deadlines stay comparable with nanoTime arithmetic
		recordNanos = Math.min(recordNanos, MAX_LIFETIME_NANOS);
		long lifetime = Math.min(recordNanos, timeToLive);
		if (weight > limit / 8 || lifetime <= 0) {
			return;
		}
		Entry entry = new Entry(fingerprint, response, replay.expiresAt(), reported != null, askedAt + recordNanos,
				askedAt + lifetime, weight);
		Entry previous = this.entries.put(key, entry);
		this.bytes.addAndGet(weight - ((previous != null) ? previous.weight : 0));
		if (this.evictions.get() != evictionsBefore) {
			// an eviction ran while the store answered: its replay may be stale
			remove(key, entry);
			return;
		}
		if (this.bytes.get() > limit) {
			trim(limit);
		}
	}

	// drops expired entries, then arbitrary ones, until a quarter of the limit is free;
	// one thread at a time, the others go on
	private void trim(long limit) {
		if (!this.trimLock.tryLock()) {
			return;
		}
		try {
			long now = this.ticker.getAsLong();
			this.entries.forEach((key, entry) -> {
				if (now - entry.cachedUntil >= 0) {
					remove(key, entry);
				}
			});
			long target = limit - limit / 4;
			Iterator<Map.Entry<IdempotencyKey, Entry>> iterator = this.entries.entrySet().iterator();
			while (this.bytes.get() > target && iterator.hasNext()) {
				Map.Entry<IdempotencyKey, Entry> next = iterator.next();
				remove(next.getKey(), next.getValue());
			}
		}
		finally {
			this.trimLock.unlock();
		}
	}

	private void remove(IdempotencyKey key, Entry entry) {
		if (this.entries.remove(key, entry)) {
			this.bytes.addAndGet(-entry.weight);
		}
	}

	@Override
	public boolean complete(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
		return this.delegate.complete(key, token, response, ttl);
	}

	@Override
	public boolean release(IdempotencyKey key, OwnerToken token) {
		return this.delegate.release(key, token);
	}

	@Override
	public boolean extend(IdempotencyKey key, OwnerToken token, Duration lease) {
		return this.delegate.extend(key, token, lease);
	}

	@Override
	public Optional<IdempotencyRecord> find(IdempotencyKey key) {
		return this.delegate.find(key);
	}

	/**
	 * Remove the key from this cache, then from the store. No replay fetched before the
	 * eviction is cached after it.
	 * @param key the key
	 * @return what the store's eviction returns
	 */
	@Override
	public boolean evict(IdempotencyKey key) {
		boolean evicted = this.delegate.evict(key);
		this.evictions.incrementAndGet();
		Entry cached = this.entries.get(key);
		if (cached != null) {
			remove(key, cached);
		}
		return evicted;
	}

	/**
	 * Return the name of the store behind this cache.
	 * @return the delegate's name
	 */
	@Override
	public String name() {
		return this.delegate.name();
	}

	private static int weight(StoredResponse response) {
		long weight = ENTRY_OVERHEAD + (long) response.bodyLength();
		for (HttpHeader header : response.headers()) {
			weight += 2L * (header.name().length() + header.value().length()) + 32;
		}
		return (int) Math.min(weight, Integer.MAX_VALUE);
	}

	private static long saturatedNanos(Duration duration) {
		try {
			return duration.toNanos();
		}
		catch (ArithmeticException ex) {
			return duration.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
		}
	}

	// timed: the store reported the record's remaining lifetime, which the copy reports
	// in turn, counted down; otherwise it reports none either
	private record Entry(RequestFingerprint fingerprint, StoredResponse response, Instant expiresAt, boolean timed,
			long recordDeadline, long cachedUntil, int weight) {

		AcquireResult.Replay replay(long now) {
			return new AcquireResult.Replay(this.response, this.expiresAt,
					this.timed ? Duration.ofNanos(this.recordDeadline - now) : null);
		}

	}

}
