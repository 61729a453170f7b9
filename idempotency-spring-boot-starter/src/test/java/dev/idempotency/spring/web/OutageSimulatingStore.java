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
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.IdempotencyStoreException;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Schedulers;

import org.springframework.beans.factory.config.BeanPostProcessor;

/**
 * Store that delegates to the application's real store, and fails every operation while
 * an outage is simulated; it can also hold the answer of a claim that the real store has
 * made, as a slow network would.
 *
 * @author Idempotency contributors
 */
class OutageSimulatingStore implements IdempotencyStore {

	private final IdempotencyStore delegate;

	private volatile boolean down;

	private final AtomicInteger nonBlockingThreadCalls = new AtomicInteger();

	private volatile @Nullable Hold hold;

	private volatile @Nullable String counted;

	private final AtomicInteger countedClaims = new AtomicInteger();

	OutageSimulatingStore(IdempotencyStore delegate) {
		this.delegate = delegate;
	}

	/**
	 * Return a post-processor that wraps the application's store in an outage simulation.
	 * @return the post-processor
	 */
	static BeanPostProcessor wrapping() {
		return new BeanPostProcessor() {

			@Override
			public Object postProcessAfterInitialization(Object bean, String beanName) {
				if (bean instanceof IdempotencyStore store && !(bean instanceof OutageSimulatingStore)) {
					return new OutageSimulatingStore(store);
				}
				return bean;
			}

		};
	}

	IdempotencyStore delegate() {
		return this.delegate;
	}

	void setDown(boolean down) {
		this.down = down;
	}

	/**
	 * Hold the answer of the next claim of the given client key, once the real store has
	 * made it, until the hold is released (at most 30 seconds); an interrupt does not end
	 * the hold, as it does not end a round trip under way.
	 * @param clientKey the key as the client sent it
	 * @return the hold
	 */
	Hold holdClaim(String clientKey) {
		Hold created = new Hold(clientKey);
		this.hold = created;
		return created;
	}

	/**
	 * Count from now on the tries to claim the given client key, and only those.
	 * @param clientKey the key as the client sent it
	 * @return the count of tries
	 */
	AtomicInteger countClaims(String clientKey) {
		this.countedClaims.set(0);
		this.counted = clientKey;
		return this.countedClaims;
	}

	/**
	 * Return how many calls reached the store on a thread that must never block (an
	 * event-loop thread of Reactor Netty, a parallel scheduler's): each one also failed
	 * with an exception.
	 * @return the count
	 */
	int nonBlockingThreadCalls() {
		return this.nonBlockingThreadCalls.get();
	}

	private void check() {
		if (Schedulers.isInNonBlockingThread()) {
			// every store blocks on its round trips: such a call would stall an event
			// loop
			this.nonBlockingThreadCalls.incrementAndGet();
			throw new IllegalStateException(
					"A store was called on the non-blocking thread " + Thread.currentThread().getName());
		}
		if (this.down) {
			throw new IdempotencyStoreException("simulated outage");
		}
	}

	@Override
	public AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token, Duration lease,
			Duration ttl) {
		check();
		if (key.key().equals(this.counted)) {
			this.countedClaims.incrementAndGet();
		}
		AcquireResult result = this.delegate.acquire(key, fingerprint, token, lease, ttl);
		Hold current = this.hold;
		if (current != null && current.clientKey.equals(key.key())) {
			this.hold = null;
			current.await();
		}
		return result;
	}

	@Override
	public boolean complete(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
		check();
		return this.delegate.complete(key, token, response, ttl);
	}

	@Override
	public boolean release(IdempotencyKey key, OwnerToken token) {
		check();
		return this.delegate.release(key, token);
	}

	@Override
	public boolean extend(IdempotencyKey key, OwnerToken token, Duration lease) {
		check();
		return this.delegate.extend(key, token, lease);
	}

	@Override
	public Optional<IdempotencyRecord> find(IdempotencyKey key) {
		check();
		return this.delegate.find(key);
	}

	@Override
	public boolean evict(IdempotencyKey key) {
		check();
		return this.delegate.evict(key);
	}

	/**
	 * The hold of one claim's answer.
	 */
	static final class Hold {

		private final String clientKey;

		private final CountDownLatch reached = new CountDownLatch(1);

		private final CountDownLatch released = new CountDownLatch(1);

		Hold(String clientKey) {
			this.clientKey = clientKey;
		}

		/**
		 * Wait until the claim has been made and its answer is held.
		 * @return whether it was, within ten seconds
		 * @throws InterruptedException if interrupted
		 */
		boolean awaitReached() throws InterruptedException {
			return this.reached.await(10, TimeUnit.SECONDS);
		}

		/**
		 * Let the answer go on.
		 */
		void release() {
			this.released.countDown();
		}

		private void await() {
			this.reached.countDown();
			boolean interrupted = false;
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
			while (this.released.getCount() > 0 && System.nanoTime() < deadline) {
				try {
					this.released.await(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
				}
				catch (InterruptedException ex) {
					interrupted = true;
				}
			}
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}

	}

}
