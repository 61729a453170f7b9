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

import java.lang.reflect.Method;
import java.util.Objects;
import java.util.function.Consumer;

import dev.idempotency.spring.Idempotent;
import org.aopalliance.aop.Advice;

import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.context.aot.AbstractAotProcessor;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.stereotype.Controller;
import org.springframework.util.ClassUtils;

/**
 * Advisor that applies the {@link IdempotentMethodInterceptor} to the methods annotated
 * with {@link Idempotent} and a {@link Idempotent#key() key}, on any bean that an
 * auto-proxy creator proxies.
 * <p>
 * It fails the creation of a bean whose annotation cannot work: a method that returns
 * before its result is known ({@code CompletableFuture}, {@code Mono}...), an unknown or
 * transactional policy, an invalid expression, a key on a class, a result type whose
 * stored results could not be read back, and {@code @Idempotent} without a key on a bean
 * that is not a controller (nothing would protect it). Under Spring's AOT processing,
 * which asks at build time which beans get a proxy, the checks that need the template
 * (the policy, the result type) wait for the processed application's start-up: the
 * template reaches the store, which no build should create.
 * <p>
 * Its order, {@link #DEFAULT_ORDER}, puts it around Spring's transaction advisor (whose
 * default is {@link Ordered#LOWEST_PRECEDENCE}), so that an idempotent
 * {@code @Transactional} method's outcome is stored once its transaction committed.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class IdempotentMethodAdvisor extends AbstractPointcutAdvisor {

	/**
	 * Default order: just before {@link Ordered#LOWEST_PRECEDENCE}, the default order of
	 * Spring's transaction and caching advisors.
	 */
	public static final int DEFAULT_ORDER = Ordered.LOWEST_PRECEDENCE - 100;

	private final transient IdempotentMethodInterceptor interceptor;

	private final transient Pointcut pointcut;

	/**
	 * Create an advisor.
	 * @param interceptor the interceptor, never {@code null}
	 * @param policyCheck checks, at start-up, the name of the policy an annotated method
	 * uses; it throws {@link IllegalArgumentException} for a policy that cannot be used
	 */
	public IdempotentMethodAdvisor(IdempotentMethodInterceptor interceptor, Consumer<String> policyCheck) {
		this.interceptor = Objects.requireNonNull(interceptor, "'interceptor' must not be null");
		this.pointcut = new IdempotentMethodPointcut(this.interceptor,
				Objects.requireNonNull(policyCheck, "'policyCheck' must not be null"));
		setOrder(DEFAULT_ORDER);
	}

	@Override
	public Pointcut getPointcut() {
		return this.pointcut;
	}

	@Override
	public Advice getAdvice() {
		return this.interceptor;
	}

	/**
	 * Matches the methods whose {@code @Idempotent} has a key, and checks them.
	 */
	private static final class IdempotentMethodPointcut extends StaticMethodMatcherPointcut {

		private final IdempotentMethodInterceptor interceptor;

		private final Consumer<String> policyCheck;

		IdempotentMethodPointcut(IdempotentMethodInterceptor interceptor, Consumer<String> policyCheck) {
			this.interceptor = interceptor;
			this.policyCheck = policyCheck;
		}

		@Override
		public boolean matches(Method method, Class<?> targetClass) {
			Method specific = ClassUtils.getMostSpecificMethod(method, targetClass);
			Idempotent idempotent = AnnotatedElementUtils.findMergedAnnotation(specific, Idempotent.class);
			if (idempotent == null) {
				Idempotent onClass = AnnotatedElementUtils.findMergedAnnotation(targetClass, Idempotent.class);
				if (onClass != null && !onClass.key().isEmpty()) {
					throw new IllegalStateException("@Idempotent on " + targetClass.getName()
							+ " has a key, which only a method's annotation may have: move it to the methods");
				}
				return false;
			}
			if (idempotent.key().isEmpty()) {
				if (!AnnotatedElementUtils.hasAnnotation(targetClass, Controller.class)) {
					throw new IllegalStateException("@Idempotent method "
							+ IdempotentMethodInterceptor.describe(specific) + " is not a web handler, so it needs a"
							+ " key: add key = \"...\", a SpEL expression over its arguments (for example"
							+ " key = \"#command.requestId\")");
				}
				// a web handler: the HTTP filter protects its requests
				return false;
			}
			IdempotentMethodInterceptor.read(method, targetClass);
			if (Boolean.getBoolean(AbstractAotProcessor.AOT_PROCESSING)) {
				// AOT processing asks at build time which beans get a proxy, and no
				// bean may be created then: the template (over the engine and the
				// store) checks the policy and the result type when the processed
				// application starts
				return true;
			}
			try {
				this.policyCheck.accept(idempotent.policy());
			}
			catch (IllegalArgumentException ex) {
				throw new IllegalStateException(
						"@Idempotent method " + IdempotentMethodInterceptor.describe(specific) + ": " + ex.getMessage(),
						ex);
			}
			this.interceptor.check(method, targetClass);
			return true;
		}

	}

}
