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

import dev.idempotency.spring.http.IdempotentEndpoint;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

/**
 * Strategy that tells the {@link IdempotencyFilter} whether a request targets an
 * idempotent endpoint. Called once for every request the filter sees, before the request
 * reaches the handler, so implementations must be fast for requests that do not match.
 * <p>
 * Implementations are thread-safe and must not read the request body.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 * @see HandlerMappingEndpointResolver
 */
@FunctionalInterface
public interface IdempotentEndpointResolver {

	/**
	 * Resolve the idempotent endpoint a request targets.
	 * @param request the request, never {@code null}
	 * @return the endpoint, or {@code null} if the request is not subject to idempotency
	 */
	@Nullable IdempotentEndpoint resolve(HttpServletRequest request);

}
