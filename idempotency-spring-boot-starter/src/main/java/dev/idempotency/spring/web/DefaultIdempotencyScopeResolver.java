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

import java.security.Principal;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyScopes;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.util.StringUtils;

/**
 * Default {@link IdempotencyScopeResolver}: the value of a configured scope header when
 * the request carries it, else the name of the authenticated principal
 * ({@link HttpServletRequest#getUserPrincipal()}), else the global scope.
 * <p>
 * Each source has its own namespace, so that no value of one can name the scope of
 * another: {@code header:<value>} for the scope header, {@code principal:<name>} for the
 * principal (also when the name is empty: an authenticated caller never shares the global
 * scope), and the empty string for the global scope. A tenant {@code alice} and a user
 * {@code alice} therefore never share a record. {@link IdempotencyScopes} defines these
 * forms.
 * <p>
 * A scope header is only trustworthy when it is set by infrastructure in front of the
 * application (an API gateway that authenticates the tenant); a client that can choose it
 * can read the responses stored under another tenant's keys.
 * <p>
 * Immutable and thread-safe.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class DefaultIdempotencyScopeResolver implements IdempotencyScopeResolver {

	/**
	 * Prefix of the scopes taken from the scope header.
	 */
	public static final String HEADER_SCOPE_PREFIX = IdempotencyScopes.HEADER_PREFIX;

	/**
	 * Prefix of the scopes taken from the authenticated principal's name.
	 */
	public static final String PRINCIPAL_SCOPE_PREFIX = IdempotencyScopes.PRINCIPAL_PREFIX;

	private final @Nullable String scopeHeader;

	/**
	 * Create a resolver that scopes keys by principal only.
	 */
	public DefaultIdempotencyScopeResolver() {
		this(null);
	}

	/**
	 * Create a resolver.
	 * @param scopeHeader name of the header that carries the scope, or {@code null} to
	 * scope by principal only
	 */
	public DefaultIdempotencyScopeResolver(@Nullable String scopeHeader) {
		this.scopeHeader = StringUtils.hasText(scopeHeader) ? scopeHeader : null;
	}

	@Override
	public String resolveScope(HttpServletRequest request) {
		if (this.scopeHeader != null) {
			String value = request.getHeader(this.scopeHeader);
			if (StringUtils.hasText(value)) {
				return IdempotencyScopes.header(value.strip());
			}
		}
		Principal principal = request.getUserPrincipal();
		if (principal != null) {
			return IdempotencyScopes.principal(principal.getName());
		}
		return IdempotencyKey.GLOBAL_SCOPE;
	}

}
