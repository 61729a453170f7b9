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

import java.lang.reflect.Type;

import org.jspecify.annotations.Nullable;

/**
 * Writes and reads back the results of idempotent calls whose type Jackson does not
 * handle: protobuf messages, Avro records, a type of your own with a binary form. Declare
 * it as a bean: the auto-configured {@link IdempotencyTemplate} (and so every
 * {@code @Idempotent(key = ...)} method) asks the codecs, in their order, before Jackson.
 * <p>
 * The first codec that {@link #supports(Type) supports} a method's declared result type
 * writes its results; the result is stored with the codec's {@link #contentType() content
 * type}, and a replay reads it with the codec that has that content type and supports the
 * declared type. A result is read back once before it is stored: one that cannot be is
 * not stored, and the key keeps a record that the call ran, so that every retry throws
 * {@link IdempotentResultNotStoredException} instead of running the call again.
 * <p>
 * Implementations must be thread-safe.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public interface IdempotentResultCodec {

	/**
	 * Return whether this codec writes and reads the results of the given declared type.
	 * @param type the declared result type of a method, or the one given to the template:
	 * a {@link Class} or a parameterized type
	 * @return {@code true} if it does
	 */
	boolean supports(Type type);

	/**
	 * Return the content type stored with the results this codec writes, for example
	 * {@code application/x-protobuf}. It must not be {@code application/json}, which is
	 * Jackson's.
	 * @return the content type
	 */
	String contentType();

	/**
	 * Write a result.
	 * @param result the result, never {@code null}
	 * @param type the declared result type
	 * @return its stored form
	 * @throws Exception if it cannot be written: the result is not stored, and every
	 * retry throws {@link IdempotentResultNotStoredException}
	 */
	byte[] write(Object result, Type type) throws Exception;

	/**
	 * Read a stored result back.
	 * @param body what {@link #write(Object, Type)} returned
	 * @param type the declared result type
	 * @return the result
	 * @throws Exception if it cannot be read
	 */
	@Nullable Object read(byte[] body, Type type) throws Exception;

}
