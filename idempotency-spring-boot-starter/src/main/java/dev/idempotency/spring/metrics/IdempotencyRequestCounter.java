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

import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import dev.idempotency.spring.observation.IdempotencyEntryPoint;
import dev.idempotency.spring.observation.IdempotencyObservationContext;
import dev.idempotency.spring.observation.IdempotencyOutcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;

/**
 * Counts the requests to idempotent endpoints by outcome, from the filter's
 * {@code idempotency.request} observation: the {@value #REQUESTS} counter, tagged
 * {@code outcome} ({@code executed}, {@code replayed}, {@code in_progress},
 * {@code mismatch}, {@code missing_key}, {@code invalid_key}, {@code too_large},
 * {@code store_unavailable}, {@code fail_open}) and {@code policy}.
 * <p>
 * The observation is the one place where a request is instrumented: Micrometer's meter
 * observation handler turns it into the {@code idempotency.request} timer, tracing into a
 * span, and this handler into the counter that dashboards and alerts read. A request
 * whose observation is switched off (an {@code ObservationPredicate}, such as
 * {@code management.observations.enable.idempotency=false}) is not counted either. A
 * request that failed before the filter decided its outcome is not counted. Calls of
 * methods, of the template and of Kafka listeners are not counted here: their
 * {@code idempotency.call} timer counts them.
 * <p>
 * Thread-safe. Counters are created once per policy and cached, so that counting a
 * request does not allocate.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class IdempotencyRequestCounter implements ObservationHandler<IdempotencyObservationContext> {

	/**
	 * Name of the counter of requests to idempotent endpoints, by outcome.
	 */
	public static final String REQUESTS = "idempotency.requests";

	private static final IdempotencyOutcome[] OUTCOMES = IdempotencyOutcome.values();

	private final MeterRegistry registry;

	private final ConcurrentMap<String, Counter[]> counters = new ConcurrentHashMap<>();

	/**
	 * Create a handler that counts into the given registry.
	 * @param registry the registry, never {@code null}
	 */
	public IdempotencyRequestCounter(MeterRegistry registry) {
		this.registry = Objects.requireNonNull(registry, "'registry' must not be null");
	}

	@Override
	public boolean supportsContext(Observation.Context context) {
		return context instanceof IdempotencyObservationContext idempotency
				&& idempotency.getEntryPoint() == IdempotencyEntryPoint.HTTP;
	}

	@Override
	public void onStop(IdempotencyObservationContext context) {
		IdempotencyOutcome outcome = context.getOutcome();
		if (outcome != null) {
			this.counters.computeIfAbsent(context.getPolicy(), this::newCounters)[outcome.ordinal()].increment();
		}
	}

	private Counter[] newCounters(String policy) {
		Counter[] created = new Counter[OUTCOMES.length];
		for (IdempotencyOutcome outcome : OUTCOMES) {
			created[outcome.ordinal()] = Counter.builder(REQUESTS)
				.description("Requests to idempotent endpoints, by outcome")
				.tag("outcome", outcome.value())
				.tag("policy", policy)
				.register(this.registry);
		}
		return created;
	}

}
