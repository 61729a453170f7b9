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

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.StoredResponse;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * The stored form of the outcome of an idempotent call, in the store's
 * {@link StoredResponse} (the store contract is the one of HTTP responses):
 * <ul>
 * <li>a result: status {@code 200} and the result as JSON, written and read by Jackson
 * with the declared result type;
 * <li>no result ({@code null}, or a {@code void} method): status {@code 204} and no body;
 * <li>a deterministic exception: status {@code 200}, the exception's class in the
 * {@value #EXCEPTION_HEADER} header and {@code {"message": ...}} as the body.
 * </ul>
 * Thread-safe.
 *
 * @author Idempotency contributors
 */
final class StoredResults {

	/**
	 * Header that names the class of a stored exception.
	 */
	static final String EXCEPTION_HEADER = "Idempotent-Exception";

	private static final List<HttpHeader> JSON = List.of(new HttpHeader("Content-Type", "application/json"));

	private static final StoredResponse NO_RESULT = new StoredResponse(204, List.of(), new byte[0]);

	private final JsonMapper mapper;

	StoredResults(JsonMapper mapper) {
		this.mapper = mapper;
	}

	/**
	 * Return the stored form of a result.
	 * @param result the result, may be {@code null}
	 * @param type the declared result type
	 * @param maxBody largest body stored, in bytes
	 * @return the stored form
	 * @throws NotStorableException if the result cannot be written, or is too large
	 */
	StoredResponse result(@Nullable Object result, JavaType type, int maxBody) {
		if (result == null) {
			return NO_RESULT;
		}
		byte[] json;
		try {
			json = this.mapper.writerFor(type).writeValueAsBytes(result);
		}
		catch (JacksonException ex) {
			throw new NotStorableException("Jackson cannot write it as " + type + ": " + ex.getOriginalMessage(), ex);
		}
		if (json.length > maxBody) {
			throw new NotStorableException(
					"its JSON has " + json.length + " bytes, more than the policy's max-response-body of " + maxBody,
					null);
		}
		return new StoredResponse(200, JSON, json);
	}

	/**
	 * Return the stored form of a deterministic exception.
	 * @param exception the exception
	 * @return the stored form
	 */
	StoredResponse exception(Throwable exception) {
		Map<String, @Nullable Object> body = new LinkedHashMap<>();
		body.put("message", exception.getMessage());
		return new StoredResponse(200, List.of(new HttpHeader(EXCEPTION_HEADER, exception.getClass().getName())),
				this.mapper.writeValueAsBytes(body));
	}

	/**
	 * Read a stored outcome back: return the result, or throw the stored exception.
	 * @param key the key whose outcome it is
	 * @param stored the stored form
	 * @param type the declared result type
	 * @param deterministic the exception types that may be thrown again
	 * @return the result, or {@code null}
	 * @throws Throwable the stored exception, recreated
	 * @throws IdempotencyException if the outcome cannot be read back
	 */
	@Nullable Object read(IdempotencyKey key, StoredResponse stored, JavaType type, DeterministicExceptions deterministic)
			throws Throwable {
		if (!stored.isReadable()) {
			throw IdempotencyException.replayFailed(key, "its record is unreadable", null);
		}
		String exceptionType = header(stored, EXCEPTION_HEADER);
		if (exceptionType != null) {
			throw recreate(key, exceptionType, stored, deterministic);
		}
		if (stored.status() == 204) {
			return null;
		}
		if (stored.status() != 200 || !"application/json".equals(header(stored, "Content-Type"))) {
			throw IdempotencyException.replayFailed(key,
					"it holds an HTTP response (status " + stored.status() + "), not the result of a call", null);
		}
		try {
			return this.mapper.readValue(stored.bodyBytes(), type);
		}
		catch (JacksonException ex) {
			throw IdempotencyException.replayFailed(key, "Jackson cannot read it as " + type, ex);
		}
	}

	private Throwable recreate(IdempotencyKey key, String className, StoredResponse stored,
			DeterministicExceptions deterministic) {
		Class<?> type;
		try {
			type = ClassUtils.forName(className, StoredResults.class.getClassLoader());
		}
		catch (ClassNotFoundException | LinkageError ex) {
			throw IdempotencyException.replayFailed(key, "its exception type " + className + " is not found", ex);
		}
		// only a type the policy lists is ever created from what the store holds
		if (!deterministic.includes(type)) {
			throw IdempotencyException.replayFailed(key, "its exception type " + className
					+ " is not one of the policy's deterministic-exceptions " + deterministic, null);
		}
		String message;
		try {
			JsonNode node = this.mapper.readTree(stored.bodyBytes()).get("message");
			message = (node != null && node.isString()) ? node.asString() : null;
		}
		catch (JacksonException ex) {
			throw IdempotencyException.replayFailed(key, "its exception's message cannot be read", ex);
		}
		try {
			return DeterministicExceptions.instantiate(type, message);
		}
		catch (ReflectiveOperationException ex) {
			Throwable cause = (ex instanceof InvocationTargetException target) ? target.getCause() : ex;
			throw IdempotencyException.replayFailed(key, "its exception " + className + " cannot be created", cause);
		}
	}

	private static @Nullable String header(StoredResponse stored, String name) {
		for (HttpHeader header : stored.headers()) {
			if (header.name().equalsIgnoreCase(name)) {
				return header.value();
			}
		}
		return null;
	}

	/**
	 * The exception types a policy stores and throws again on replay.
	 *
	 * @param types the types; a subclass of one is included
	 */
	record DeterministicExceptions(List<Class<? extends Throwable>> types) {

		static final DeterministicExceptions NONE = new DeterministicExceptions(List.of());

		DeterministicExceptions {
			types = List.copyOf(types);
			for (Class<? extends Throwable> type : types) {
				if (constructor(type) == null) {
					throw new IllegalArgumentException("Deterministic exception " + type.getName()
							+ " has no public constructor taking a String message, nor one without arguments: "
							+ "it could not be thrown again on replay");
				}
			}
		}

		/**
		 * Return whether an exception a call threw is stored: its type is listed (or a
		 * subclass of one) and can be created again on replay.
		 * @param exception what the call threw
		 * @return {@code true} to store it
		 */
		boolean stores(Throwable exception) {
			return includes(exception.getClass()) && constructor(exception.getClass()) != null;
		}

		boolean includes(Class<?> type) {
			for (Class<? extends Throwable> candidate : this.types) {
				if (candidate.isAssignableFrom(type)) {
					return true;
				}
			}
			return false;
		}

		static Throwable instantiate(Class<?> type, @Nullable String message) throws ReflectiveOperationException {
			Constructor<?> constructor = constructor(type);
			if (constructor == null) {
				throw new NoSuchMethodException(type.getName() + " has no public (String) or () constructor");
			}
			ReflectionUtils.makeAccessible(constructor);
			Object created = (constructor.getParameterCount() == 1) ? constructor.newInstance(message)
					: constructor.newInstance();
			return (Throwable) created;
		}

		private static @Nullable Constructor<?> constructor(Class<?> type) {
			if (!Throwable.class.isAssignableFrom(type)) {
				return null;
			}
			try {
				return type.getConstructor(String.class);
			}
			catch (NoSuchMethodException ex) {
				try {
					return type.getConstructor();
				}
				catch (NoSuchMethodException none) {
					return null;
				}
			}
		}

		@Override
		public String toString() {
			return this.types.stream().map(Class::getName).toList().toString();
		}

	}

	/**
	 * The result of a call that ran cannot be stored.
	 */
	static final class NotStorableException extends RuntimeException {

		NotStorableException(String message, @Nullable Throwable cause) {
			super(message, cause);
		}

	}

}
