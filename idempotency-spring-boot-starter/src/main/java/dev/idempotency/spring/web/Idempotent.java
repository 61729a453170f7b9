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
 * The former place of {@link dev.idempotency.spring.Idempotent @Idempotent}, kept so that
 * code written against it still works: it is meta-annotated with the new annotation, and
 * each of its attributes is an alias of the new one's, so every lookup of the new
 * annotation finds it.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 * @deprecated since 0.1.0 for {@link dev.idempotency.spring.Idempotent}, which every
 * entry point (HTTP endpoints, bean methods, Kafka listeners) shares: change the import
 */
@Target({ ElementType.METHOD, ElementType.TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Deprecated(since = "0.1.0")
@dev.idempotency.spring.Idempotent
public @interface Idempotent {

	/**
	 * Alias for {@link #policy()}.
	 * @return the name of the policy
	 */
	@AliasFor(annotation = dev.idempotency.spring.Idempotent.class, attribute = "policy")
	String value() default IdempotencyPolicy.DEFAULT_NAME;

	/**
	 * See {@link dev.idempotency.spring.Idempotent#policy()}.
	 * @return the name of the policy
	 */
	@AliasFor(annotation = dev.idempotency.spring.Idempotent.class, attribute = "policy")
	String policy() default IdempotencyPolicy.DEFAULT_NAME;

	/**
	 * See {@link dev.idempotency.spring.Idempotent#key()}.
	 * @return the key expression, or empty for an HTTP endpoint
	 */
	@AliasFor(annotation = dev.idempotency.spring.Idempotent.class)
	String key() default "";

	/**
	 * See {@link dev.idempotency.spring.Idempotent#fingerprint()}.
	 * @return the fingerprint expression, or empty for every argument
	 */
	@AliasFor(annotation = dev.idempotency.spring.Idempotent.class)
	String fingerprint() default "";

	/**
	 * See {@link dev.idempotency.spring.Idempotent#scope()}.
	 * @return the scope expression, or empty for the default
	 */
	@AliasFor(annotation = dev.idempotency.spring.Idempotent.class)
	String scope() default "";

	/**
	 * See {@link dev.idempotency.spring.Idempotent#operation()}.
	 * @return the operation's name, or empty for the default
	 */
	@AliasFor(annotation = dev.idempotency.spring.Idempotent.class)
	String operation() default "";

	/**
	 * See {@link dev.idempotency.spring.Idempotent#required()}.
	 * @return whether the key is required
	 */
	@AliasFor(annotation = dev.idempotency.spring.Idempotent.class)
	boolean required() default true;

}
