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
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.StoredResponse;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.AnnotationIntrospector;
import tools.jackson.databind.DeserializationContext;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.deser.SettableBeanProperty;
import tools.jackson.databind.deser.bean.BeanDeserializerBase;
import tools.jackson.databind.exc.InvalidDefinitionException;
import tools.jackson.databind.introspect.AnnotatedMember;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * The stored form of the outcome of an idempotent call, in the store's
 * {@link StoredResponse} (the store contract is the one of HTTP responses):
 * <ul>
 * <li>a result: status {@code 200} and the result as JSON, written and read by Jackson
 * with the declared result type; or, for a declared type that an
 * {@link IdempotentResultCodec} supports, the codec's form under its content type;
 * <li>no result ({@code null}, or a {@code void} method): status {@code 204} and no body;
 * <li>a deterministic exception: status {@code 200}, the exception's class in the
 * {@value #EXCEPTION_HEADER} header and {@code {"message": ...}} as the body;
 * <li>a result that ran but could not be stored (too large, not writable, not readable
 * back): status {@code 200} without body, the reason in the {@value #NOT_STORED_HEADER}
 * header; a replay throws {@link IdempotentResultNotStoredException}, and the call is
 * never run again for its key.
 * </ul>
 * A result is read back once before it is stored, so that one that could not be replayed
 * is never stored as if it could.
 * <p>
 * Thread-safe.
 *
 * @author Idempotency contributors
 */
final class StoredResults {

	/**
	 * Header that names the class of a stored exception.
	 */
	static final String EXCEPTION_HEADER = "Idempotent-Exception";

	/**
	 * Header of the record of a call whose result was not stored, with the reason.
	 */
	static final String NOT_STORED_HEADER = "Idempotent-Result-Not-Stored";

	/**
	 * The result was larger than the policy's {@code max-response-body}.
	 */
	static final String TOO_LARGE = "too-large";

	/**
	 * The result could not be written.
	 */
	static final String NOT_WRITABLE = "not-writable";

	/**
	 * The result was written but could not be read back.
	 */
	static final String NOT_READABLE = "not-readable";

	private static final List<HttpHeader> JSON = List.of(new HttpHeader("Content-Type", "application/json"));

	private static final StoredResponse NO_RESULT = new StoredResponse(204, List.of(), new byte[0]);

	private static final String JSON_TYPE = "application/json";

	private static final byte[] EMPTY_OBJECT = "{}".getBytes(StandardCharsets.US_ASCII);

	private final JsonMapper mapper;

	private final List<IdempotentResultCodec> codecs;

	StoredResults(JsonMapper mapper) {
		this(mapper, List.of());
	}

	StoredResults(JsonMapper mapper, List<IdempotentResultCodec> codecs) {
		this.mapper = mapper;
		this.codecs = List.copyOf(codecs);
		for (IdempotentResultCodec codec : this.codecs) {
			if (JSON_TYPE.equalsIgnoreCase(codec.contentType())) {
				throw new IllegalArgumentException("Result codec " + codec.getClass().getName()
						+ " has the content type application/json, which is Jackson's: give it another");
			}
		}
	}

	/**
	 * Return a copy of these stored results with the given codecs.
	 * @param codecs the codecs, asked in their order before Jackson
	 * @return the copy
	 */
	StoredResults withCodecs(List<IdempotentResultCodec> codecs) {
		return new StoredResults(this.mapper, codecs);
	}

	/**
	 * Return the stored form of a result.
	 * @param result the result, may be {@code null}
	 * @param type the declared result type
	 * @param maxBody largest body stored, in bytes
	 * @return the stored form
	 * @throws NotStorableException if the result cannot be written, or read back, or is
	 * too large
	 */
	StoredResponse result(@Nullable Object result, JavaType type, int maxBody) {
		return result(result, type, type, maxBody);
	}

	/**
	 * Return the stored form of a result, which is read back once first.
	 * @param result the result, may be {@code null}
	 * @param declared the declared result type, as a codec sees it
	 * @param type the same, as Jackson sees it
	 * @param maxBody largest body stored, in bytes
	 * @return the stored form
	 * @throws NotStorableException if the result cannot be written, or read back, or is
	 * too large
	 */
	StoredResponse result(@Nullable Object result, Type declared, JavaType type, int maxBody) {
		if (result == null) {
			return NO_RESULT;
		}
		IdempotentResultCodec codec = codec(declared);
		if (codec != null) {
			return encoded(codec, result, declared, maxBody);
		}
		byte[] json;
		try {
			json = this.mapper.writerFor(type).writeValueAsBytes(result);
		}
		catch (JacksonException ex) {
			throw new NotStorableException(NOT_WRITABLE, "Jackson cannot write it as " + type + ": "
					+ ex.getOriginalMessage() + "; declare an IdempotentResultCodec bean for the type", ex);
		}
		if (json.length > maxBody) {
			throw new NotStorableException(TOO_LARGE,
					"its JSON has " + json.length + " bytes, more than the policy's max-response-body of " + maxBody,
					null);
		}
		try {
			this.mapper.readValue(json, type);
		}
		catch (JacksonException ex) {
			throw new NotStorableException(NOT_READABLE,
					"Jackson wrote it but cannot read it back as " + type + ": " + ex.getOriginalMessage() + "; " + FIX,
					ex);
		}
		return new StoredResponse(200, JSON, json);
	}

	private StoredResponse encoded(IdempotentResultCodec codec, Object result, Type declared, int maxBody) {
		String name = codec.getClass().getName();
		byte[] body;
		try {
			body = codec.write(result, declared);
		}
		catch (Exception ex) {
			throw new NotStorableException(NOT_WRITABLE, "result codec " + name + " cannot write it: " + ex, ex);
		}
		if (body.length > maxBody) {
			throw new NotStorableException(TOO_LARGE, "its stored form has " + body.length
					+ " bytes, more than the policy's max-response-body of " + maxBody, null);
		}
		try {
			codec.read(body, declared);
		}
		catch (Exception ex) {
			throw new NotStorableException(NOT_READABLE, "result codec " + name + " cannot read it back: " + ex, ex);
		}
		return new StoredResponse(200, List.of(new HttpHeader("Content-Type", codec.contentType())), body);
	}

	/**
	 * Return whether a codec writes and reads the results of a declared type.
	 * @param declared the declared result type
	 * @return {@code true} if one of the codecs supports it
	 */
	boolean hasCodec(Type declared) {
		return codec(declared) != null;
	}

	private @Nullable IdempotentResultCodec codec(Type declared) {
		for (IdempotentResultCodec codec : this.codecs) {
			if (codec.supports(declared)) {
				return codec;
			}
		}
		return null;
	}

	/**
	 * Check, at start-up, that results of a declared type can be read back: a codec
	 * supports it, or Jackson finds how to create it and every value of it that Jackson
	 * writes. Jackson is asked to read an empty JSON object as the type (or as the type
	 * of the elements of a collection, map, array or {@code Optional}), and then as the
	 * type of each property that Jackson reads for it, as its deserializer reads it (the
	 * type that {@code @JsonDeserialize(as, contentAs, keyAs)}, a mix-in or a module's
	 * abstract type mapping gives it), down to the leaves; only a failure that is the
	 * type's own (no creator, an abstract type without type information) counts, not one
	 * of the empty input. A property that Jackson reads by its type id (a
	 * {@code @JsonTypeInfo} on the property or its type) or with a deserializer of its
	 * own is left to the read-back, as is a type whose deserializer is not a bean's. The
	 * types of the JDK are not looked into.
	 * @param declared the declared result type
	 * @param type the same, as Jackson sees it
	 * @return why it cannot be read back, or {@code null} if it can or no one can tell
	 */
	@Nullable String unreadable(Type declared, JavaType type) {
		if (codec(declared) != null) {
			return null;
		}
		return unreadable(type, "", new HashSet<>());
	}

	private @Nullable String unreadable(JavaType type, String path, Set<JavaType> seen) {
		JavaType leaf = type;
		while ((leaf.isContainerType() || leaf.isReferenceType()) && leaf.getContentType() != null) {
			if (leaf.getTypeHandler() != null) {
				// a @JsonTypeInfo on the property: Jackson reads its values by their type
				// id
				return null;
			}
			leaf = leaf.getContentType();
		}
		if (leaf.getTypeHandler() != null) {
			return null;
		}
		Class<?> raw = leaf.getRawClass();
		if (leaf.isPrimitive() || leaf.isEnumType() || leaf.isJavaLangObject() || raw == Void.class || raw == void.class
				|| !seen.add(leaf)) {
			return null;
		}
		try {
			this.mapper.readValue(EMPTY_OBJECT, leaf);
		}
		catch (InvalidDefinitionException ex) {
			return (path.isEmpty() ? "" : "its property " + path + " (" + leaf.toCanonical() + "): ")
					+ ex.getOriginalMessage();
		}
		catch (RuntimeException ex) {
			// the empty object is not a value of the type: no one can tell here
		}
		if (raw.getName().startsWith("java.")) {
			return null;
		}
		for (Map.Entry<String, JavaType> property : properties(leaf).entrySet()) {
			String problem = unreadable(property.getValue(),
					path.isEmpty() ? property.getKey() : path + "." + property.getKey(), seen);
			if (problem != null) {
				return problem;
			}
		}
		return null;
	}

	// the properties Jackson reads for a type, by name, each with the type Jackson
	// reads it as: refined by @JsonDeserialize(as, contentAs, keyAs) and mix-ins, and
	// carrying the type information of a @JsonTypeInfo on the property. A property with
	// a deserializer of its own (@JsonDeserialize(using, contentUsing)) is left out: no
	// one can tell here what it reads
	private Map<String, JavaType> properties(JavaType type) {
		Map<String, JavaType> properties = new LinkedHashMap<>();
		try {
			DeserializationContext context = this.mapper._deserializationContext();
			if (!(context.findRootValueDeserializer(type) instanceof BeanDeserializerBase bean)) {
				return properties;
			}
			AnnotationIntrospector introspector = context.getAnnotationIntrospector();
			List<SettableBeanProperty> all = new ArrayList<>();
			bean.properties().forEachRemaining(all::add);
			bean.creatorProperties().forEachRemaining(all::add);
			for (SettableBeanProperty property : all) {
				AnnotatedMember member = property.getMember();
				if (property.getValueTypeDeserializer() != null || (member != null && introspector != null
						&& (introspector.findDeserializer(context.getConfig(), member) != null
								|| introspector.findContentDeserializer(context.getConfig(), member) != null))) {
					continue;
				}
				properties.putIfAbsent(property.getName(), property.getType());
			}
		}
		catch (RuntimeException ex) {
			// Jackson cannot tell how it reads the type: the read-back will
		}
		return properties;
	}

	/**
	 * What makes a result type readable, for the messages.
	 */
	static final String FIX = "return a concrete type Jackson can create (a record, say) whose properties are concrete"
			+ " types too, annotate the abstract type with @JsonTypeInfo, or declare an IdempotentResultCodec bean"
			+ " for the result type";

	/**
	 * Return the stored form of a result that could not be stored: that the call ran, and
	 * why its result is not there.
	 * @param reason {@link #TOO_LARGE}, {@link #NOT_WRITABLE} or {@link #NOT_READABLE}
	 * @return the stored form
	 */
	StoredResponse notStored(String reason) {
		return StoredResponse.withoutBody(200, List.of(new HttpHeader(NOT_STORED_HEADER, reason)));
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
		return read(key, stored, type, type, deterministic);
	}

	/**
	 * Read a stored outcome back: return the result, or throw the stored exception.
	 * @param key the key whose outcome it is
	 * @param stored the stored form
	 * @param declared the declared result type, as a codec sees it
	 * @param type the same, as Jackson sees it
	 * @param deterministic the exception types that may be thrown again
	 * @return the result, or {@code null}
	 * @throws Throwable the stored exception, recreated
	 * @throws IdempotencyException if the outcome cannot be read back
	 */
	@Nullable Object read(IdempotencyKey key, StoredResponse stored, Type declared, JavaType type,
			DeterministicExceptions deterministic) throws Throwable {
		if (!stored.isReadable()) {
			// the store logged why, once: the call ran, so it is not run again either
			throw IdempotencyException.replayFailed(key, "its record is unreadable (with encryption at rest: stored in"
					+ " the clear outside idempotency.encryption.replay-unencrypted-until, altered, or sealed with a key"
					+ " the key ring no longer holds; without it, an envelope of encryption at rest; or a record of a format"
					+ " this version cannot read)", null);
		}
		if (!stored.isBodyRetained()) {
			throw new IdempotentResultNotStoredException(key, header(stored, NOT_STORED_HEADER));
		}
		String exceptionType = header(stored, EXCEPTION_HEADER);
		if (exceptionType != null) {
			throw recreate(key, exceptionType, stored, deterministic);
		}
		if (stored.status() == 204) {
			return null;
		}
		String contentType = header(stored, "Content-Type");
		if (stored.status() == 200 && contentType != null && !JSON_TYPE.equals(contentType)) {
			IdempotentResultCodec codec = codec(declared);
			if (codec != null && codec.contentType().equalsIgnoreCase(contentType)) {
				try {
					return codec.read(stored.bodyBytes(), declared);
				}
				catch (Exception ex) {
					throw IdempotencyException.replayFailed(key,
							"result codec " + codec.getClass().getName() + " cannot read it", ex);
				}
			}
		}
		if (stored.status() != 200 || !JSON_TYPE.equals(contentType)) {
			throw IdempotencyException.replayFailed(key, "it holds an HTTP response (status " + stored.status()
					+ "), not the result of a call (or one of a result codec that is not configured)", null);
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

		private final String reason;

		NotStorableException(String reason, String message, @Nullable Throwable cause) {
			super(message, cause);
			this.reason = reason;
		}

		/**
		 * Return why, as the record of the call keeps it.
		 * @return {@link #TOO_LARGE}, {@link #NOT_WRITABLE} or {@link #NOT_READABLE}
		 */
		String reason() {
			return this.reason;
		}

	}

}
