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

package dev.idempotency.spring.webflux;

import java.util.Objects;

import dev.idempotency.spring.observation.IdempotencyEntryPoint;
import dev.idempotency.spring.observation.IdempotencyObservationContext;

import org.springframework.web.server.ServerWebExchange;

/**
 * The context of the {@code idempotency.request} observation of a WebFlux request: the
 * exchange, beside what every idempotency observation carries (policy, outcome,
 * completion). The twin of the servlet filter's
 * {@code dev.idempotency.spring.web.IdempotentRequestObservationContext}.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public class WebFluxRequestObservationContext extends IdempotencyObservationContext {

	private final ServerWebExchange exchange;

	/**
	 * Create a context.
	 * @param exchange the request's exchange
	 * @param policy the name of the endpoint's policy
	 */
	public WebFluxRequestObservationContext(ServerWebExchange exchange, String policy) {
		super(IdempotencyEntryPoint.HTTP, policy);
		this.exchange = Objects.requireNonNull(exchange, "'exchange' must not be null");
	}

	/**
	 * Return the request's exchange.
	 * @return the exchange
	 */
	public ServerWebExchange getExchange() {
		return this.exchange;
	}

}
