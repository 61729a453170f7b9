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

package dev.idempotency.spring.web.observation;

import java.util.Objects;

import dev.idempotency.core.engine.CompletionOutcome;
import io.micrometer.observation.Observation;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

/**
 * Context of the observation of one request to an idempotent endpoint. The filter sets
 * the {@link #getOutcome() outcome} once it knows how the request is answered, and the
 * {@link #getCompletion() completion} once an executed request has ended.
 * <p>
 * It deliberately does not expose the idempotency key or its scope: they are unbounded
 * and may identify a user, so they must not become tags. A custom
 * {@link IdempotencyObservationConvention} that reads them from the {@link #getRequest()
 * request} takes that responsibility itself.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public class IdempotencyObservationContext extends Observation.Context {

	private final HttpServletRequest request;

	private final String policy;

	private volatile @Nullable IdempotencyOutcome outcome;

	private volatile @Nullable CompletionOutcome completion;

	/**
	 * Create a context.
	 * @param request the request being handled, never {@code null}
	 * @param policy the name of the endpoint's policy, never {@code null}
	 */
	public IdempotencyObservationContext(HttpServletRequest request, String policy) {
		this.request = Objects.requireNonNull(request, "'request' must not be null");
		this.policy = Objects.requireNonNull(policy, "'policy' must not be null");
	}

	/**
	 * Return the request being handled.
	 * @return the request
	 */
	public HttpServletRequest getRequest() {
		return this.request;
	}

	/**
	 * Return the name of the endpoint's policy.
	 * @return the policy name
	 */
	public String getPolicy() {
		return this.policy;
	}

	/**
	 * Return how the request was answered.
	 * @return the outcome, or {@code null} if the filter failed before deciding
	 */
	public @Nullable IdempotencyOutcome getOutcome() {
		return this.outcome;
	}

	/**
	 * Set how the request was answered.
	 * @param outcome the outcome
	 */
	public void setOutcome(@Nullable IdempotencyOutcome outcome) {
		this.outcome = outcome;
	}

	/**
	 * Return how the execution of an {@link IdempotencyOutcome#EXECUTED executed} request
	 * ended: stored, released, fenced or failed.
	 * @return the completion outcome, or {@code null} if the request was not executed or
	 * its execution has not ended
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
