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

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import javax.crypto.Cipher;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Tests for {@link CipherPool}.
 *
 * @author Idempotency contributors
 */
class CipherPoolTests {

	private static final String TRANSFORMATION = "AES/GCM/NoPadding";

	@Test
	void releasedCipherIsTakenAgainInsteadOfANewOne() {
		CipherPool pool = new CipherPool(TRANSFORMATION, 4);
		Cipher first = pool.acquire();
		assertThat(first.getAlgorithm()).isEqualTo(TRANSFORMATION);
		assertThat(pool.idle()).isZero();
		pool.release(first);
		assertThat(pool.idle()).isOne();
		assertThat(pool.acquire()).isSameAs(first);
		assertThat(pool.idle()).isZero();
	}

	@Test
	void cipherHeldByOneCallerIsNeverHandedToAnother() {
		CipherPool pool = new CipherPool(TRANSFORMATION, 4);
		Cipher held = pool.acquire();
		Cipher other = pool.acquire();
		assertThat(other).isNotSameAs(held);
		pool.release(other);
		assertThat(pool.acquire()).isSameAs(other).isNotSameAs(held);
	}

	@Test
	void fullPoolKeepsNoMoreThanItsSize() {
		CipherPool pool = new CipherPool(TRANSFORMATION, 2);
		List<Cipher> ciphers = List.of(pool.acquire(), pool.acquire(), pool.acquire());
		ciphers.forEach(pool::release);
		assertThat(pool.idle()).isEqualTo(2);
		Set<Cipher> taken = Collections.newSetFromMap(new IdentityHashMap<>());
		taken.add(pool.acquire());
		taken.add(pool.acquire());
		assertThat(ciphers).containsAll(taken);
		// the pool is empty again: a new cipher
		assertThat(ciphers).doesNotContain(pool.acquire());
	}

	@Test
	void unknownTransformationFailsWhenACipherIsNeeded() {
		CipherPool pool = new CipherPool("NoSuchCipher/GCM/NoPadding", 2);
		assertThatIllegalStateException().isThrownBy(pool::acquire)
			.withMessage("This JVM offers no NoSuchCipher/GCM/NoPadding cipher");
	}

	@Test
	void threadsRacingForCiphersNeverShareOne() throws Exception {
		CipherPool pool = new CipherPool(TRANSFORMATION, 4);
		int threads = 16;
		int rounds = 2_000;
		Set<Cipher> inUse = Collections.synchronizedSet(Collections.newSetFromMap(new IdentityHashMap<>()));
		Set<Cipher> seen = Collections.synchronizedSet(Collections.newSetFromMap(new IdentityHashMap<>()));
		AtomicInteger shared = new AtomicInteger();
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		try {
			List<Future<?>> done = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				done.add(executor.submit(() -> {
					start.await();
					for (int i = 0; i < rounds; i++) {
						Cipher cipher = pool.acquire();
						seen.add(cipher);
						if (!inUse.add(cipher)) {
							shared.incrementAndGet();
						}
						Thread.yield();
						inUse.remove(cipher);
						pool.release(cipher);
					}
					return null;
				}));
			}
			start.countDown();
			for (Future<?> future : done) {
				future.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			executor.shutdownNow();
		}
		assertThat(shared).hasValue(0);
		assertThat(pool.idle()).isBetween(1, 4);
		// the pool spares most acquisitions a new cipher: far fewer than one per call
		assertThat(seen.size()).isLessThan(threads * rounds / 10);
	}

}
