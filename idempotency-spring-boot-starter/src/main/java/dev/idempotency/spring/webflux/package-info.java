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

/**
 * The idempotency contract on Spring WebFlux: a {@code WebFilter}
 * ({@link dev.idempotency.spring.webflux.IdempotencyWebFilter}) that finds the idempotent
 * endpoint of a request ({@link dev.idempotency.spring.webflux.WebFluxEndpointResolver}),
 * applies the stack-neutral HTTP contract of {@code dev.idempotency.spring.http} and asks
 * the same engine as the servlet filter, calling the blocking stores on a scheduler whose
 * threads may block, never on an event-loop thread.
 */
@NullMarked
package dev.idempotency.spring.webflux;

import org.jspecify.annotations.NullMarked;
