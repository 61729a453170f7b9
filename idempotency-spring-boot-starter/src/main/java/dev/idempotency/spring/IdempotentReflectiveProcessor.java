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

import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Type;
import java.util.LinkedHashSet;
import java.util.Set;

import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.ReflectionHints;
import org.springframework.aot.hint.annotation.ReflectiveProcessor;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.util.ReflectionUtils;

/**
 * The reflection hints of the classes and methods annotated with {@link Idempotent},
 * which Spring's AOT processing asks of it for every bean class (the annotation is
 * meta-annotated with {@code @Reflective}):
 * <ul>
 * <li>every annotated method and class: registered, so that the method interceptor, the
 * HTTP filter and the start-up checks find the annotation and the parameters (their
 * names, for a key expression) of the methods, and the interceptor may invoke them;
 * <li>a method with a {@link Idempotent#key() key}, which the method interceptor makes
 * idempotent: what the interceptor reaches reflectively in the application's types. Its
 * result type is written and read back as JSON by Jackson; its arguments are read by the
 * key, scope and fingerprint expressions (SpEL) and written as JSON for the default
 * fingerprint, or give their own bytes ({@code toByteArray()}, {@code toByteBuffer()}).
 * Those types get Spring's binding hints ({@link BindingReflectionHintsRegistrar}), and
 * their public {@code toByteArray()} and {@code toByteBuffer()} are registered for
 * invocation.
 * </ul>
 * An HTTP endpoint (no key) needs nothing more: the filter stores and replays the bytes
 * of the response, and Spring MVC registers the types of the handler's body and result.
 *
 * @author Idempotency contributors
 */
class IdempotentReflectiveProcessor implements ReflectiveProcessor {

	private static final String[] BINARY_FORMS = { "toByteArray", "toByteBuffer" };

	private final BindingReflectionHintsRegistrar bindings = new BindingReflectionHintsRegistrar();

	@Override
	public void registerReflectionHints(ReflectionHints hints, AnnotatedElement element) {
		if (element instanceof Class<?> type) {
			hints.registerType(type);
		}
		else if (element instanceof Method method) {
			hints.registerMethod(method, ExecutableMode.INVOKE);
			MergedAnnotation<Idempotent> idempotent = MergedAnnotations.from(method, SearchStrategy.TYPE_HIERARCHY)
				.get(Idempotent.class);
			if (idempotent.isPresent() && !idempotent.getString("key").isEmpty()) {
				registerCall(hints, method);
			}
		}
	}

	private void registerCall(ReflectionHints hints, Method method) {
		this.bindings.registerReflectionHints(hints, method.getGenericReturnType());
		Set<Class<?>> arguments = new LinkedHashSet<>();
		for (Type parameter : method.getGenericParameterTypes()) {
			this.bindings.registerReflectionHints(hints, parameter);
			collect(arguments, ResolvableType.forType(parameter));
		}
		for (Class<?> argument : arguments) {
			for (String name : BINARY_FORMS) {
				Method binaryForm = ReflectionUtils.findMethod(argument, name);
				if (binaryForm != null && Modifier.isPublic(binaryForm.getModifiers())
						&& !Modifier.isStatic(binaryForm.getModifiers())) {
					hints.registerMethod(binaryForm, ExecutableMode.INVOKE);
				}
			}
		}
	}

	// the argument's class and those of its type arguments: the payload of a
	// ConsumerRecord<String, Event> or a Message<Event> is an Event
	private static void collect(Set<Class<?>> classes, ResolvableType type) {
		Class<?> resolved = type.resolve();
		if (resolved == null || !classes.add(resolved)) {
			return;
		}
		for (ResolvableType generic : type.getGenerics()) {
			collect(classes, generic);
		}
	}

}
