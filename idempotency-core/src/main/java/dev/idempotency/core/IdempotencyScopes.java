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

package dev.idempotency.core;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

import org.jspecify.annotations.Nullable;

/**
 * The stored form of the {@link IdempotencyKey#scope() scope} of a key.
 * <p>
 * Every non-empty scope names its source with a prefix, so that no value of one source
 * can name the scope of another: {@code header:<value>} for a scope taken from a request
 * header (a tenant), {@code principal:<name>} for an authenticated principal (also when
 * the name is empty: an authenticated caller never shares the global scope) and
 * {@code custom:<scope>} for a scope of an application's own. The global scope is the
 * empty string, whatever its source. The keys of an idempotent method or operation (not
 * an HTTP request) are kept apart from every request's by
 * {@code operation:<name>/<scope>}, whatever the scope inside.
 * <p>
 * A scope longer than {@link IdempotencyKey#MAX_SCOPE_LENGTH} (a token's subject, say) is
 * stored as {@code sha256:} and the lower-case hex SHA-256 digest of its UTF-8 bytes,
 * prefix included. No literal scope starts with {@code sha256:}, as each starts with the
 * prefix of its source, so a digest never meets a literal scope. These forms identify
 * records already written: they never change.
 * <p>
 * Thread-safe.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class IdempotencyScopes {

	/**
	 * Prefix of scopes taken from a request header.
	 */
	public static final String HEADER_PREFIX = "header:";

	/**
	 * Prefix of scopes taken from the name of an authenticated principal.
	 */
	public static final String PRINCIPAL_PREFIX = "principal:";

	/**
	 * Prefix of the non-empty scopes of an application's own scope resolver.
	 */
	public static final String CUSTOM_PREFIX = "custom:";

	/**
	 * Prefix of the scopes of the keys of an idempotent operation (a method, or code that
	 * calls the engine itself) rather than an HTTP request.
	 */
	public static final String OPERATION_PREFIX = "operation:";

	/**
	 * Prefix of the digest that stands for a scope too long to store.
	 */
	public static final String HASHED_PREFIX = "sha256:";

	private IdempotencyScopes() {
	}

	/**
	 * Return the scope of a request header's value.
	 * @param value the value, never {@code null}
	 * @return the scope, which may be too long to store as it is
	 */
	public static String header(String value) {
		return HEADER_PREFIX + value;
	}

	/**
	 * Return the scope of an authenticated principal.
	 * @param name the principal's name; {@code null} is taken as empty
	 * @return the scope, which may be too long to store as it is
	 */
	public static String principal(@Nullable String name) {
		return PRINCIPAL_PREFIX + ((name != null) ? name : "");
	}

	/**
	 * Return the scope of a value of an application's own; the empty value stays the
	 * global scope.
	 * @param scope the value, never {@code null}
	 * @return the scope, which may be too long to store as it is
	 */
	public static String custom(String scope) {
		return scope.isEmpty() ? scope : CUSTOM_PREFIX + scope;
	}

	/**
	 * Return the scope of the keys of a named operation inside another scope: the
	 * operation's keys never meet those of HTTP requests, nor of another operation,
	 * whatever their values.
	 * @param operation the operation's name: letters, digits and {@code . _ - $} only, so
	 * that it cannot contain the {@code /} that ends it
	 * @param scope the scope inside the operation (a principal's, say), never
	 * {@code null}
	 * @return the scope, which may be too long to store as it is
	 * @throws IllegalArgumentException if the operation's name is empty or has another
	 * character
	 */
	public static String operation(String operation, String scope) {
		if (!isOperationName(operation)) {
			throw new IllegalArgumentException(
					"operation name '" + operation + "' must be one or more letters, digits, '.', '_', '-' or '$'");
		}
		return OPERATION_PREFIX + operation + "/" + scope;
	}

	/**
	 * Return whether the given value can name an operation: one or more ASCII letters,
	 * digits, {@code .}, {@code _}, {@code -} or {@code $}.
	 * @param name the candidate, may be {@code null}
	 * @return {@code true} if it can
	 */
	public static boolean isOperationName(@Nullable String name) {
		if (name == null || name.isEmpty()) {
			return false;
		}
		for (int i = 0; i < name.length(); i++) {
			char c = name.charAt(i);
			boolean allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.'
					|| c == '_' || c == '-' || c == '$';
			if (!allowed) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Return the form of a scope that a key can hold: the scope itself when it has at
	 * most {@link IdempotencyKey#MAX_SCOPE_LENGTH} characters, else {@code sha256:} and
	 * the hex digest of the scope.
	 * @param scope the scope, never {@code null}
	 * @return the scope to store
	 */
	public static String storable(String scope) {
		if (scope.length() <= IdempotencyKey.MAX_SCOPE_LENGTH) {
			return scope;
		}
		byte[] digest = Sha256.threadDigest().digest(scope.getBytes(StandardCharsets.UTF_8));
		return HASHED_PREFIX + HexFormat.of().formatHex(digest);
	}

}
