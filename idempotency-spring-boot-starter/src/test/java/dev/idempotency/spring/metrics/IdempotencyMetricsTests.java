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

package dev.idempotency.spring.metrics;

import java.time.Duration;
import java.util.List;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.engine.CompletionOutcome;
import dev.idempotency.core.engine.Decision;
import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.IdempotencyStoreException;
import dev.idempotency.core.store.InMemoryIdempotencyStore;
import dev.idempotency.spring.store.tiered.CircuitBreakerState;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link IdempotencyMetrics} and {@link MeteredIdempotencyStore}.
 *
 * @author Idempotency contributors
 */
class IdempotencyMetricsTests {

	private static final IdempotencyKey KEY = IdempotencyKey.global("k-1");

	private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

	private final IdempotencyMetrics metrics = new IdempotencyMetrics(this.registry);

	private final IdempotencyPolicy policy = IdempotencyPolicy.builder().name("payments").build();

	@Test
	void countsHeartbeatFencingByPolicy() {
		IdempotencyPolicy other = IdempotencyPolicy.builder().name("other").build();
		this.metrics.onOwnershipLost(KEY, this.policy);
		this.metrics.onOwnershipLost(KEY, this.policy);
		this.metrics.onOwnershipLost(KEY, other);
		assertThat(this.registry.get(IdempotencyMetrics.FENCING_REJECTIONS)
			.tags("phase", "heartbeat", "policy", "payments")
			.counter()
			.count()).isEqualTo(2);
		assertThat(this.registry.get(IdempotencyMetrics.FENCING_REJECTIONS)
			.tags("phase", "heartbeat", "policy", "other")
			.counter()
			.count()).isEqualTo(1);
	}

	@Test
	void countsRefusedCompletionsAsFencingAndLeavesRequestsToTheObservation() {
		IdempotencyStoreException failure = new IdempotencyStoreException("down");
		this.metrics.onDecision(KEY, this.policy, new Decision.Mismatch());
		this.metrics.onDecision(KEY, this.policy, new Decision.Unavailable(Duration.ofSeconds(1), failure));
		this.metrics.onCompletion(KEY, this.policy, CompletionOutcome.STORED);
		this.metrics.onCompletion(KEY, this.policy, CompletionOutcome.RELEASED);
		this.metrics.onCompletion(KEY, this.policy, CompletionOutcome.FENCED);
		assertThat(this.registry.getMeters()).extracting((meter) -> meter.getId().getName())
			.containsOnly(IdempotencyMetrics.TIER_BREAKER_TRANSITIONS, IdempotencyMetrics.FENCING_REJECTIONS);
		assertThat(this.registry.get(IdempotencyMetrics.FENCING_REJECTIONS)
			.tags("phase", "completion", "policy", "payments")
			.counter()
			.count()).isEqualTo(1);
		assertThat(this.registry.get(IdempotencyMetrics.FENCING_REJECTIONS)
			.tags("phase", "heartbeat", "policy", "payments")
			.counter()
			.count()).isZero();
	}

	@Test
	void countsFallbacksAndBreakerTransitions() {
		this.metrics.onFallback("acquire", new IllegalStateException("refused"));
		this.metrics.onFallback("acquire", null);
		this.metrics.onFallback("acquire", null);
		this.metrics.onBreakerStateChange(CircuitBreakerState.CLOSED, CircuitBreakerState.OPEN);
		assertThat(this.registry.get(IdempotencyMetrics.TIER_FALLBACKS)
			.tags("operation", "acquire", "reason", "error")
			.counter()
			.count()).isEqualTo(1);
		assertThat(this.registry.get(IdempotencyMetrics.TIER_FALLBACKS)
			.tags("operation", "acquire", "reason", "breaker_open")
			.counter()
			.count()).isEqualTo(2);
		assertThat(this.registry.get(IdempotencyMetrics.TIER_BREAKER_TRANSITIONS)
			.tags("from", "closed", "to", "open")
			.counter()
			.count()).isEqualTo(1);
		assertThat(this.registry.get(IdempotencyMetrics.TIER_BREAKER_TRANSITIONS)
			.tags("from", "open", "to", "half_open")
			.counter()
			.count()).isZero();
	}

	@Test
	void meteredStoreTimesEachOperationByResult() {
		MeteredIdempotencyStore store = new MeteredIdempotencyStore(new InMemoryIdempotencyStore(), this.registry,
				"memory");
		RequestFingerprint fingerprint = RequestFingerprint.of(new byte[32]);
		OwnerToken token = OwnerToken.generate();
		Duration minute = Duration.ofMinutes(1);
		store.acquire(KEY, fingerprint, token, minute, minute);
		store.acquire(KEY, fingerprint, OwnerToken.generate(), minute, minute);
		assertThat(store.extend(KEY, OwnerToken.generate(), minute)).isFalse();
		assertThat(store.complete(KEY, token, StoredResponse.withoutBody(200, List.of()), minute)).isTrue();
		store.acquire(KEY, fingerprint, OwnerToken.generate(), minute, minute);
		store.acquire(KEY, RequestFingerprint.of(new byte[] { 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
				0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }), OwnerToken.generate(), minute, minute);
		assertThat(store.find(KEY)).isPresent();
		assertThat(store.evict(KEY)).isTrue();
		assertThat(store.evict(KEY)).isFalse();
		assertThat(store.release(KEY, token)).isFalse();
		assertThat(timer("acquire", "acquired")).isEqualTo(1);
		assertThat(timer("acquire", "in_progress")).isEqualTo(1);
		assertThat(timer("acquire", "replay")).isEqualTo(1);
		assertThat(timer("acquire", "mismatch")).isEqualTo(1);
		assertThat(timer("extend", "fenced")).isEqualTo(1);
		assertThat(timer("complete", "ok")).isEqualTo(1);
		assertThat(timer("find", "found")).isEqualTo(1);
		assertThat(timer("evict", "evicted")).isEqualTo(1);
		assertThat(timer("evict", "absent")).isEqualTo(1);
		assertThat(timer("release", "fenced")).isEqualTo(1);
	}

	@Test
	void meteredStoreTimesFailuresAndRethrows() {
		IdempotencyStore failing = new InMemoryIdempotencyStore() {

			@Override
			public boolean evict(IdempotencyKey key) {
				throw new IdempotencyStoreException("down");
			}

		};
		MeteredIdempotencyStore store = new MeteredIdempotencyStore(failing, this.registry, "memory");
		assertThatExceptionOfType(IdempotencyStoreException.class).isThrownBy(() -> store.evict(KEY));
		assertThat(timer("evict", "error")).isEqualTo(1);
	}

	@Test
	void storeNamesOfTheProjectsStores() {
		assertThat(MeteredIdempotencyStore.storeName(new InMemoryIdempotencyStore())).isEqualTo("memory");
	}

	private long timer(String operation, String result) {
		return this.registry.get(MeteredIdempotencyStore.OPERATIONS)
			.tags("store", "memory", "operation", operation, "result", result)
			.timer()
			.count();
	}

}
