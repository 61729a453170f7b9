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

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.jspecify.annotations.Nullable;

import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.kafka.annotation.KafkaHandler;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.listener.adapter.ConsumerRecordMetadata;
import org.springframework.kafka.support.Acknowledgment;
import org.springframework.messaging.Message;
import org.springframework.messaging.MessageHeaders;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.messaging.handler.annotation.Headers;
import org.springframework.messaging.handler.annotation.Payload;

/**
 * Finds the payload of a Kafka listener method among its arguments: the default
 * fingerprint of an idempotent listener. Loaded only when Spring Kafka is present.
 *
 * @author Idempotency contributors
 */
final class ListenerPayloads {

	private static final List<Class<?>> NOT_PAYLOADS = List.of(Acknowledgment.class, Consumer.class,
			ConsumerRecordMetadata.class, MessageHeaders.class);

	private ListenerPayloads() {
	}

	/**
	 * Return whether a method is a Kafka listener: annotated with {@code @KafkaListener},
	 * or with {@code @KafkaHandler} in a class annotated with {@code @KafkaListener}.
	 * @param method the method
	 * @param targetClass the class of the bean
	 * @return {@code true} if it is
	 */
	static boolean isListener(Method method, Class<?> targetClass) {
		return AnnotatedElementUtils.hasAnnotation(method, KafkaListener.class)
				|| (AnnotatedElementUtils.hasAnnotation(targetClass, KafkaListener.class)
						&& AnnotatedElementUtils.hasAnnotation(method, KafkaHandler.class));
	}

	/**
	 * Return what gives the payload of a call of the given Kafka listener: the value of
	 * its {@code ConsumerRecord} argument, else its {@code @Payload} argument, else the
	 * payload of its {@code Message} argument, else its one argument that is neither a
	 * header nor one of the listener's helpers ({@code Acknowledgment},
	 * {@code Consumer}...). A listener without any has no payload: the fingerprint covers
	 * nothing but the key.
	 * @param method the listener method
	 * @return the payload of the arguments
	 */
	static Function<@Nullable Object[], RecordValue> of(Method method) {
		Class<?>[] types = method.getParameterTypes();
		Annotation[][] annotations = method.getParameterAnnotations();
		for (int i = 0; i < types.length; i++) {
			if (ConsumerRecord.class.isAssignableFrom(types[i])) {
				return payload(i);
			}
		}
		List<Integer> candidates = new ArrayList<>();
		for (int i = 0; i < types.length; i++) {
			if (has(annotations[i], Payload.class)) {
				return payload(i);
			}
			if (!has(annotations[i], Header.class) && !has(annotations[i], Headers.class) && !helper(types[i])) {
				candidates.add(i);
			}
		}
		for (int i = 0; i < types.length; i++) {
			if (Message.class.isAssignableFrom(types[i])) {
				return payload(i);
			}
		}
		return (candidates.size() == 1) ? payload(candidates.get(0)) : (arguments) -> new RecordValue(null);
	}

	// an argument of type Object may be the record itself:
	// Spring Kafka passes it to any parameter that can take it
	private static Function<@Nullable Object[], RecordValue> payload(int index) {
		return (arguments) -> {
			Object argument = arguments[index];
			if (argument instanceof ConsumerRecord<?, ?> record) {
				return new RecordValue(record.value());
			}
			return new RecordValue((argument instanceof Message<?> message) ? message.getPayload() : argument);
		};
	}

	private static boolean helper(Class<?> type) {
		for (Class<?> helper : NOT_PAYLOADS) {
			if (helper.isAssignableFrom(type)) {
				return true;
			}
		}
		return false;
	}

	private static boolean has(Annotation[] annotations, Class<? extends Annotation> type) {
		for (Annotation annotation : annotations) {
			if (type.isInstance(annotation)) {
				return true;
			}
		}
		return false;
	}

}
