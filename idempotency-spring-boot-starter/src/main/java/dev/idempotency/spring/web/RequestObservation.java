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

package dev.idempotency.spring.web;

import java.util.concurrent.atomic.AtomicBoolean;

import dev.idempotency.core.engine.CompletionOutcome;
import dev.idempotency.core.engine.Execution;
import dev.idempotency.spring.NamedPolicy;
import dev.idempotency.spring.observation.DefaultIdempotencyObservationConvention;
import dev.idempotency.spring.observation.IdempotencyObservationConvention;
import dev.idempotency.spring.observation.IdempotencyObservationDocumentation;
import dev.idempotency.spring.observation.IdempotencyOutcome;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

/**
 * The observation of one request to an idempotent endpoint, if any: {@link #NONE} when
 * observations are off, so that the filter calls it the same way either way at no cost.
 * It is the filter's only instrumentation: the registry's handlers make request metrics
 * (a meter observation handler) and spans (a tracing handler) of it.
 *
 * @author Idempotency contributors
 */
class RequestObservation {

	static final RequestObservation NONE = new RequestObservation();

	private static final IdempotencyObservationConvention DEFAULT_CONVENTION = new DefaultIdempotencyObservationConvention();

	/**
	 * Start observing a request.
	 * @param registry the registry; {@link ObservationRegistry#NOOP} for none
	 * @param convention the convention, or {@code null} for the default one
	 * @param request the request
	 * @param policy the policy of its endpoint
	 * @return the started observation, or {@link #NONE} when there is no registry or a
	 * predicate of the registry switched the observation off
	 */
	static RequestObservation start(ObservationRegistry registry, @Nullable IdempotencyObservationConvention convention,
			HttpServletRequest request, NamedPolicy policy) {
		if (registry.isNoop()) {
			return NONE;
		}
		IdempotentRequestObservationContext context = new IdempotentRequestObservationContext(request, policy.name());
		Observation observation = IdempotencyObservationDocumentation.IDEMPOTENT_REQUEST.observation(convention,
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

	void error(Throwable error) {
	}

	/**
	 * Record that the execution's completion did not hold, whatever the engine reported:
	 * the transaction that held a stored response failed to commit.
	 * @param completion how the request really ended
	 */
	void completionOverridden(CompletionOutcome completion) {
	}

	void fail(Throwable error) {
	}

	void stop() {
	}

	/**
	 * A started observation; stopped once, on whichever thread ends the request.
	 */
	private static final class Started extends RequestObservation {

		private final Observation observation;

		private final IdempotentRequestObservationContext context;

		private final AtomicBoolean stopped = new AtomicBoolean();

		private volatile @Nullable Execution execution;

		private volatile @Nullable CompletionOutcome completion;

		Started(Observation observation, IdempotentRequestObservationContext context) {
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
			if (!this.stopped.get()) {
				this.observation.error(error);
			}
		}

		@Override
		void completionOverridden(CompletionOutcome completion) {
			this.completion = completion;
		}

		@Override
		void fail(Throwable error) {
			if (!this.stopped.get() && this.context.getError() == null) {
				this.observation.error(error);
			}
			stop();
		}

		@Override
		void stop() {
			if (this.stopped.compareAndSet(false, true)) {
				Execution current = this.execution;
				CompletionOutcome completion = this.completion;
				if (completion != null) {
					this.context.setCompletion(completion);
				}
				else if (current != null) {
					this.context.setCompletion(current.outcome().orElse(null));
				}
				this.observation.stop();
			}
		}

	}

}
