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

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import org.jspecify.annotations.Nullable;

/**
 * The payload of a message as a listener received it, which is what the fingerprint of an
 * idempotent listener covers by default: its own bytes when it has them, else its JSON.
 *
 * @param value the payload, {@code null} for none (a tombstone, or a listener without
 * payload)
 * @author Idempotency contributors
 */
record RecordValue(@Nullable Object value) {

	private static final byte[] NONE = new byte[0];

	private static final String KAFKA_NULL = "org.springframework.kafka.support.KafkaNull";

	private static final String KAFKA_BYTES = "org.apache.kafka.common.utils.Bytes";

	/**
	 * Return the binary form of a value, if it has one: the bytes of a {@code byte[]}, a
	 * {@code ByteBuffer} or Kafka's {@code Bytes}, the UTF-8 of a string, what a public
	 * {@code toByteArray()} (protobuf messages) or {@code toByteBuffer()} (Avro records)
	 * returns; no bytes for {@code null}.
	 * @param value the value
	 * @return its bytes, or {@code null} if it has no binary form
	 * @throws IllegalStateException if its {@code toByteArray()} or
	 * {@code toByteBuffer()} failed
	 */
	static byte @Nullable [] binaryForm(@Nullable Object value) {
		if (value == null || value.getClass().getName().equals(KAFKA_NULL)) {
			return NONE;
		}
		if (value instanceof byte[] bytes) {
			return bytes;
		}
		if (value instanceof String text) {
			return text.getBytes(StandardCharsets.UTF_8);
		}
		if (value instanceof ByteBuffer buffer) {
			return bytes(buffer);
		}
		Object converted = invoke(value, value.getClass().getName().equals(KAFKA_BYTES) ? "get" : "toByteArray");
		if (converted instanceof byte[] bytes) {
			return bytes;
		}
		converted = invoke(value, "toByteBuffer");
		if (converted instanceof ByteBuffer buffer) {
			return bytes(buffer);
		}
		return null;
	}

	private static byte[] bytes(ByteBuffer buffer) {
		ByteBuffer copy = buffer.duplicate();
		byte[] bytes = new byte[copy.remaining()];
		copy.get(bytes);
		return bytes;
	}

	private static @Nullable Object invoke(Object value, String name) {
		Method method;
		try {
			method = value.getClass().getMethod(name);
		}
		catch (NoSuchMethodException ex) {
			return null;
		}
		if (Modifier.isStatic(method.getModifiers())) {
			return null;
		}
		try {
			return method.invoke(value);
		}
		catch (IllegalAccessException ex) {
			return null;
		}
		catch (InvocationTargetException ex) {
			throw new IllegalStateException(value.getClass().getName() + "." + name + "() failed", ex.getCause());
		}
	}

}
