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

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import dev.idempotency.core.engine.IdempotencyPolicy;
import org.jspecify.annotations.Nullable;

/**
 * The named {@link EndpointPolicy policies} of an application. The
 * {@value IdempotencyPolicy#DEFAULT_NAME} policy always exists.
 * <p>
 * Immutable and thread-safe.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class EndpointPolicies {

	private final Map<String, EndpointPolicy> policies;

	/**
	 * Create the registry.
	 * @param policies the policies, never {@code null}; names must be unique and one of
	 * them must be the {@value IdempotencyPolicy#DEFAULT_NAME} policy
	 */
	public EndpointPolicies(Collection<EndpointPolicy> policies) {
		Map<String, EndpointPolicy> map = new LinkedHashMap<>();
		for (EndpointPolicy policy : policies) {
			if (map.put(policy.name(), policy) != null) {
				throw new IllegalArgumentException("Duplicate policy '" + policy.name() + "'");
			}
		}
		if (!map.containsKey(IdempotencyPolicy.DEFAULT_NAME)) {
			throw new IllegalArgumentException("The '" + IdempotencyPolicy.DEFAULT_NAME + "' policy is missing");
		}
		this.policies = Collections.unmodifiableMap(map);
	}

	/**
	 * Return the policy of the given name.
	 * @param name the name, never {@code null}
	 * @return the policy, or {@code null} if there is none of that name
	 */
	public @Nullable EndpointPolicy get(String name) {
		return this.policies.get(name);
	}

	/**
	 * Return every policy, in the order they were given.
	 * @return the policies, unmodifiable
	 */
	public Collection<EndpointPolicy> all() {
		return this.policies.values();
	}

	/**
	 * Return the {@value IdempotencyPolicy#DEFAULT_NAME} policy.
	 * @return the default policy
	 */
	public EndpointPolicy getDefault() {
		EndpointPolicy policy = this.policies.get(IdempotencyPolicy.DEFAULT_NAME);
		return Objects.requireNonNull(policy);
	}

	/**
	 * Return the names of the configured policies.
	 * @return an unmodifiable set in configuration order
	 */
	public Set<String> names() {
		return this.policies.keySet();
	}

	/**
	 * Return the names of the transactional policies.
	 * @return the names, sorted; empty when no policy is transactional
	 * @see EndpointPolicy#transactional()
	 */
	public List<String> transactionalNames() {
		return this.policies.values()
			.stream()
			.filter(EndpointPolicy::transactional)
			.map(EndpointPolicy::name)
			.sorted()
			.toList();
	}

}
