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

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link IdempotencyKey}.
 *
 * @author Idempotency contributors
 */
class IdempotencyKeyTests {

	@Test
	void digestIsSha256OfScopeNulKey() throws Exception {
		IdempotencyKey key = new IdempotencyKey("tenant-ä", "order-1001");
		MessageDigest expected = MessageDigest.getInstance("SHA-256");
		expected.update("tenant-ä".getBytes(StandardCharsets.UTF_8));
		expected.update((byte) 0);
		expected.update("order-1001".getBytes(StandardCharsets.US_ASCII));
		assertThat(key.digest()).isEqualTo(expected.digest());
	}

	@Test
	void digestOfAGlobalKeyHasAKnownValue() {
		// printf '\0abc' | sha256sum
		assertThat(HexFormat.of().formatHex(IdempotencyKey.global("abc").digest()))
			.isEqualTo("609f6e36d2405585188d5cfd761f407c7cc46a7d3f314c88270469dde315fcd1");
	}

	@Test
	void digestSeparatesScopeFromKey() {
		assertThat(new IdempotencyKey("a", "bc").digest()).isNotEqualTo(new IdempotencyKey("ab", "c").digest());
	}

	@Test
	void digestIsAFreshArrayEveryTime() {
		IdempotencyKey key = IdempotencyKey.global("k");
		byte[] first = key.digest();
		first[0] ^= 1;
		assertThat(key.digest()).isNotEqualTo(first).hasSize(32);
	}

	@Test
	void digestsComputedConcurrentlyAreTheSame() throws Exception {
		List<IdempotencyKey> keys = new ArrayList<>();
		List<byte[]> expected = new ArrayList<>();
		for (int i = 0; i < 200; i++) {
			IdempotencyKey key = new IdempotencyKey("scope-" + (i % 7), "key-" + i);
			keys.add(key);
			expected.add(key.digest());
		}
		ExecutorService executor = Executors.newFixedThreadPool(8);
		try {
			List<Future<Boolean>> results = new ArrayList<>();
			for (int thread = 0; thread < 8; thread++) {
				results.add(executor.submit(() -> {
					for (int round = 0; round < 50; round++) {
						for (int i = 0; i < keys.size(); i++) {
							if (!MessageDigest.isEqual(keys.get(i).digest(), expected.get(i))) {
								return false;
							}
						}
					}
					return true;
				}));
			}
			for (Future<Boolean> result : results) {
				assertThat(result.get()).isTrue();
			}
		}
		finally {
			executor.shutdownNow();
		}
	}

	@Test
	void keyMustBeVisibleAscii() {
		assertThat(IdempotencyKey.isValidKey("abc-123")).isTrue();
		assertThat(IdempotencyKey.isValidKey("x".repeat(IdempotencyKey.MAX_KEY_LENGTH))).isTrue();
		assertThat(IdempotencyKey.isValidKey("")).isFalse();
		assertThat(IdempotencyKey.isValidKey("x".repeat(IdempotencyKey.MAX_KEY_LENGTH + 1))).isFalse();
		assertThat(IdempotencyKey.isValidKey("a b")).isFalse();
		assertThat(IdempotencyKey.isValidKey("ä")).isFalse();
		assertThat(IdempotencyKey.isValidKey(null)).isFalse();
		assertThatIllegalArgumentException().isThrownBy(() -> IdempotencyKey.global("a b"));
	}

}
