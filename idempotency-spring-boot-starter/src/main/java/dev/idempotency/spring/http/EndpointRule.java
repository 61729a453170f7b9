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

package dev.idempotency.spring.http;

import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

import dev.idempotency.spring.Idempotent;
import org.jspecify.annotations.Nullable;

import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;
import org.springframework.web.util.pattern.PatternParseException;

/**
 * An idempotent endpoint declared by configuration ({@code idempotency.endpoints}) rather
 * than by {@link Idempotent @Idempotent}: requests whose method is one of
 * {@link #methods()} and whose path within the application matches {@link #path()} (a
 * {@link PathPattern}).
 * <p>
 * Immutable and thread-safe.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class EndpointRule {

	private final Set<String> methods;

	private final PathPattern pattern;

	private final IdempotentEndpoint endpoint;

	/**
	 * Create a rule.
	 * @param methods the HTTP methods, never {@code null} or empty
	 * @param path the path pattern, never {@code null}
	 * @param policy the name of the policy, never {@code null}
	 * @param required whether requests without a key are rejected
	 * @throws org.springframework.web.util.pattern.PatternParseException if the path is
	 * not a valid pattern
	 */
	public EndpointRule(Set<String> methods, String path, String policy, boolean required) {
		Objects.requireNonNull(methods, "'methods' must not be null");
		Objects.requireNonNull(path, "'path' must not be null");
		if (methods.isEmpty()) {
			throw new IllegalArgumentException("'methods' must not be empty");
		}
		Set<String> upperCase = new LinkedHashSet<>();
		for (String method : methods) {
			upperCase.add(method.strip().toUpperCase(Locale.ROOT));
		}
		this.methods = Set.copyOf(upperCase);
		this.pattern = PathPatternParser.defaultInstance.parse(path);
		this.endpoint = new IdempotentEndpoint(policy, required);
	}

	/**
	 * Return the HTTP methods, in upper case.
	 * @return the methods
	 */
	public Set<String> methods() {
		return this.methods;
	}

	/**
	 * Return the path pattern.
	 * @return the pattern as written
	 */
	public String path() {
		return this.pattern.getPatternString();
	}

	/**
	 * Return the endpoint description of matching requests.
	 * @return the endpoint
	 */
	public IdempotentEndpoint endpoint() {
		return this.endpoint;
	}

	/**
	 * Return the endpoint of a request if this rule matches it.
	 * @param method the request's HTTP method
	 * @param pathWithinApplication the request's path within the application
	 * @return the endpoint, or {@code null} if the rule does not match
	 */
	public @Nullable IdempotentEndpoint match(String method, PathContainer pathWithinApplication) {
		if (this.methods.contains(method) && this.pattern.matches(pathWithinApplication)) {
			return this.endpoint;
		}
		return null;
	}

	/**
	 * Return whether some request of a handler mapping with these methods and path
	 * patterns could match this rule: in either direction, since a rule may name one path
	 * of a templated mapping or cover several mappings with a wildcard.
	 * @param mappingMethods the mapping's HTTP methods, empty for all
	 * @param mappingPatterns the mapping's path patterns
	 * @return whether they may overlap
	 */
	public boolean mayMatch(Set<String> mappingMethods, Set<String> mappingPatterns) {
		if (!mappingMethods.isEmpty() && mappingMethods.stream().noneMatch(this.methods::contains)) {
			return false;
		}
		for (String mappingPattern : mappingPatterns) {
			PathContainer mappingPath = PathContainer.parsePath(mappingPattern);
			if (this.pattern.matches(mappingPath)) {
				return true;
			}
			try {
				if (PathPatternParser.defaultInstance.parse(mappingPattern).matches(PathContainer.parsePath(path()))) {
					return true;
				}
			}
			catch (PatternParseException ex) {
				// a pattern of the legacy syntax: no judgement, no warning
				return true;
			}
		}
		return false;
	}

	@Override
	public String toString() {
		return this.methods + " " + path() + " -> " + this.endpoint;
	}

}
