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

package dev.idempotency.core;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link OwnerToken}.
 *
 * @author Idempotency contributors
 */
class OwnerTokenTests {

	@Test
	void generatedTokensAreUniqueAcrossThreads() throws InterruptedException {
		Set<OwnerToken> tokens = ConcurrentHashMap.newKeySet();
		int threads = 4;
		int perThread = 25_000;
		CountDownLatch start = new CountDownLatch(1);
		Thread[] workers = new Thread[threads];
		for (int i = 0; i < threads; i++) {
			workers[i] = new Thread(() -> {
				try {
					start.await();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return;
				}
				for (int j = 0; j < perThread; j++) {
					tokens.add(OwnerToken.generate());
				}
			});
			workers[i].start();
		}
		start.countDown();
		for (Thread worker : workers) {
			worker.join();
		}
		assertThat(tokens).hasSize(threads * perThread);
	}

	@Test
	void generatedTokensShareThePrefixOfTheirJvm() {
		Set<Long> prefixes = new HashSet<>();
		for (int i = 0; i < 100; i++) {
			prefixes.add(OwnerToken.generate().high());
		}
		assertThat(prefixes).hasSize(1);
	}

	@Test
	void binaryAndHexFormsRoundTrip() {
		OwnerToken token = OwnerToken.generate();
		assertThat(OwnerToken.fromBytes(token.toBytes())).isEqualTo(token);
		assertThat(OwnerToken.fromHex(token.toHex())).isEqualTo(token);
		assertThat(token.toHex()).hasSize(2 * OwnerToken.LENGTH);
	}

}
