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

package dev.idempotency.spring.store.tiered;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.IdempotencyStoreException;
import dev.idempotency.spring.store.AsynchronousClaimCommit;
import dev.idempotency.spring.store.FreshKeyClaim;
import dev.idempotency.spring.store.UnclaimedCompletion;
import org.jspecify.annotations.Nullable;

/**
 * Decorator that counts calls per operation, logs them in a shared journal and fails on
 * demand: always, or at random, before or after the delegate ran (the latter is a reply
 * lost on the way back). It offers {@link UnclaimedCompletion} when its delegate does.
 *
 * @author Idempotency contributors
 */
class FaultInjectingStore implements IdempotencyStore, UnclaimedCompletion, AsynchronousClaimCommit, FreshKeyClaim {

	private final String name;

	private final IdempotencyStore delegate;

	private final @Nullable List<String> journal;

	private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

	private final Map<String, Boolean> failing = new ConcurrentHashMap<>();

	private final Map<String, Boolean> losingReplies = new ConcurrentHashMap<>();

	private volatile boolean down;

	private volatile double failureRate;

	FaultInjectingStore(String name, IdempotencyStore delegate, @Nullable List<String> journal) {
		this.name = name;
		this.delegate = delegate;
		this.journal = journal;
	}

	/**
	 * Make every operation fail (before reaching the delegate) or work again.
	 * @param down whether the store is down
	 */
	void setDown(boolean down) {
		this.down = down;
	}

	/**
	 * Make one operation fail (before reaching the delegate) or work again.
	 * @param operation the operation name
	 * @param fail whether it fails
	 */
	void setFailing(String operation, boolean fail) {
		this.failing.put(operation, fail);
	}

	/**
	 * Make one operation fail after the delegate ran (its reply lost on the way back), or
	 * work again.
	 * @param operation the operation name
	 * @param lose whether its replies are lost
	 */
	void setLosingReplies(String operation, boolean lose) {
		this.losingReplies.put(operation, lose);
	}

	/**
	 * Fail this fraction of calls at random, half of them after the delegate ran.
	 * @param failureRate between 0 and 1
	 */
	void setFailureRate(double failureRate) {
		this.failureRate = failureRate;
	}

	int calls(String operation) {
		AtomicInteger count = this.calls.get(operation);
		return (count != null) ? count.get() : 0;
	}

	int totalCalls() {
		return this.calls.values().stream().mapToInt(AtomicInteger::get).sum();
	}

	void resetCalls() {
		this.calls.clear();
	}

	@Override
	public AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token, Duration lease,
			Duration ttl) {
		return call("acquire", () -> this.delegate.acquire(key, fingerprint, token, lease, ttl));
	}

	// counted and failed as an acquire: it is one, committed differently
	@Override
	public AcquireResult acquireCommittingAsynchronously(IdempotencyKey key, RequestFingerprint fingerprint,
			OwnerToken token, Duration lease, Duration ttl) {
		if (!(this.delegate instanceof AsynchronousClaimCommit asynchronous)) {
			throw new UnsupportedOperationException(this.name + " cannot commit a claim asynchronously");
		}
		return call("acquire", () -> asynchronous.acquireCommittingAsynchronously(key, fingerprint, token, lease, ttl));
	}

	// counted and failed as an acquire too; a plain acquire where the delegate has no
	// cheaper claim for a fresh key
	@Override
	public AcquireResult acquireFresh(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
			Duration lease, Duration ttl) {
		return call("acquire",
				() -> (this.delegate instanceof FreshKeyClaim fresh)
						? fresh.acquireFresh(key, fingerprint, token, lease, ttl)
						: this.delegate.acquire(key, fingerprint, token, lease, ttl));
	}

	@Override
	public boolean complete(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
		return call("complete", () -> this.delegate.complete(key, token, response, ttl));
	}

	@Override
	public boolean completeUnclaimed(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
			StoredResponse response, Duration ttl) {
		if (!(this.delegate instanceof UnclaimedCompletion unclaimed)) {
			throw new UnsupportedOperationException(this.name + " cannot complete an unclaimed key");
		}
		return call("completeUnclaimed", () -> unclaimed.completeUnclaimed(key, fingerprint, token, response, ttl));
	}

	@Override
	public boolean release(IdempotencyKey key, OwnerToken token) {
		return call("release", () -> this.delegate.release(key, token));
	}

	@Override
	public boolean extend(IdempotencyKey key, OwnerToken token, Duration lease) {
		return call("extend", () -> this.delegate.extend(key, token, lease));
	}

	@Override
	public Optional<IdempotencyRecord> find(IdempotencyKey key) {
		return call("find", () -> this.delegate.find(key));
	}

	@Override
	public boolean evict(IdempotencyKey key) {
		return call("evict", () -> this.delegate.evict(key));
	}

	private <T> T call(String operation, Supplier<T> action) {
		this.calls.computeIfAbsent(operation, (op) -> new AtomicInteger()).incrementAndGet();
		if (this.journal != null) {
			this.journal.add(this.name + "." + operation);
		}
		if (this.down || this.failing.getOrDefault(operation, false)) {
			throw new IdempotencyStoreException(this.name + " is down");
		}
		if (this.losingReplies.getOrDefault(operation, false)) {
			action.get();
			throw new IdempotencyStoreException(this.name + " lost the reply of " + operation);
		}
		double rate = this.failureRate;
		ThreadLocalRandom random = ThreadLocalRandom.current();
		if (rate > 0 && random.nextDouble() < rate) {
			if (random.nextBoolean()) {
				throw new IdempotencyStoreException(this.name + " failed before " + operation);
			}
			action.get();
			throw new IdempotencyStoreException(this.name + " lost the reply of " + operation);
		}
		return action.get();
	}

}
