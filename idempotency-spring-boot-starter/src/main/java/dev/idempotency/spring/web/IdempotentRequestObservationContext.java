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

import java.util.Objects;

import dev.idempotency.spring.observation.IdempotencyEntryPoint;
import dev.idempotency.spring.observation.IdempotencyObservationContext;
import jakarta.servlet.http.HttpServletRequest;

/**
 * Context of the observation of one request to an idempotent endpoint: the
 * {@link IdempotencyEntryPoint#HTTP http} entry point, with the request. A custom
 * {@link dev.idempotency.spring.observation.IdempotencyObservationConvention} that reads
 * the request makes sure that what it reads (the key, the scope, the body) never becomes
 * a low-cardinality tag.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public class IdempotentRequestObservationContext extends IdempotencyObservationContext {

	private final HttpServletRequest request;

	/**
	 * Create a context.
	 * @param request the request being handled, never {@code null}
	 * @param policy the name of the endpoint's policy, never {@code null}
	 */
	public IdempotentRequestObservationContext(HttpServletRequest request, String policy) {
		super(IdempotencyEntryPoint.HTTP, policy);
		this.request = Objects.requireNonNull(request, "'request' must not be null");
	}

	/**
	 * Return the request being handled.
	 * @return the request
	 */
	public HttpServletRequest getRequest() {
		return this.request;
	}

}
