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
 * The HTTP side of the idempotency contract, apart from any web stack: the key header
 * ({@code Idempotency-Key} as an RFC 8941 sf-string), keys read from a JSON body, the
 * client's TTL header, form bodies in canonical order, the problems a request can be
 * answered with ({@link dev.idempotency.spring.http.IdempotencyProblem}) and the refusals
 * that lead to them, the response headers that are stored and replayed, HTTP dates, the
 * anonymous-caller rule and the endpoints that configuration makes idempotent.
 * <p>
 * The servlet filter in {@code dev.idempotency.spring.web} applies it to Spring MVC
 * requests; a second adapter for another web stack applies the same classes rather than
 * copies of them. Applications use
 * {@link dev.idempotency.spring.http.IdempotencyProblem},
 * {@link dev.idempotency.spring.http.AnonymousRequests},
 * {@link dev.idempotency.spring.http.IdempotentEndpoint} and
 * {@link dev.idempotency.spring.http.EndpointRule}; the other public types are the
 * adapters' shared implementation and may change in any release.
 */
@NullMarked
package dev.idempotency.spring.http;

import org.jspecify.annotations.NullMarked;
