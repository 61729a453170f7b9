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

package dev.idempotency.spring.autoconfigure;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.util.List;

import dev.idempotency.core.engine.IdempotencyListener;
import dev.idempotency.spring.store.tiered.TieredStoreListener;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Tells several listeners of one interface, in order: the one composite for every
 * listener type the auto-configuration combines (the engine's {@link IdempotencyListener}
 * beans, a {@link TieredStoreListener} and the metrics). It is a proxy of the interface,
 * so a method added to the interface is passed on without changes here. A listener that
 * throws is logged at {@code WARN} with its class and skipped: the others are still told,
 * and the caller never sees the exception.
 * <p>
 * Only interfaces whose methods all return {@code void} can be combined. A call costs a
 * reflective call per listener, which is paid only when there are two listeners or more.
 *
 * @author Idempotency contributors
 */
final class CompositeListener implements InvocationHandler {

	private static final Log logger = LogFactory.getLog(CompositeListener.class);

	private final Class<?> type;

	private final Object[] listeners;

	private CompositeListener(Class<?> type, List<?> listeners) {
		this.type = type;
		this.listeners = listeners.toArray();
	}

	/**
	 * Return a listener that tells each of the given ones, in order.
	 * @param <L> the listener interface
	 * @param type the listener interface
	 * @param listeners the listeners
	 * @return the only listener if there is one, else a composite of them all
	 */
	static <L> L of(Class<L> type, List<? extends L> listeners) {
		if (listeners.size() == 1) {
			return listeners.get(0);
		}
		if (!type.isInterface()) {
			throw new IllegalArgumentException(type.getName() + " is not an interface");
		}
		for (Method method : type.getMethods()) {
			if (!Modifier.isStatic(method.getModifiers()) && method.getReturnType() != void.class) {
				throw new IllegalArgumentException(method + " does not return void: listeners cannot be combined");
			}
		}
		return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] { type },
				new CompositeListener(type, listeners)));
	}

	@Override
	public @Nullable Object invoke(Object proxy, Method method, @Nullable Object[] args) throws Throwable {
		if (method.getDeclaringClass() == Object.class) {
			return switch (method.getName()) {
				case "equals" -> args != null && proxy == args[0];
				case "hashCode" -> System.identityHashCode(proxy);
				default -> toString();
			};
		}
		for (Object listener : this.listeners) {
			try {
				method.invoke(listener, args);
			}
			catch (InvocationTargetException ex) {
				Throwable failure = ex.getCause();
				if (failure instanceof Error error) {
					throw error;
				}
				logger.warn("Listener " + listener.getClass().getName() + " failed in " + method.getName()
						+ "; ignoring it", failure);
			}
		}
		return null;
	}

	@Override
	public String toString() {
		return "Composite " + this.type.getSimpleName() + " of " + this.listeners.length + " listeners";
	}

}
