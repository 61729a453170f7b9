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


package dev.idempotency.core.jmh;

import java.util.SplittableRandom;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.store.IdempotencyStore;

/**
 * Supply of keys that a store has never held, one batch per measured shot, for the
 * benchmarks of first requests.
 * <p>
 * All keys are created when the trial starts, so that neither the measured shots nor the
 * setup between them allocate keys (the GC profiler counts the allocations of the whole
 * iteration, setup included). Each shot gets keys that no earlier shot used until the
 * pool of {@code WARMUP_SHOTS + MEASURED_SHOTS} batches wraps around. Before a shot,
 * outside the measurement, the records of the previous batch are evicted, so that the
 * store does not grow, and the new keys are read once, so that they are in the cache as
 * the key of a request that has just arrived would be; their hash codes are left to the
 * store to compute, as they are for a new request.
 *
 * @author Idempotency contributors
 */
final class FreshKeys {

	/**
	 * Keys acquired per measured shot.
	 */
	static final int BATCH = 1000;

	static final int WARMUP_SHOTS = 150;

	static final int MEASURED_SHOTS = 150;

	private final IdempotencyKey[][] batches;

	private int current;

	private int touched;

	FreshKeys(String prefix) {
		int shots = WARMUP_SHOTS + MEASURED_SHOTS;
		SplittableRandom random = new SplittableRandom(prefix.hashCode());
		this.batches = new IdempotencyKey[shots][BATCH];
		for (int shot = 0; shot < shots; shot++) {
			for (int i = 0; i < BATCH; i++) {
				String key = prefix + "-" + Long.toHexString(random.nextLong()) + "-" + Integer.toHexString(shot)
						+ "-" + Integer.toHexString(i);
				this.batches[shot][i] = new IdempotencyKey("POST /payments", key);
			}
		}
		this.current = shots - 1;
	}

	/**
	 * Evict the keys of the current batch from the store and move on to the next batch.
	 * @param store the store the keys were acquired in
	 */
	void next(IdempotencyStore store) {
		for (IdempotencyKey key : this.batches[this.current]) {
			store.evict(key);
		}
		this.current = (this.current + 1) % this.batches.length;
		int touched = 0;
		for (IdempotencyKey key : this.batches[this.current]) {
			touched += key.key().charAt(key.key().length() - 1) + key.scope().length();
		}
		this.touched = touched;
	}

	IdempotencyKey[] batch() {
		return this.batches[this.current];
	}

	/**
	 * Return a value read from the keys of the current batch, so that reading them has
	 * an effect.
	 * @return the value
	 */
	int touched() {
		return this.touched;
	}

}
