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

package dev.idempotency.spring.observation;

import java.util.Locale;
import java.util.Objects;

import dev.idempotency.core.engine.CompletionOutcome;
import dev.idempotency.spring.observation.IdempotencyObservationDocumentation.LowCardinalityKeyNames;
import io.micrometer.common.KeyValue;
import io.micrometer.common.KeyValues;

/**
 * Default {@link IdempotencyObservationConvention}: the name {@value #DEFAULT_NAME} (the
 * HTTP filter's) or {@value #CALL_NAME} (that of {@code IdempotencyTemplate}, bean
 * methods and Kafka listeners), the contextual name {@code idempotency <policy>} and the
 * low-cardinality keys of {@link LowCardinalityKeyNames}: {@code entry.point} only for
 * calls that are not HTTP requests, so that each name keeps one set of keys. It has no
 * high-cardinality keys: the idempotency key, its scope and the bodies never become tags.
 * <p>
 * Thread-safe.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public class DefaultIdempotencyObservationConvention implements IdempotencyObservationConvention {

	/**
	 * Default name of the observation.
	 */
	public static final String DEFAULT_NAME = "idempotency.request";

	/**
	 * Default name of the observation of the calls that are not HTTP requests.
	 * @since 0.1.0
	 */
	public static final String CALL_NAME = "idempotency.call";

	private static final String NONE = "none";

	private static final String UNKNOWN = "unknown";

	private static final KeyValue OUTCOME_UNKNOWN = KeyValue.of(LowCardinalityKeyNames.OUTCOME, UNKNOWN);

	private static final KeyValue[] OUTCOMES = outcomes();

	private static final KeyValue COMPLETION_NONE = KeyValue.of(LowCardinalityKeyNames.COMPLETION, NONE);

	private static final KeyValue[] COMPLETIONS = completions();

	private static final KeyValue REPLAYED = KeyValue.of(LowCardinalityKeyNames.REPLAYED, "true");

	private static final KeyValue NOT_REPLAYED = KeyValue.of(LowCardinalityKeyNames.REPLAYED, "false");

	private static final KeyValue[] ENTRY_POINTS = entryPoints();

	private final String name;

	/**
	 * Create a convention with the name {@value #DEFAULT_NAME}.
	 */
	public DefaultIdempotencyObservationConvention() {
		this(DEFAULT_NAME);
	}

	/**
	 * Create a convention with a custom name.
	 * @param name the observation name, never {@code null}
	 */
	public DefaultIdempotencyObservationConvention(String name) {
		this.name = Objects.requireNonNull(name, "'name' must not be null");
	}

	@Override
	public String getName() {
		return this.name;
	}

	@Override
	public String getContextualName(IdempotencyObservationContext context) {
		return "idempotency " + context.getPolicy();
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(IdempotencyObservationContext context) {
		if (context.getEntryPoint() == IdempotencyEntryPoint.HTTP) {
			return KeyValues.of(outcome(context), policy(context), replayed(context), completion(context));
		}
		return KeyValues.of(outcome(context), policy(context), replayed(context), completion(context),
				entryPoint(context));
	}

	/**
	 * Return the {@code entry.point} key value of a call that is not an HTTP request:
	 * {@code method}, {@code kafka} or {@code template}.
	 * @param context the context
	 * @return the key value
	 */
	protected KeyValue entryPoint(IdempotencyObservationContext context) {
		return ENTRY_POINTS[context.getEntryPoint().ordinal()];
	}

	/**
	 * Return the {@code outcome} key value: the {@link IdempotencyOutcome#value()}, or
	 * {@code unknown} before the entry point decided (or when it failed before deciding).
	 * @param context the context
	 * @return the key value
	 */
	protected KeyValue outcome(IdempotencyObservationContext context) {
		IdempotencyOutcome outcome = context.getOutcome();
		return (outcome != null) ? OUTCOMES[outcome.ordinal()] : OUTCOME_UNKNOWN;
	}

	/**
	 * Return the {@code policy} key value: the name of the call's policy.
	 * @param context the context
	 * @return the key value
	 */
	protected KeyValue policy(IdempotencyObservationContext context) {
		return KeyValue.of(LowCardinalityKeyNames.POLICY, context.getPolicy());
	}

	/**
	 * Return the {@code replayed} key value: {@code true} when a stored response answered
	 * the call, else {@code false}.
	 * @param context the context
	 * @return the key value
	 */
	protected KeyValue replayed(IdempotencyObservationContext context) {
		return (context.getOutcome() == IdempotencyOutcome.REPLAYED) ? REPLAYED : NOT_REPLAYED;
	}

	/**
	 * Return the {@code completion} key value: how an executed call ended
	 * ({@code stored}, {@code released}, {@code fenced}, {@code failed}), else
	 * {@code none}.
	 * @param context the context
	 * @return the key value
	 */
	protected KeyValue completion(IdempotencyObservationContext context) {
		CompletionOutcome completion = context.getCompletion();
		return (completion != null) ? COMPLETIONS[completion.ordinal()] : COMPLETION_NONE;
	}

	private static KeyValue[] outcomes() {
		IdempotencyOutcome[] outcomes = IdempotencyOutcome.values();
		KeyValue[] values = new KeyValue[outcomes.length];
		for (IdempotencyOutcome outcome : outcomes) {
			values[outcome.ordinal()] = KeyValue.of(LowCardinalityKeyNames.OUTCOME, outcome.value());
		}
		return values;
	}

	private static KeyValue[] entryPoints() {
		IdempotencyEntryPoint[] entryPoints = IdempotencyEntryPoint.values();
		KeyValue[] values = new KeyValue[entryPoints.length];
		for (IdempotencyEntryPoint entryPoint : entryPoints) {
			values[entryPoint.ordinal()] = KeyValue.of(LowCardinalityKeyNames.ENTRY_POINT, entryPoint.value());
		}
		return values;
	}

	private static KeyValue[] completions() {
		CompletionOutcome[] outcomes = CompletionOutcome.values();
		KeyValue[] values = new KeyValue[outcomes.length];
		for (CompletionOutcome outcome : outcomes) {
			values[outcome.ordinal()] = KeyValue.of(LowCardinalityKeyNames.COMPLETION,
					outcome.name().toLowerCase(Locale.ROOT));
		}
		return values;
	}

}
