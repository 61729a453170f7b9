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

import java.util.concurrent.atomic.AtomicBoolean;

import dev.idempotency.core.engine.CompletionOutcome;
import dev.idempotency.core.engine.Execution;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

/**
 * The observation of one idempotent request or call, as the starter's entry points (the
 * HTTP filter, {@code IdempotencyTemplate} and so bean methods and Kafka listeners)
 * record it: {@link #NONE} when observations are off, so that an entry point calls it the
 * same way either way at no cost. It is their only instrumentation: the registry's
 * handlers make metrics (a meter observation handler) and spans (a tracing handler) of
 * it. Applications observe it through the registry; they do not call it.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public class IdempotencyObservation {

	/**
	 * The observation when observations are off: every method does nothing.
	 */
	public static final IdempotencyObservation NONE = new IdempotencyObservation();

	private IdempotencyObservation() {
	}

	/**
	 * Start an observation.
	 * @param registry the registry; {@link ObservationRegistry#NOOP} for none
	 * @param documentation which observation
	 * @param convention the application's convention, or {@code null} for the default one
	 * @param defaultConvention the default convention
	 * @param context its context (callers that avoid creating it when the registry is a
	 * no-op return {@link #NONE} themselves)
	 * @return the started observation, or {@link #NONE} when there is no registry or a
	 * predicate of the registry switched the observation off
	 */
	public static IdempotencyObservation start(ObservationRegistry registry,
			IdempotencyObservationDocumentation documentation, @Nullable IdempotencyObservationConvention convention,
			IdempotencyObservationConvention defaultConvention, IdempotencyObservationContext context) {
		if (registry.isNoop()) {
			return NONE;
		}
		Observation observation = documentation.observation(convention, defaultConvention, () -> context, registry);
		if (observation.isNoop()) {
			return NONE;
		}
		return new Started(observation.start(), context);
	}

	/**
	 * Open a scope of the observation on the calling thread.
	 * @return the scope, to close on the same thread
	 */
	public Observation.Scope openScope() {
		return Observation.Scope.NOOP;
	}

	/**
	 * Record how the request or call was answered.
	 * @param outcome the outcome
	 */
	public void outcome(IdempotencyOutcome outcome) {
	}

	/**
	 * Record that the request or call runs under its key: the outcome is
	 * {@link IdempotencyOutcome#EXECUTED}, and the execution's completion is recorded
	 * when the observation stops.
	 * @param execution the execution
	 */
	public void executing(Execution execution) {
	}

	/**
	 * Record what the execution threw (the handler, the method or the listener), unless
	 * the observation has stopped.
	 * @param error what it threw
	 */
	public void error(Throwable error) {
	}

	/**
	 * Record that the execution's completion did not hold, whatever the engine reported:
	 * the transaction that held a stored response failed to commit.
	 * @param completion how the execution really ended
	 */
	public void completionOverridden(CompletionOutcome completion) {
	}

	/**
	 * End the observation with what the entry point threw: recorded as its error unless
	 * an error is recorded already or the outcome is a refusal (an answer, such as a
	 * request in progress, that the entry point throws to a method's caller), then
	 * stopped.
	 * @param error what was thrown
	 */
	public void fail(Throwable error) {
	}

	/**
	 * Stop the observation; only the first call counts, on whichever thread makes it.
	 */
	public void stop() {
	}

	private static boolean refusal(@Nullable IdempotencyOutcome outcome) {
		return outcome != null && outcome != IdempotencyOutcome.EXECUTED && outcome != IdempotencyOutcome.REPLAYED
				&& outcome != IdempotencyOutcome.FAIL_OPEN;
	}

	/**
	 * A started observation; stopped once, on whichever thread ends the request or call.
	 */
	private static final class Started extends IdempotencyObservation {

		private final Observation observation;

		private final IdempotencyObservationContext context;

		private final AtomicBoolean stopped = new AtomicBoolean();

		private volatile @Nullable Execution execution;

		private volatile @Nullable CompletionOutcome completion;

		Started(Observation observation, IdempotencyObservationContext context) {
			this.observation = observation;
			this.context = context;
		}

		@Override
		public Observation.Scope openScope() {
			return this.observation.openScope();
		}

		@Override
		public void outcome(IdempotencyOutcome outcome) {
			this.context.setOutcome(outcome);
		}

		@Override
		public void executing(Execution execution) {
			this.execution = execution;
			this.context.setOutcome(IdempotencyOutcome.EXECUTED);
		}

		@Override
		public void error(Throwable error) {
			if (!this.stopped.get()) {
				this.observation.error(error);
			}
		}

		@Override
		public void completionOverridden(CompletionOutcome completion) {
			this.completion = completion;
		}

		@Override
		public void fail(Throwable error) {
			if (!this.stopped.get() && this.context.getError() == null && !refusal(this.context.getOutcome())) {
				this.observation.error(error);
			}
			stop();
		}

		@Override
		public void stop() {
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
