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

import java.util.Objects;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.spring.store.tiered.CircuitBreakerState;
import dev.idempotency.spring.store.tiered.TieredIdempotencyStore;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/**
 * Health of the idempotency store, contributed as {@code idempotency}.
 * <p>
 * Each check reads a sentinel key (a {@link IdempotencyStore#find find} that changes
 * nothing): a store that cannot answer is {@code DOWN}, since idempotent endpoints then
 * answer 503 (or run unprotected where a policy fails open). For a
 * {@link TieredIdempotencyStore} the check passes as long as the durable tier answers; an
 * open circuit breaker (the fast tier is being bypassed) is reported as degraded, not
 * down: the status stays {@code UP}, with the details {@code circuitBreaker}
 * ({@code CLOSED}, {@code OPEN} or {@code HALF_OPEN}) and {@code degraded: true}. Alert
 * on the {@code idempotency.tier.breaker.state} gauge rather than on this status.
 * <p>
 * Thread-safe.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public class IdempotencyHealthIndicator implements HealthIndicator {

	/**
	 * The key that each check reads.
	 */
	static final IdempotencyKey PROBE_KEY = new IdempotencyKey("idempotency-health", "probe");

	private final IdempotencyStore store;

	/**
	 * Create a health indicator.
	 * @param store the store to check, never {@code null}
	 */
	public IdempotencyHealthIndicator(IdempotencyStore store) {
		this.store = Objects.requireNonNull(store, "'store' must not be null");
	}

	@Override
	public Health health() {
		Health.Builder builder = new Health.Builder().withDetail("store", this.store.name());
		// the tiered store's find falls back to the fast tier: probe the durable one
		IdempotencyStore probed = (this.store instanceof TieredIdempotencyStore tiered) ? tiered.getDurableTier()
				: this.store;
		try {
			probed.find(PROBE_KEY);
		}
		catch (RuntimeException ex) {
			return builder.down(ex).build();
		}
		builder.up();
		if (this.store instanceof TieredIdempotencyStore tiered) {
			CircuitBreakerState state = tiered.getCircuitBreakerState();
			builder.withDetail("circuitBreaker", state.name());
			builder.withDetail("degraded", state != CircuitBreakerState.CLOSED);
		}
		return builder.build();
	}

}
