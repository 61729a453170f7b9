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

package dev.idempotency.spring.method;

import java.util.Objects;
import java.util.function.Supplier;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyScopes;
import dev.idempotency.spring.web.DefaultIdempotencyScopeResolver;
import dev.idempotency.spring.web.IdempotencyScopeResolver;
import jakarta.servlet.http.HttpServletRequest;

import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

/**
 * The default scope of a call: the one the HTTP filter gives the current request (in the
 * same namespaces: {@code custom:} for the scopes of a resolver other than the default
 * one), when the call runs in one, else the global scope.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class CurrentRequestScope implements Supplier<String> {

	private final IdempotencyScopeResolver resolver;

	private final boolean custom;

	/**
	 * Create a scope source.
	 * @param resolver the scope resolver of the HTTP filter, never {@code null}
	 */
	public CurrentRequestScope(IdempotencyScopeResolver resolver) {
		this.resolver = Objects.requireNonNull(resolver, "'resolver' must not be null");
		this.custom = !(resolver instanceof DefaultIdempotencyScopeResolver);
	}

	@Override
	public String get() {
		RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
		if (!(attributes instanceof ServletRequestAttributes servlet)) {
			return IdempotencyKey.GLOBAL_SCOPE;
		}
		HttpServletRequest request = servlet.getRequest();
		String scope = this.resolver.resolveScope(request);
		return this.custom ? IdempotencyScopes.custom(scope) : scope;
	}

}
