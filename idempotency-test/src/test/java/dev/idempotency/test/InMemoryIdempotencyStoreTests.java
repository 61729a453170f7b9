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

package dev.idempotency.test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.InMemoryIdempotencyStore;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link InMemoryIdempotencyStore}: the whole contract kit, plus reclamation of
 * expired records. Also the kit's own test: the reference store passes it.
 *
 * @author Idempotency contributors
 */
class InMemoryIdempotencyStoreTests extends AbstractIdempotencyStoreTests {

	@Override
	protected IdempotencyStore createStore() {
		return new InMemoryIdempotencyStore();
	}

	@Override
	protected int raceRounds() {
		return 10;
	}

	@Test
	void expiredRecordsAreReclaimedSoMemoryStaysBounded() {
		AtomicLong millis = new AtomicLong(1_000_000);
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
		store.setClock(clockOf(millis));
		store.setSweepInterval(Duration.ofSeconds(1));
		for (int i = 0; i < 10_000; i++) {
			acquireNewKey(store);
		}
		assertThat(store.size()).isEqualTo(10_000);
		millis.addAndGet(Duration.ofSeconds(11).toMillis());
		// a pass starts: each call visits at most one step of records
		acquireNewKey(store);
		assertThat(store.size()).isGreaterThanOrEqualTo(10_001 - InMemoryIdempotencyStore.SWEEP_STEP);
		int calls = 1;
		while (store.size() > calls && calls < 100) {
			acquireNewKey(store);
			calls++;
		}
		// the whole pass took about 10,000 / step calls, and only the new records remain
		assertThat(calls).isBetween(10_000 / InMemoryIdempotencyStore.SWEEP_STEP,
				10_000 / InMemoryIdempotencyStore.SWEEP_STEP + 2);
		assertThat(store.size()).isEqualTo(calls);
	}

	@Test
	void nextPassStartsOnlyAfterTheSweepInterval() {
		AtomicLong millis = new AtomicLong(1_000_000);
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
		store.setClock(clockOf(millis));
		store.setSweepInterval(Duration.ofSeconds(5));
		acquireNewKey(store);
		for (int i = 0; i < 100; i++) {
			store.acquire(newKey(), fingerprint("a"), OwnerToken.generate(), Duration.ofMillis(100),
					Duration.ofMillis(100));
		}
		millis.addAndGet(200);
		// the pass that started with the first call has ended;
		// the next one is not due yet
		acquireNewKey(store);
		assertThat(store.size()).isEqualTo(102);
		millis.addAndGet(Duration.ofSeconds(5).toMillis());
		acquireNewKey(store);
		assertThat(store.size()).isEqualTo(3);
	}

	@Test
	void newSweepIntervalTakesEffectAtOnce() {
		AtomicLong millis = new AtomicLong(1_000_000);
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
		store.setClock(clockOf(millis));
		store.setSweepInterval(Duration.ofDays(1));
		acquireNewKey(store);
		store.acquire(newKey(), fingerprint("a"), OwnerToken.generate(), Duration.ofMillis(100),
				Duration.ofMillis(100));
		millis.addAndGet(200);
		acquireNewKey(store);
		assertThat(store.size()).isEqualTo(3);
		// the next pass was a day away;
		// with the new interval it starts with the next call
		store.setSweepInterval(Duration.ofSeconds(1));
		acquireNewKey(store);
		assertThat(store.size()).isEqualTo(3);
	}

	private static void acquireNewKey(InMemoryIdempotencyStore store) {
		assertThat(store.acquire(newKey(), fingerprint("a"), OwnerToken.generate(), Duration.ofSeconds(1),
				Duration.ofSeconds(10)))
			.isInstanceOf(AcquireResult.Acquired.class);
	}

	private static Clock clockOf(AtomicLong millis) {
		return new Clock() {

			@Override
			public ZoneOffset getZone() {
				return ZoneOffset.UTC;
			}

			@Override
			public Clock withZone(java.time.ZoneId zone) {
				return this;
			}

			@Override
			public Instant instant() {
				return Instant.ofEpochMilli(millis.get());
			}

		};
	}

}
