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

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Duration;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.core.env.Environment;

/**
 * What the tests need to know of virtual threads in a build that compiles for Java 17:
 * whether a thread is one ({@code Thread.isVirtual()}, called reflectively on JDK 21 and
 * later), and whether an application's requests should run on them.
 *
 * @author Idempotency contributors
 */
public final class VirtualThreads {

	/**
	 * The property that turns virtual threads on, which the compatibility lane sets for
	 * every application of its tests through the environment variable
	 * {@code SPRING_THREADS_VIRTUAL_ENABLED} (docs/testing.md).
	 */
	public static final String PROPERTY = "spring.threads.virtual.enabled";

	private static final @Nullable Method IS_VIRTUAL = isVirtualMethod();

	private VirtualThreads() {
	}

	private static @Nullable Method isVirtualMethod() {
		try {
			return Thread.class.getMethod("isVirtual");
		}
		catch (NoSuchMethodException ex) {
			// JDK 17: no virtual threads
			return null;
		}
	}

	/**
	 * Whether this JVM has virtual threads (JDK 21 or later).
	 * @return {@code true} if it has
	 */
	public static boolean supported() {
		return IS_VIRTUAL != null;
	}

	/**
	 * Whether a thread is a virtual thread.
	 * @param thread the thread
	 * @return {@code true} if it is; always {@code false} on JDK 17
	 */
	public static boolean isVirtual(Thread thread) {
		if (IS_VIRTUAL == null) {
			return false;
		}
		try {
			return (Boolean) IS_VIRTUAL.invoke(thread);
		}
		catch (IllegalAccessException | InvocationTargetException ex) {
			throw new IllegalStateException("Cannot call Thread.isVirtual()", ex);
		}
	}

	/**
	 * Whether the calling thread is a virtual thread.
	 * @return {@code true} if it is
	 */
	public static boolean current() {
		return isVirtual(Thread.currentThread());
	}

	/**
	 * Whether an application with the given environment runs its requests on virtual
	 * threads: {@value #PROPERTY} is {@code true} and the JVM has them. Read from the
	 * property and the JVM, not from Spring Boot's own decision, so that a test comparing
	 * the two checks Boot's too.
	 * @param environment the application's environment
	 * @return {@code true} if its requests should run on virtual threads
	 */
	public static boolean expected(Environment environment) {
		return supported() && environment.getProperty(PROPERTY, Boolean.class, false);
	}

	/**
	 * Whether Reactor's bounded-elastic scheduler, the WebFlux filter's store scheduler
	 * unless the application sets another, runs its tasks on virtual threads. Spring Boot
	 * turns Reactor's switch on for an application with virtual threads on (the system
	 * property {@code reactor.schedulers.defaultBoundedElasticOnVirtualThreads}), but
	 * Reactor reads it once per JVM, when its schedulers are first used: in a test JVM,
	 * maybe by a class that started no application.
	 * @return {@code true} if its threads are virtual
	 */
	public static boolean onBoundedElastic() {
		Boolean virtual = Mono.fromCallable(VirtualThreads::current)
			.subscribeOn(Schedulers.boundedElastic())
			.block(Duration.ofSeconds(30));
		return Boolean.TRUE.equals(virtual);
	}

	/**
	 * Describe a thread for an assertion's message.
	 * @param virtual whether it is virtual
	 * @return {@code virtual} or {@code platform}
	 */
	public static String kind(boolean virtual) {
		return virtual ? "virtual" : "platform";
	}

}
