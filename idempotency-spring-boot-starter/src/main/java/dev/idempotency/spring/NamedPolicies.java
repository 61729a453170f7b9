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

package dev.idempotency.spring;

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
 * The named {@link NamedPolicy policies} of an application, by name: where the HTTP
 * filter, the {@code IdempotencyTemplate}, idempotent bean methods and Kafka listeners
 * look up the policy an {@link Idempotent @Idempotent} names. The
 * {@value IdempotencyPolicy#DEFAULT_NAME} policy always exists.
 * <p>
 * Immutable and thread-safe.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class NamedPolicies {

	private final Map<String, NamedPolicy> policies;

	/**
	 * Create the registry.
	 * @param policies the policies, never {@code null}; names must be unique and one of
	 * them must be the {@value IdempotencyPolicy#DEFAULT_NAME} policy
	 */
	public NamedPolicies(Collection<NamedPolicy> policies) {
		Map<String, NamedPolicy> map = new LinkedHashMap<>();
		for (NamedPolicy policy : policies) {
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
	public @Nullable NamedPolicy get(String name) {
		return this.policies.get(name);
	}

	/**
	 * Return every policy, in the order they were given.
	 * @return the policies, unmodifiable
	 */
	public Collection<NamedPolicy> all() {
		return this.policies.values();
	}

	/**
	 * Return the {@value IdempotencyPolicy#DEFAULT_NAME} policy.
	 * @return the default policy
	 */
	public NamedPolicy getDefault() {
		NamedPolicy policy = this.policies.get(IdempotencyPolicy.DEFAULT_NAME);
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
	 * @see NamedPolicy#transactional()
	 */
	public List<String> transactionalNames() {
		return this.policies.values()
			.stream()
			.filter(NamedPolicy::transactional)
			.map(NamedPolicy::name)
			.sorted()
			.toList();
	}

}
