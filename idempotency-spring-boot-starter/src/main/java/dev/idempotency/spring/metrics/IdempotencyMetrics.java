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
import dev.idempotency.core.engine.Decision;
import dev.idempotency.core.engine.IdempotencyListener;
import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.spring.store.tiered.CircuitBreakerState;
import dev.idempotency.spring.store.tiered.TieredIdempotencyStore;
import dev.idempotency.spring.store.tiered.TieredStoreListener;
import dev.idempotency.spring.web.IdempotencyRequestListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Micrometer meters of idempotent requests: listens to the engine
 * ({@link IdempotencyListener}), to the filter ({@link IdempotencyRequestListener}) and
 * to a tiered store ({@link TieredStoreListener}).
 * <ul>
 * <li>{@value #REQUESTS} (counter), tagged {@code outcome} ({@code executed},
 * {@code replayed}, {@code in_progress}, {@code mismatch}, {@code missing_key},
 * {@code invalid_key}, {@code too_large}, {@code store_unavailable}, {@code fail_open})
 * and {@code policy};
 * <li>{@value #COMPLETIONS} (counter), tagged {@code outcome} ({@code stored},
 * {@code released}, {@code fenced}, {@code failed}) and {@code policy};
 * <li>{@value #FENCING_REJECTIONS} (counter), tagged {@code phase} ({@code completion}: a
 * late completion or release was refused; {@code heartbeat}: a running handler learnt
 * that its key was taken over) and {@code policy};
 * <li>{@value #TIER_FALLBACKS} (counter), tagged {@code operation} and {@code reason}
 * ({@code error}: the fast tier failed; {@code breaker_open}: it was skipped);
 * <li>{@value #TIER_BREAKER_TRANSITIONS} (counter), tagged {@code from} and {@code to};
 * <li>{@value #TIER_BREAKER_STATE} (gauge, 1 for the current state and 0 for the others),
 * tagged {@code state}, once {@link #bindTo(TieredIdempotencyStore) bound}.
 * </ul>
 * The idempotency key is never a tag: its cardinality is unbounded. Policy names come
 * from configuration, so their number is bounded.
 * <p>
 * Thread-safe. Counters are created once per tag combination and cached, so that counting
 * a request does not allocate.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class IdempotencyMetrics implements IdempotencyListener, IdempotencyRequestListener, TieredStoreListener {

	/**
	 * Name of the counter of idempotent requests by outcome.
	 */
	public static final String REQUESTS = "idempotency.requests";

	/**
	 * Name of the counter of ended executions by outcome.
	 */
	public static final String COMPLETIONS = "idempotency.completions";

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

	private static final String POLICY = "policy";

	private static final String OUTCOME = "outcome";

	private static final CircuitBreakerState[] STATES = CircuitBreakerState.values();

	private final MeterRegistry registry;

	private final ConcurrentMap<String, Counter[]> requests = new ConcurrentHashMap<>();

	private final ConcurrentMap<String, Counter[]> completions = new ConcurrentHashMap<>();

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
	public void onDecision(IdempotencyKey key, IdempotencyPolicy policy, Decision decision) {
		requests(policy.name())[outcomeOf(decision).ordinal()].increment();
	}

	@Override
	public void onRejected(Rejection rejection, String policy) {
		requests(policy)[outcomeOf(rejection).ordinal()].increment();
	}

	@Override
	public void onCompletion(IdempotencyKey key, IdempotencyPolicy policy, CompletionOutcome outcome) {
		completions(policy.name())[outcome.ordinal()].increment();
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

	private Counter[] requests(String policy) {
		return this.requests.computeIfAbsent(policy, this::newRequestCounters);
	}

	private Counter[] completions(String policy) {
		return this.completions.computeIfAbsent(policy, this::newCompletionCounters);
	}

	private Counter[] fencing(String policy) {
		return this.fencing.computeIfAbsent(policy, this::newFencingCounters);
	}

	private Counter[] newRequestCounters(String policy) {
		RequestOutcome[] outcomes = RequestOutcome.values();
		Counter[] counters = new Counter[outcomes.length];
		for (RequestOutcome outcome : outcomes) {
			counters[outcome.ordinal()] = Counter.builder(REQUESTS)
				.description("Requests to idempotent endpoints, by outcome")
				.tag(OUTCOME, outcome.tag)
				.tag(POLICY, policy)
				.register(this.registry);
		}
		return counters;
	}

	private Counter[] newCompletionCounters(String policy) {
		CompletionOutcome[] outcomes = CompletionOutcome.values();
		Counter[] counters = new Counter[outcomes.length];
		for (CompletionOutcome outcome : outcomes) {
			counters[outcome.ordinal()] = Counter.builder(COMPLETIONS)
				.description("Ended executions of idempotent requests, by outcome")
				.tag(OUTCOME, tag(outcome))
				.tag(POLICY, policy)
				.register(this.registry);
		}
		return counters;
	}

	private Counter[] newFencingCounters(String policy) {
		FencingPhase[] phases = FencingPhase.values();
		Counter[] counters = new Counter[phases.length];
		for (FencingPhase phase : phases) {
			counters[phase.ordinal()] = Counter.builder(FENCING_REJECTIONS)
				.description("Writes refused because another caller took the key over after a lease lapsed")
				.tag("phase", tag(phase))
				.tag(POLICY, policy)
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

	private static RequestOutcome outcomeOf(Decision decision) {
		if (decision instanceof Decision.Execute) {
			return RequestOutcome.EXECUTED;
		}
		if (decision instanceof Decision.Replay) {
			return RequestOutcome.REPLAYED;
		}
		if (decision instanceof Decision.InProgress) {
			return RequestOutcome.IN_PROGRESS;
		}
		if (decision instanceof Decision.Mismatch) {
			return RequestOutcome.MISMATCH;
		}
		if (decision instanceof Decision.Unavailable) {
			return RequestOutcome.STORE_UNAVAILABLE;
		}
		return RequestOutcome.FAIL_OPEN;
	}

	private static RequestOutcome outcomeOf(Rejection rejection) {
		switch (rejection) {
			case MISSING_KEY:
				return RequestOutcome.MISSING_KEY;
			case INVALID_KEY:
				return RequestOutcome.INVALID_KEY;
			default:
				return RequestOutcome.TOO_LARGE;
		}
	}

	private static String tag(Enum<?> value) {
		return value.name().toLowerCase(Locale.ROOT);
	}

	private enum RequestOutcome {

		EXECUTED, REPLAYED, IN_PROGRESS, MISMATCH, MISSING_KEY, INVALID_KEY, TOO_LARGE, STORE_UNAVAILABLE, FAIL_OPEN;

		private final String tag = name().toLowerCase(Locale.ROOT);

	}

	private enum FencingPhase {

		COMPLETION, HEARTBEAT

	}

}
