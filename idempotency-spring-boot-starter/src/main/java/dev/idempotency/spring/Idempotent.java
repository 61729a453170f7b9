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

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import dev.idempotency.core.engine.IdempotencyPolicy;

import org.springframework.aot.hint.annotation.Reflective;
import org.springframework.core.annotation.AliasFor;

/**
 * Marks a Spring MVC handler method, or every handler method of a controller, as
 * idempotent: requests that carry an {@code Idempotency-Key} header run the handler once,
 * and every retry with the same key gets the stored response of the first request. A
 * policy may take the key from another header or from the JSON body instead
 * ({@link IdempotencyKeySource}), as a webhook receiver does.
 * <p>
 * <b>Any bean method.</b> With a {@link #key()}, the annotation makes a method of any
 * Spring bean idempotent instead, through an AOP proxy: the key is a SpEL expression over
 * the arguments, the first call under a key runs and its result is stored, and a later
 * call with the same key and arguments gets an equal result without running (see
 * {@code IdempotencyTemplate} for what else it may meet). The HTTP filter ignores a
 * handler whose annotation has a key.
 *
 * <pre class="code">
 * &#64;Idempotent(policy = "payments", key = "#command.requestId")
 * public Receipt charge(ChargeCommand command) { ... }
 * </pre>
 * <p>
 * An annotation on a method takes precedence over one on its class. The policy named by
 * {@link #value()} must be configured under {@code idempotency.policies.<name>} (the
 * {@value IdempotencyPolicy#DEFAULT_NAME} policy always exists and uses the global
 * {@code idempotency.*} settings); an unknown name fails application start-up. A handler
 * that streams its response ({@code SseEmitter}, {@code ResponseBodyEmitter},
 * {@code StreamingResponseBody}) cannot be replayed and fails start-up too.
 * <p>
 * Every entry point finds the annotation with Spring's merged-annotation lookup, so it
 * may also be used as a meta-annotation of an application's own annotation.
 *
 * <pre class="code">
 * &#64;PostMapping("/payments")
 * &#64;Idempotent("payments")
 * PaymentReceipt pay(&#64;RequestBody PaymentRequest request) { ... }
 * </pre>
 * <p>
 * Spring's AOT processing registers what the annotated methods need in a native image
 * (the methods themselves; for a method with a key, the types of its arguments and of its
 * result, which the library reads and writes reflectively).
 *
 * @author Idempotency contributors
 * @since 0.1.0
 * @see NamedPolicies
 */
@Target({ ElementType.METHOD, ElementType.TYPE, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Reflective(IdempotentReflectiveProcessor.class)
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
	 * SpEL expression over the method's arguments that gives the key of a call, for
	 * example {@code #command.requestId} (arguments by name when the code is compiled
	 * with {@code -parameters}, else {@code #p0}, {@code #p1}...). Its value, turned into
	 * a string, must be 1 to 255 characters of visible ASCII. Only on a method; when set,
	 * the method is made idempotent by the method interceptor, not by the HTTP filter.
	 * @return the key expression, or empty for an HTTP endpoint
	 */
	String key() default "";

	/**
	 * SpEL expression over the arguments whose value's canonical JSON is the fingerprint
	 * of a call, for example {@code #command} or {@code {#from, #to, #amount}}. Defaults
	 * to every argument. Only with a {@link #key()}.
	 * @return the fingerprint expression, or empty for every argument
	 */
	String fingerprint() default "";

	/**
	 * SpEL expression over the arguments that gives the scope of the key, for example
	 * {@code #command.tenantId}; stored as {@code custom:<value>}, and the empty value is
	 * the global scope. Defaults to the scope the HTTP filter gives the current request
	 * (its principal, say) when the call runs in one, else the global scope. Only with a
	 * {@link #key()}.
	 * @return the scope expression, or empty for the default
	 */
	String scope() default "";

	/**
	 * Name of the operation whose keys the method's are: two operations never share a
	 * key. Defaults to the fully qualified name of the bean's class, the method's name
	 * and its parameter types, each after a {@code -}
	 * ({@code com.example.PaymentService.charge-com.example.ChargeCommand}), which no
	 * other method shares; set it to keep the keys of records already stored when the
	 * class, the method or its parameters change. Letters, digits, {@code .}, {@code _},
	 * {@code -} or {@code $}. Only with a {@link #key()}.
	 * @return the operation's name, or empty for the default
	 */
	String operation() default "";

	/**
	 * Whether a request without an idempotency key is rejected with {@code 400}. When
	 * {@code false}, such a request runs the handler without protection. A key that the
	 * policy reads from the request body is always required.
	 * @return whether the key is required
	 */
	boolean required() default true;

}
