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

import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.engine.CompletionOutcome;
import dev.idempotency.core.engine.IdempotencyListener;
import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.spring.store.tiered.CircuitBreakerState;
import dev.idempotency.spring.store.tiered.TieredIdempotencyStore;
import dev.idempotency.spring.store.tiered.TieredStoreListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Micrometer counters of the events that no request's observation stands for: writes
 * refused because the key was taken over (told by the engine, as an
 * {@link IdempotencyListener}) and the tiered store's fallbacks and circuit breaker (as a
 * {@link TieredStoreListener}).
 * <ul>
 * <li>{@value #FENCING_REJECTIONS} (counter), tagged {@code phase} ({@code completion}: a
 * late completion or release was refused; {@code heartbeat}: a running handler's lease
 * renewal was refused) and {@code policy};
 * <li>{@value #TIER_FALLBACKS} (counter), tagged {@code operation} and {@code reason}
 * ({@code error}: the fast tier failed; {@code breaker_open}: it was skipped);
 * <li>{@value #TIER_BREAKER_TRANSITIONS} (counter), tagged {@code from} and {@code to};
 * <li>{@value #TIER_BREAKER_STATE} (gauge, 1 for the current state and 0 for the others),
 * tagged {@code state}, once {@link #bindTo(TieredIdempotencyStore) bound}.
 * </ul>
 * Requests are not counted here: the filter's {@code idempotency.request} observation
 * measures each of them once, and Micrometer's meter observation handler (which Spring
 * Boot registers with its metrics) turns it into the {@code idempotency.request} timer,
 * tagged with the request's {@code outcome}, {@code policy}, {@code replayed} and
 * {@code completion}; {@link IdempotencyRequestCounter} into the
 * {@value IdempotencyRequestCounter#REQUESTS} counter.
 * <p>
 * The idempotency key is never a tag: its cardinality is unbounded. Policy names come
 * from configuration, so their number is bounded.
 * <p>
 * Thread-safe. Counters are created once per tag combination and cached, so that counting
 * an event does not allocate.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class IdempotencyMetrics implements IdempotencyListener, TieredStoreListener {

	/**
	 * Name of the counter of writes refused because another caller took the key over.
	 */
	public static final String FENCING_REJECTIONS = "idempotency.fencing.rejections";

	/**
	 * Name of the counter of tiered-store operations served without the fast tier.
	 */
	public static final String TIER_FALLBACKS = "idempotency.tier.fallbacks";

	/**
	 * Name of the counter of circuit breaker transitions of the tiered store.
	 */
	public static final String TIER_BREAKER_TRANSITIONS = "idempotency.tier.breaker.transitions";

	/**
	 * Name of the gauge of the tiered store's circuit breaker state.
	 */
	public static final String TIER_BREAKER_STATE = "idempotency.tier.breaker.state";

	private static final CircuitBreakerState[] STATES = CircuitBreakerState.values();

	private final MeterRegistry registry;

	private final ConcurrentMap<String, Counter[]> fencing = new ConcurrentHashMap<>();

	private final ConcurrentMap<String, Counter[]> fallbacks = new ConcurrentHashMap<>();

	private final Counter[] transitions = new Counter[STATES.length * STATES.length];

	/**
	 * Create the meters' home.
	 * @param registry the registry, never {@code null}
	 */
	public IdempotencyMetrics(MeterRegistry registry) {
		this.registry = Objects.requireNonNull(registry, "'registry' must not be null");
		for (CircuitBreakerState from : STATES) {
			for (CircuitBreakerState to : STATES) {
				this.transitions[from.ordinal() * STATES.length + to.ordinal()] = Counter
					.builder(TIER_BREAKER_TRANSITIONS)
					.description("Circuit breaker transitions of the tiered idempotency store")
					.tag("from", tag(from))
					.tag("to", tag(to))
					.register(registry);
			}
		}
	}

	/**
	 * Register the gauge of a tiered store's circuit breaker state.
	 * @param store the store, never {@code null}
	 */
	public void bindTo(TieredIdempotencyStore store) {
		Objects.requireNonNull(store, "'store' must not be null");
		for (CircuitBreakerState state : STATES) {
			Gauge.builder(TIER_BREAKER_STATE, store, (tiered) -> (tiered.getCircuitBreakerState() == state) ? 1 : 0)
				.description("1 for the current state of the tiered idempotency store's circuit breaker, else 0")
				.tag("state", tag(state))
				.register(this.registry);
		}
	}

	@Override
	public void onCompletion(IdempotencyKey key, IdempotencyPolicy policy, CompletionOutcome outcome) {
		if (outcome == CompletionOutcome.FENCED) {
			fencing(policy.name())[FencingPhase.COMPLETION.ordinal()].increment();
		}
	}

	@Override
	public void onOwnershipLost(IdempotencyKey key, IdempotencyPolicy policy) {
		fencing(policy.name())[FencingPhase.HEARTBEAT.ordinal()].increment();
	}

	@Override
	public void onFallback(String operation, @Nullable Exception exception) {
		Counter[] counters = this.fallbacks.computeIfAbsent(operation, this::newFallbackCounters);
		counters[(exception != null) ? 0 : 1].increment();
	}

	@Override
	public void onBreakerStateChange(CircuitBreakerState from, CircuitBreakerState to) {
		this.transitions[from.ordinal() * STATES.length + to.ordinal()].increment();
	}

	private Counter[] fencing(String policy) {
		return this.fencing.computeIfAbsent(policy, this::newFencingCounters);
	}

	private Counter[] newFencingCounters(String policy) {
		FencingPhase[] phases = FencingPhase.values();
		Counter[] counters = new Counter[phases.length];
		for (FencingPhase phase : phases) {
			counters[phase.ordinal()] = Counter.builder(FENCING_REJECTIONS)
				.description("Writes refused because another caller took the key over after the lease lapsed")
				.tag("phase", tag(phase))
				.tag("policy", policy)
				.register(this.registry);
		}
		return counters;
	}

	private Counter[] newFallbackCounters(String operation) {
		String[] reasons = { "error", "breaker_open" };
		Counter[] counters = new Counter[reasons.length];
		for (int i = 0; i < reasons.length; i++) {
			counters[i] = Counter.builder(TIER_FALLBACKS)
				.description("Tiered idempotency store operations served without the fast tier")
				.tag("operation", operation)
				.tag("reason", reasons[i])
				.register(this.registry);
		}
		return counters;
	}

	private static String tag(Enum<?> value) {
		return value.name().toLowerCase(Locale.ROOT);
	}

	private enum FencingPhase {

		COMPLETION, HEARTBEAT

	}

}
