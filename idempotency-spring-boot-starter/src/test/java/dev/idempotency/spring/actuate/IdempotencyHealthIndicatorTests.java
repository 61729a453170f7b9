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

package dev.idempotency.spring.actuate;

import java.util.Optional;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.store.IdempotencyStoreException;
import dev.idempotency.core.store.InMemoryIdempotencyStore;
import dev.idempotency.spring.store.tiered.CircuitBreakerState;
import dev.idempotency.spring.store.tiered.TieredIdempotencyStore;
import org.junit.jupiter.api.Test;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link IdempotencyHealthIndicator}.
 *
 * @author Idempotency contributors
 */
class IdempotencyHealthIndicatorTests {

	@Test
	void workingStoreIsUp() {
		Health health = new IdempotencyHealthIndicator(new InMemoryIdempotencyStore()).health();
		assertThat(health.getStatus()).isEqualTo(Status.UP);
		assertThat(health.getDetails()).containsEntry("store", "memory").doesNotContainKey("circuitBreaker");
	}

	@Test
	void failingStoreIsDown() {
		Health health = new IdempotencyHealthIndicator(new FailingStore()).health();
		assertThat(health.getStatus()).isEqualTo(Status.DOWN);
		assertThat(health.getDetails()).containsKey("error");
	}

	@Test
	void openBreakerIsDegradedNotDown() {
		TieredIdempotencyStore tiered = new TieredIdempotencyStore(new FailingStore(), new InMemoryIdempotencyStore());
		tiered.setFailureThreshold(1);
		IdempotencyHealthIndicator indicator = new IdempotencyHealthIndicator(tiered);
		assertThat(indicator.health().getDetails()).containsEntry("circuitBreaker", "CLOSED")
			.containsEntry("degraded", false);
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> tiered.evict(IdempotencyKey.global("k")));
		assertThat(tiered.getCircuitBreakerState()).isEqualTo(CircuitBreakerState.OPEN);
		Health health = indicator.health();
		assertThat(health.getStatus()).isEqualTo(Status.UP);
		assertThat(health.getDetails()).containsEntry("store", "tiered")
			.containsEntry("circuitBreaker", "OPEN")
			.containsEntry("degraded", true);
	}

	@Test
	void failingDurableTierIsDownEvenThoughFindFallsBack() {
		TieredIdempotencyStore tiered = new TieredIdempotencyStore(new InMemoryIdempotencyStore(), new FailingStore());
		assertThat(new IdempotencyHealthIndicator(tiered).health().getStatus()).isEqualTo(Status.DOWN);
	}

	/**
	 * A store whose every diagnostic operation fails.
	 */
	static final class FailingStore extends InMemoryIdempotencyStore {

		@Override
		public Optional<IdempotencyRecord> find(IdempotencyKey key) {
			throw new IdempotencyStoreException("simulated outage");
		}

		@Override
		public boolean evict(IdempotencyKey key) {
			throw new IdempotencyStoreException("simulated outage");
		}

	}

}
