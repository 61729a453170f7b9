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

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.InMemoryIdempotencyStore;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Races through {@link TieredIdempotencyStore}: many threads, many keys, a healthy, a
 * flaky and a forgetful fast tier.
 *
 * @author Idempotency contributors
 */
class TieredIdempotencyStoreConcurrencyTests {

	private static final int THREADS = 64;

	private static final int KEYS = 300;

	private static final Duration LEASE = Duration.ofSeconds(60);

	private static final Duration TTL = Duration.ofHours(1);

	private static final StoredResponse RESPONSE = new StoredResponse(200, List.of(),
			"ok".getBytes(StandardCharsets.UTF_8));

	private final InMemoryIdempotencyStore fastMemory = new InMemoryIdempotencyStore();

	private final InMemoryIdempotencyStore durableMemory = new InMemoryIdempotencyStore();

	private final FaultInjectingStore fast = new FaultInjectingStore("fast", this.fastMemory, null);

	private final FaultInjectingStore durable = new FaultInjectingStore("durable", this.durableMemory, null);

	private final TieredIdempotencyStore store = new TieredIdempotencyStore(this.fast, this.durable);

	private final RequestFingerprint fingerprint = TieredIdempotencyStoreTests.fingerprint(7);

	@Test
	void exactlyOneAcquisitionPerKey() throws Exception {
		List<IdempotencyKey> keys = newKeys();
		Map<IdempotencyKey, AtomicInteger> acquired = race(keys, null);
		assertExactlyOnePerKey(keys, acquired);
		// every key is now hot: one fast round trip each
		this.fast.resetCalls();
		this.durable.resetCalls();
		for (IdempotencyKey key : keys) {
			assertThat(this.store.acquire(key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
				.isInstanceOf(AcquireResult.Replay.class);
		}
		assertThat(this.fast.totalCalls()).isEqualTo(KEYS);
		assertThat(this.durable.totalCalls()).isZero();
	}

	@Test
	void exactlyOneAcquisitionPerKeyWhileFastTierFailsAtRandom() throws Exception {
		this.fast.setFailureRate(0.2);
		this.store.setOpenDuration(Duration.ofMillis(2));
		List<IdempotencyKey> keys = newKeys();
		RecordingBreakerListener listener = new RecordingBreakerListener();
		this.store.setListener(listener);
		Map<IdempotencyKey, AtomicInteger> acquired = race(keys, null);
		assertExactlyOnePerKey(keys, acquired);
		assertThat(listener.fallbacks.get()).isPositive();
		assertThat(listener.opened.get()).isPositive();
	}

	@Test
	void exactlyOneAcquisitionPerKeyWhileFastTierLosesData() throws Exception {
		List<IdempotencyKey> keys = newKeys();
		Map<IdempotencyKey, AtomicInteger> acquired = race(keys, () -> {
			IdempotencyKey victim = keys.get(ThreadLocalRandom.current().nextInt(keys.size()));
			this.fastMemory.evict(victim);
		});
		assertExactlyOnePerKey(keys, acquired);
	}

	/**
	 * Let every thread acquire every key in its own order; the winner of a key completes
	 * it. An optional chaos action runs in a loop on its own thread meanwhile.
	 */
	private Map<IdempotencyKey, AtomicInteger> race(List<IdempotencyKey> keys, @Nullable Runnable chaos)
			throws Exception {
		Map<IdempotencyKey, AtomicInteger> acquired = new ConcurrentHashMap<>();
		Queue<AcquireResult> unexpected = new ConcurrentLinkedQueue<>();
		CountDownLatch start = new CountDownLatch(1);
		AtomicBoolean done = new AtomicBoolean();
		ExecutorService executor = Executors.newFixedThreadPool(THREADS + 1);
		try {
			Future<?> chaosTask = executor.submit(() -> {
				while (chaos != null && !done.get()) {
					chaos.run();
					Thread.yield();
				}
			});
			List<Future<?>> tasks = new ArrayList<>();
			for (int t = 0; t < THREADS; t++) {
				tasks.add(executor.submit(() -> {
					List<IdempotencyKey> order = new ArrayList<>(keys);
					Collections.shuffle(order);
					start.await();
					for (IdempotencyKey key : order) {
						OwnerToken token = OwnerToken.generate();
						AcquireResult result = this.store.acquire(key, this.fingerprint, token, LEASE, TTL);
						if (result instanceof AcquireResult.Acquired) {
							acquired.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
							assertThat(this.store.complete(key, token, RESPONSE, TTL)).isTrue();
						}
						else if (!(result instanceof AcquireResult.Replay)
								&& !(result instanceof AcquireResult.InProgress)) {
							unexpected.add(result);
						}
					}
					return null;
				}));
			}
			start.countDown();
			for (Future<?> task : tasks) {
				task.get(2, TimeUnit.MINUTES);
			}
			done.set(true);
			chaosTask.get(1, TimeUnit.MINUTES);
		}
		finally {
			executor.shutdownNow();
		}
		assertThat(unexpected).isEmpty();
		return acquired;
	}

	private void assertExactlyOnePerKey(List<IdempotencyKey> keys, Map<IdempotencyKey, AtomicInteger> acquired) {
		assertThat(acquired).hasSize(keys.size());
		assertThat(acquired.values()).allSatisfy((count) -> assertThat(count.get()).isOne());
		for (IdempotencyKey key : keys) {
			assertThat(this.durableMemory.find(key)).get()
				.satisfies((record) -> assertThat(record.response()).isEqualTo(RESPONSE));
		}
	}

	private static List<IdempotencyKey> newKeys() {
		List<IdempotencyKey> keys = new ArrayList<>();
		for (int i = 0; i < KEYS; i++) {
			keys.add(TieredIdempotencyStoreTests.newKey());
		}
		return keys;
	}

	static final class RecordingBreakerListener implements TieredStoreListener {

		final AtomicInteger fallbacks = new AtomicInteger();

		final AtomicInteger opened = new AtomicInteger();

		@Override
		public void onFallback(String operation, @Nullable Exception exception) {
			this.fallbacks.incrementAndGet();
		}

		@Override
		public void onBreakerStateChange(CircuitBreakerState from, CircuitBreakerState to) {
			if (to == CircuitBreakerState.OPEN) {
				this.opened.incrementAndGet();
			}
		}

	}

}
