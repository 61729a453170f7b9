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

import jakarta.servlet.http.HttpServletRequest;

/**
 * Strategy that decides the scope of a request's idempotency key: keys of different
 * scopes (for example of two users or tenants) never share a record.
 * <p>
 * Declare a bean of this type to replace the default, which uses the configured
 * {@code idempotency.scope-header}, else the authenticated principal's name, else the
 * global scope. Implementations are thread-safe and must not read the request body.
 * <p>
 * The {@link IdempotencyFilter} keeps the scopes of a resolver other than the
 * {@link DefaultIdempotencyScopeResolver} in a namespace of their own ({@code custom:}
 * before a non-empty scope), so that they never meet the default resolver's. A resolver
 * that draws scopes from several sources should keep them apart itself, for example with
 * a prefix per source.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 * @see DefaultIdempotencyScopeResolver
 */
@FunctionalInterface
public interface IdempotencyScopeResolver {

	/**
	 * Return the scope of the given request.
	 * @param request the request, never {@code null}
	 * @return the scope, never {@code null}; the empty string is the global scope
	 */
	String resolveScope(HttpServletRequest request);

}
