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
import java.lang.reflect.Type;
import java.util.Arrays;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.function.Function;
import java.util.function.Supplier;

import dev.idempotency.core.IdempotencyScopes;
import dev.idempotency.spring.Idempotent;
import dev.idempotency.spring.observation.IdempotencyEntryPoint;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.MethodClassKey;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.ClassUtils;

/**
 * Makes the methods annotated with {@link Idempotent} and a {@link Idempotent#key() key}
 * idempotent: evaluates the key, the scope and the fingerprint over the arguments and
 * runs the call through an {@link IdempotencyTemplate}. The SpEL expressions see the
 * arguments by name (with {@code -parameters}) and as {@code #p0}, {@code #a0}..., and
 * beans as {@code @name}. Without a {@code fingerprint}, the fingerprint covers every
 * argument, except for a Kafka listener ({@code @KafkaListener}), whose fingerprint is
 * its payload: its own bytes (a {@code byte[]}, a string, a protobuf message's
 * {@code toByteArray()}...), else its JSON.
 * <p>
 * Thread-safe; each method's annotation is read and its expressions parsed once.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 * @see IdempotentMethodAdvisor
 */
public final class IdempotentMethodInterceptor implements MethodInterceptor {

	private static final SpelExpressionParser parser = new SpelExpressionParser();

	private static final boolean KAFKA_PRESENT = ClassUtils.isPresent(
			"org.springframework.kafka.annotation.KafkaListener", IdempotentMethodInterceptor.class.getClassLoader());

	private final Supplier<IdempotencyTemplate> template;

	private final @Nullable BeanFactoryResolver beanResolver;

	private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();

	private final Map<MethodClassKey, MethodSettings> settings = new ConcurrentHashMap<>();

	/**
	 * Create an interceptor.
	 * @param template runs the calls, never {@code null}
	 * @param beanFactory resolves {@code @bean} references of the expressions, or
	 * {@code null} for none
	 */
	public IdempotentMethodInterceptor(IdempotencyTemplate template, @Nullable BeanFactory beanFactory) {
		this(supplier(Objects.requireNonNull(template, "'template' must not be null")), beanFactory);
	}

	/**
	 * Create an interceptor that gets its template when it first needs it (an advisor is
	 * created before the beans the template uses).
	 * @param template gives the template that runs the calls, never {@code null}
	 * @param beanFactory resolves {@code @bean} references of the expressions, or
	 * {@code null} for none
	 */
	public IdempotentMethodInterceptor(Supplier<IdempotencyTemplate> template, @Nullable BeanFactory beanFactory) {
		this.template = Objects.requireNonNull(template, "'template' must not be null");
		this.beanResolver = (beanFactory != null) ? new BeanFactoryResolver(beanFactory) : null;
	}

