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

package dev.idempotency.spring.method;

import dev.idempotency.core.engine.Execution;
import dev.idempotency.spring.observation.DefaultIdempotencyObservationConvention;
import dev.idempotency.spring.observation.IdempotencyEntryPoint;
import dev.idempotency.spring.observation.IdempotencyObservationContext;
import dev.idempotency.spring.observation.IdempotencyObservationConvention;
import dev.idempotency.spring.observation.IdempotencyObservationDocumentation;
import dev.idempotency.spring.observation.IdempotencyOutcome;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

/**
 * The observation of one call of the template, if any: {@link #NONE} when observations
 * are off, so that the template calls it the same way either way at no cost.
 *
 * @author Idempotency contributors
 */
class CallObservation {

	static final CallObservation NONE = new CallObservation();

	private static final IdempotencyObservationConvention DEFAULT_CONVENTION = new DefaultIdempotencyObservationConvention(
			DefaultIdempotencyObservationConvention.CALL_NAME);

	/**
	 * Start observing a call.
	 * @param registry the registry; {@link ObservationRegistry#NOOP} for none
	 * @param convention the convention, or {@code null} for the default one
	 * @param entryPoint where the call came in
	 * @param policy the name of its policy
	 * @return the started observation, or {@link #NONE}
	 */
	static CallObservation start(ObservationRegistry registry, @Nullable IdempotencyObservationConvention convention,
			IdempotencyEntryPoint entryPoint, String policy) {
		if (registry.isNoop()) {
			return NONE;
		}
		IdempotencyObservationContext context = new IdempotencyObservationContext(entryPoint, policy);
		Observation observation = IdempotencyObservationDocumentation.IDEMPOTENT_CALL.observation(convention,
				DEFAULT_CONVENTION, () -> context, registry);
		if (observation.isNoop()) {
			return NONE;
		}
		return new Started(observation.start(), context);
	}

	Observation.Scope openScope() {
		return Observation.Scope.NOOP;
	}

	void outcome(IdempotencyOutcome outcome) {
	}

	void executing(Execution execution) {
	}

	/**
	 * Record what the call threw, unless it is a refusal: an outcome, not an error.
	 * @param error what the call threw
	 */
	void error(Throwable error) {
	}

	void stop() {
	}

	/**
	 * A started observation, stopped once by the thread that made the call.
	 */
	private static final class Started extends CallObservation {

		private final Observation observation;

		private final IdempotencyObservationContext context;

		private @Nullable Execution execution;

		Started(Observation observation, IdempotencyObservationContext context) {
			this.observation = observation;
			this.context = context;
		}

		@Override
		Observation.Scope openScope() {
			return this.observation.openScope();
		}

		@Override
		void outcome(IdempotencyOutcome outcome) {
			this.context.setOutcome(outcome);
		}

		@Override
		void executing(Execution execution) {
			this.execution = execution;
			this.context.setOutcome(IdempotencyOutcome.EXECUTED);
		}

		@Override
		void error(Throwable error) {
			IdempotencyOutcome outcome = this.context.getOutcome();
			if (outcome == null || outcome == IdempotencyOutcome.EXECUTED || outcome == IdempotencyOutcome.REPLAYED
					|| outcome == IdempotencyOutcome.FAIL_OPEN) {
				this.observation.error(error);
			}
		}

		@Override
		void stop() {
			Execution current = this.execution;
			if (current != null) {
				this.context.setCompletion(current.outcome().orElse(null));
			}
			this.observation.stop();
		}

	}

}
