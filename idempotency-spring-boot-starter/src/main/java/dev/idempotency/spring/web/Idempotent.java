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

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import dev.idempotency.core.engine.IdempotencyPolicy;

import org.springframework.core.annotation.AliasFor;

/**
 * Marks a Spring MVC handler method, or every handler method of a controller, as
 * idempotent: requests that carry an {@code Idempotency-Key} header run the handler once,
 * and every retry with the same key gets the stored response of the first request. A
 * policy may take the key from another header or from the JSON body instead
 * ({@link IdempotencyKeySource}), as a webhook receiver does.
 * <p>
 * An annotation on a method takes precedence over one on its class. The policy named by
 * {@link #value()} must be configured under {@code idempotency.policies.<name>} (the
 * {@value IdempotencyPolicy#DEFAULT_NAME} policy always exists and uses the global
 * {@code idempotency.*} settings); an unknown name fails application start-up. A handler
 * that streams its response ({@code SseEmitter}, {@code ResponseBodyEmitter},
 * {@code StreamingResponseBody}) cannot be replayed and fails start-up too.
 *
 * <pre class="code">
 * &#64;PostMapping("/payments")
 * &#64;Idempotent("payments")
 * PaymentReceipt pay(&#64;RequestBody PaymentRequest request) { ... }
 * </pre>
 *
 * @author Idempotency contributors
 * @since 0.1.0
 * @see IdempotencyFilter
 */
@Target({ ElementType.METHOD, ElementType.TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Idempotent {

	/**
	 * Alias for {@link #policy()}.
	 * @return the name of the policy
	 */
	@AliasFor("policy")
	String value() default IdempotencyPolicy.DEFAULT_NAME;

	/**
	 * Name of the policy (under {@code idempotency.policies}) that sets the TTL, lock
	 * timeout, limits and fingerprint options of the endpoint.
	 * @return the name of the policy
	 */
	@AliasFor("value")
	String policy() default IdempotencyPolicy.DEFAULT_NAME;

	/**
	 * Whether a request without an idempotency key is rejected with {@code 400}. When
	 * {@code false}, such a request runs the handler without protection. A key that the
	 * policy reads from the request body is always required.
	 * @return whether the key is required
	 */
	boolean required() default true;

}