	private static Supplier<IdempotencyTemplate> supplier(IdempotencyTemplate template) {
		return () -> template;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target)
				: invocation.getMethod().getDeclaringClass();
		MethodSettings method = settings(invocation.getMethod(), targetClass);
		Object[] arguments = invocation.getArguments();
		MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(target, method.method, arguments,
				this.parameterNames);
		if (this.beanResolver != null) {
			context.setBeanResolver(this.beanResolver);
		}
		String key;
		String scope;
		Object request;
		try {
			key = key(method, context);
			scope = (method.scope != null) ? IdempotencyScopes.custom(text(method.scope, context, "scope")) : null;
			if (method.fingerprint != null) {
				request = value(method.fingerprint, context, "fingerprint");
			}
			else if (method.payload != null) {
				request = method.payload.apply(arguments);
			}
			else {
				request = Arrays.asList(arguments);
			}
		}
		catch (InvalidIdempotencyKeyException | InvalidIdempotentRequestException ex) {
			throw method.listener ? forListener(method, ex) : ex;
		}
		if (!method.listener) {
			return this.template.get()
				.call(IdempotencyEntryPoint.METHOD, method.policy, method.operation, scope, key, request,
						method.resultType, invocation::proceed);
		}
		// a listener's record whose key or fingerprint cannot be had:
		// name the listener, for the error handler's log
		boolean[] ran = new boolean[1];
		try {
			return this.template.get()
				.call(IdempotencyEntryPoint.KAFKA, method.policy, method.operation, scope, key, request,
						method.resultType, () -> {
							ran[0] = true;
							return invocation.proceed();
						});
		}
		catch (InvalidIdempotencyKeyException | InvalidIdempotentRequestException ex) {
			if (ran[0]) {
				throw ex;
			}
			throw forListener(method, ex);
		}
	}

	private static IdempotencyException forListener(MethodSettings method, IdempotencyException ex) {
		String message = "listener " + describe(method.method) + ": " + ex.getMessage();
		return (ex instanceof InvalidIdempotencyKeyException) ? new InvalidIdempotencyKeyException(message, ex)
				: new InvalidIdempotentRequestException(message, ex.getKey(), ex);
	}

	/**
	 * Read and check the annotation of an idempotent method at start-up, and check that
	 * its results can be read back once stored.
	 * @param method the method, as invoked
	 * @param targetClass the class of the bean
	 * @throws IllegalStateException if the annotation cannot be used, or the results
	 * could not be read back
	 */
	void check(Method method, Class<?> targetClass) {
		MethodSettings settings = settings(method, targetClass);
		this.template.get().checkResultType(describe(settings.method), settings.resultType);
	}

	private static @Nullable String key(MethodSettings method, MethodBasedEvaluationContext context) {
		Object value;
		try {
			value = method.key.getValue(context);
		}
		catch (EvaluationException ex) {
			throw new InvalidIdempotencyKeyException("The idempotency key of operation '" + method.operation
					+ "' could not be had from '" + method.key.getExpressionString() + "': " + ex.getMessage(), ex);
		}
		return (value != null) ? value.toString() : null;
	}

	private static String text(Expression expression, MethodBasedEvaluationContext context, String what) {
		Object value = value(expression, context, what);
		return (value != null) ? value.toString() : "";
	}

	private static @Nullable Object value(Expression expression, MethodBasedEvaluationContext context, String what) {
		try {
			return expression.getValue(context);
		}
		catch (EvaluationException ex) {
			throw new InvalidIdempotentRequestException("The " + what + " expression '"
					+ expression.getExpressionString() + "' of an idempotent method failed: " + ex.getMessage(), null,
					ex);
		}
	}

	private MethodSettings settings(Method method, Class<?> targetClass) {
		MethodClassKey cacheKey = new MethodClassKey(method, targetClass);
		MethodSettings settings = this.settings.get(cacheKey);
		if (settings == null) {
			settings = read(method, targetClass);
			this.settings.put(cacheKey, settings);
		}
		return settings;
	}

	/**
	 * Read and check the annotation of an idempotent method.
	 * @param method the method, as invoked
	 * @param targetClass the class of the bean
	 * @return what the method's calls need
	 * @throws IllegalStateException if the annotation cannot be used
	 */
	static MethodSettings read(Method method, Class<?> targetClass) {
		Method specific = ClassUtils.getMostSpecificMethod(method, targetClass);
		Idempotent idempotent = AnnotatedElementUtils.findMergedAnnotation(specific, Idempotent.class);
		if (idempotent == null || idempotent.key().isEmpty()) {
			throw new IllegalStateException(describe(specific) + " has no @Idempotent with a key");
		}
		Class<?> returnType = specific.getReturnType();
		if (Future.class.isAssignableFrom(returnType)
				|| ReactiveAdapterRegistry.getSharedInstance().getAdapter(returnType) != null) {
			throw new IllegalStateException("@Idempotent method " + describe(specific) + " returns "
					+ returnType.getName() + ": its result is not known when it returns, so it cannot be stored;"
					+ " return the result itself");
		}
		String operation = idempotent.operation().isEmpty() ? defaultOperation(specific, targetClass)
				: idempotent.operation();
		if (!IdempotencyScopes.isOperationName(operation)) {
			throw new IllegalStateException("@Idempotent method " + describe(specific) + " has the operation name '"
					+ operation + "': use letters, digits, '.', '_', '-' or '$' only (set 'operation')");
		}
		Type resultType = ResolvableType.forMethodReturnType(specific, targetClass).getType();
		// a Kafka listener without fingerprint: its payload, not every argument
		boolean listener = KAFKA_PRESENT && ListenerPayloads.isListener(specific, targetClass);
		Function<@Nullable Object[], RecordValue> payload = (listener && idempotent.fingerprint().isEmpty())
				? ListenerPayloads.of(specific) : null;
		return new MethodSettings(specific, idempotent.policy(), operation, parse(idempotent.key(), "key", specific),
				parseOptional(idempotent.fingerprint(), "fingerprint", specific),
				parseOptional(idempotent.scope(), "scope", specific), resultType, payload, listener);
	}

	/**
	 * Return the default operation name of a method: the fully qualified name of the
	 * bean's class, the method's name and the names of its parameter types, each after a
	 * {@code -} (a character no Java name has), for example
	 * {@code com.example.Refunds.refund-com.example.RefundCommand}. Two methods never
	 * share it: not those of two classes with the same simple name, nor two overloads.
	 * @param method the method
	 * @param targetClass the class of the bean
	 * @return the name
	 */
	static String defaultOperation(Method method, Class<?> targetClass) {
		StringBuilder name = new StringBuilder(ClassUtils.getUserClass(targetClass).getName()).append('.')
			.append(method.getName());
		for (Class<?> parameter : method.getParameterTypes()) {
			name.append('-').append(typeName(parameter));
		}
		return name.toString();
	}

	private static String typeName(Class<?> type) {
		return type.isArray() ? typeName(type.getComponentType()) + "$array" : type.getName();
	}

	private static @Nullable Expression parseOptional(String text, String attribute, Method method) {
		return text.isEmpty() ? null : parse(text, attribute, method);
	}

	private static Expression parse(String text, String attribute, Method method) {
		try {
			return parser.parseExpression(text);
		}
		catch (ParseException ex) {
			throw new IllegalStateException("@Idempotent method " + describe(method) + " has an invalid " + attribute
					+ " expression '" + text + "': " + ex.getMessage(), ex);
		}
	}

	static String describe(Method method) {
		return ClassUtils.getQualifiedMethodName(method);
	}

	/**
	 * What the calls of one idempotent method need.
	 *
	 * @param method the annotated method
	 * @param policy the policy's name
	 * @param operation the operation's name
	 * @param key the key expression
	 * @param fingerprint the fingerprint expression, or {@code null} for every argument
	 * @param scope the scope expression, or {@code null} for the default scope
	 * @param resultType the declared result type
	 * @param payload gives the payload of a Kafka listener without fingerprint
	 * expression, or {@code null}
	 * @param listener whether the method is a Kafka listener
	 */
	record MethodSettings(Method method, String policy, String operation, Expression key,
			@Nullable Expression fingerprint, @Nullable Expression scope, Type resultType,
			@Nullable Function<@Nullable Object[], RecordValue> payload, boolean listener) {

	}

}
