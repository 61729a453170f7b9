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

import java.util.Objects;

import dev.idempotency.spring.Idempotent;
import dev.idempotency.spring.NamedPolicies;
import org.jspecify.annotations.Nullable;

import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.web.method.HandlerMethod;

/**
 * How a request that matched an idempotent endpoint is treated: the policy that applies
 * and whether a key is required.
 *
 * @param policy name of the policy, never {@code null}
 * @param required whether a request without a key is rejected
 * @author Idempotency contributors
 * @since 0.1.0
 */
public record IdempotentEndpoint(String policy, boolean required) {

	/**
	 * Create an endpoint description.
	 * @param policy name of the policy, never {@code null}
	 * @param required whether a request without a key is rejected
	 */
	public IdempotentEndpoint {
		Objects.requireNonNull(policy, "'policy' must not be null");
	}

	/**
	 * Return the endpoint that a handler method's {@link Idempotent @Idempotent} makes of
	 * it, on Spring MVC and on WebFlux alike: the method's annotation, or else its
	 * class's for a mapping that accepts an unsafe method. A method annotation with a
	 * {@link Idempotent#key() key} makes a method call idempotent, not a request.
	 * @param handler the handler method
	 * @param onlySafeMethods whether the handler's mapping accepts only safe methods
	 * ({@code GET}, {@code HEAD}, {@code OPTIONS}, {@code TRACE})
	 * @param policies the configured policies
	 * @return the endpoint, or {@code null} if the handler is not idempotent
	 * @throws IllegalStateException if the annotation names a policy that is not
	 * configured, or a class annotation has a key
	 */
	public static @Nullable IdempotentEndpoint of(HandlerMethod handler, boolean onlySafeMethods,
			NamedPolicies policies) {
		Idempotent idempotent = AnnotatedElementUtils.findMergedAnnotation(handler.getMethod(), Idempotent.class);
		if (idempotent != null && !idempotent.key().isEmpty()) {
			// a method call made idempotent by its key, not a request
			return null;
		}
		if (idempotent == null) {
			idempotent = AnnotatedElementUtils.findMergedAnnotation(handler.getBeanType(), Idempotent.class);
			if (idempotent == null || onlySafeMethods) {
				return null;
			}
			if (!idempotent.key().isEmpty()) {
				throw new IllegalStateException("@Idempotent on " + handler.getBeanType().getName()
						+ " has a key, which only a method's annotation may have: move it to the methods");
			}
		}
		if (policies.get(idempotent.policy()) == null) {
			throw new IllegalStateException("@Idempotent handler " + handler + " names the policy '"
					+ idempotent.policy() + "', which is not configured: add it under 'idempotency.policies."
					+ idempotent.policy() + "' (configured policies: " + policies.names() + ")");
		}
		return new IdempotentEndpoint(idempotent.policy(), idempotent.required());
	}

}
