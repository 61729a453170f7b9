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

import java.util.Objects;

import dev.idempotency.core.engine.CompletionOutcome;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * Context of the observation of one idempotent call: a request to an idempotent endpoint,
 * a call of an {@code @Idempotent} method or of the {@code IdempotencyTemplate}, or a
 * record handed to an idempotent Kafka listener. Its {@link #getEntryPoint() entry point}
 * says which. The entry point sets the {@link #getOutcome() outcome} once it knows how
 * the call is answered, and the {@link #getCompletion() completion} once an executed call
 * has ended.
 * <p>
 * It deliberately does not expose the idempotency key or its scope: they are unbounded
 * and may identify a user, so they must not become tags. The HTTP filter's context is a
 * {@code dev.idempotency.spring.web.IdempotentRequestObservationContext}, which gives the
 * request to a custom {@link IdempotencyObservationConvention} that takes that
 * responsibility itself.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public class IdempotencyObservationContext extends Observation.Context {

	private final IdempotencyEntryPoint entryPoint;

	private final String policy;

	private volatile @Nullable IdempotencyOutcome outcome;

	private volatile @Nullable CompletionOutcome completion;

	/**
	 * Create a context.
	 * @param entryPoint the entry point of the call, never {@code null}
	 * @param policy the name of the call's policy, never {@code null}
	 */
	public IdempotencyObservationContext(IdempotencyEntryPoint entryPoint, String policy) {
		this.entryPoint = Objects.requireNonNull(entryPoint, "'entryPoint' must not be null");
		this.policy = Objects.requireNonNull(policy, "'policy' must not be null");
	}

	/**
	 * Return the entry point of the call.
	 * @return the entry point
	 */
	public IdempotencyEntryPoint getEntryPoint() {
		return this.entryPoint;
	}

	/**
	 * Return the name of the policy of the call (of the endpoint, for a request).
	 * @return the policy name
	 */
	public String getPolicy() {
		return this.policy;
	}

	/**
	 * Return how the call was answered.
	 * @return the outcome, or {@code null} if the entry point failed before deciding
	 */
	public @Nullable IdempotencyOutcome getOutcome() {
		return this.outcome;
	}

	/**
	 * Set how the call was answered.
	 * @param outcome the outcome
	 */
	public void setOutcome(@Nullable IdempotencyOutcome outcome) {
		this.outcome = outcome;
	}

	/**
	 * Return how the execution of an {@link IdempotencyOutcome#EXECUTED executed} call
	 * ended: stored, released, fenced or failed.
	 * @return the completion outcome, or {@code null} if the call was not executed or its
	 * execution has not ended
	 */
	public @Nullable CompletionOutcome getCompletion() {
		return this.completion;
	}

	/**
	 * Set how the execution ended.
	 * @param completion the completion outcome
	 */
	public void setCompletion(@Nullable CompletionOutcome completion) {
		this.completion = completion;
	}

}
