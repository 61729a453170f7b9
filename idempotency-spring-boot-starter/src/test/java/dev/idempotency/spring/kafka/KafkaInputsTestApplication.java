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

package dev.idempotency.spring.kafka;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.spring.Idempotent;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.serialization.Deserializer;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.support.KafkaHeaders;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.messaging.handler.annotation.Payload;
import org.springframework.stereotype.Component;

/**
 * An application instance for the tests of the inputs of idempotent Kafka listeners: a
 * payload that Jackson cannot write (as protobuf messages), a key header that is missing,
 * a record whose fingerprint cannot be computed, a listener that hangs. Its error handler
 * sends the records it gives up to a recoverer that keeps them, as a dead-letter topic
 * would.
 *
 * @author Idempotency contributors
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
public class KafkaInputsTestApplication {

	@Bean
	Recovered recovered() {
		return new Recovered();
	}

	@Bean
	DefaultErrorHandler kafkaErrorHandler(Recovered recovered) {
		DefaultErrorHandler handler = new DefaultErrorHandler(recovered::add);
		IdempotentListenerRetries.retryUntilDecided(handler);
		return handler;
	}

	/**
	 * The records the error handler gave up.
	 */
	static class Recovered {

		private final List<ConsumerRecord<?, ?>> records = new CopyOnWriteArrayList<>();

		void add(ConsumerRecord<?, ?> record, Exception exception) {
			this.records.add(record);
		}

		List<ConsumerRecord<?, ?>> records() {
			return this.records;
		}

	}

	/**
	 * A message as protobuf generates them: Jackson cannot write it (a getter returns the
	 * message itself), but it has a binary form.
	 */
	public static final class ProtoLike {

		private final String text;

		ProtoLike(String text) {
			this.text = text;
		}

		public ProtoLike getDefaultInstanceForType() {
			return this;
		}

		public byte[] toByteArray() {
			return this.text.getBytes(StandardCharsets.UTF_8);
		}

		@Override
		public String toString() {
			return this.text;
		}

	}

	/**
	 * A payload without any form a fingerprint can be computed from: no binary form, and
	 * Jackson cannot write it.
	 */
	public static final class Poison {

		public String getContent() {
			throw new IllegalStateException("a poison pill has no content");
		}

	}

	/**
	 * Reads every value as a {@link ProtoLike}, except those that start with
	 * {@code poison}.
	 */
	public static class ProtoLikeDeserializer implements Deserializer<Object> {

		@Override
		public Object deserialize(String topic, byte[] data) {
			String text = new String(data, StandardCharsets.UTF_8);
			return text.startsWith("poison") ? new Poison() : new ProtoLike(text);
		}

	}

	@Component("kafkaInputs")
	public static class Inputs {

		private final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();

		@Override
		public String toString() {
			return this.counts.toString();
		}

		int count(String what) {
			AtomicInteger count = this.counts.get(what);
			return (count != null) ? count.get() : 0;
		}

		private final CountDownLatch release = new CountDownLatch(1);

		private int increment(String what) {
			return this.counts.computeIfAbsent(what, (name) -> new AtomicInteger()).incrementAndGet();
		}

		// lets the hung run go
		void release() {
			this.release.countDown();
		}

		// the key of a listener, counted: one count per delivery attempt
		public String key(String listener, String key) {
			increment(listener + ".attempts");
			return key;
		}

		public String eventId(ConsumerRecord<?, ?> record) {
			increment("header.attempts");
			org.apache.kafka.common.header.Header header = record.headers().lastHeader("event-id");
			return (header != null) ? new String(header.value(), StandardCharsets.UTF_8) : null;
		}

		// the default fingerprint: the payload's binary form
		@KafkaListener(id = "proto", topics = "${test.topic}-proto", groupId = "${test.group}")
		@Idempotent(policy = "events", key = "@kafkaInputs.key('proto', #key)")
		void proto(@Header(KafkaHeaders.RECEIVED_KEY) String key, @Payload ProtoLike payload) {
			increment("proto.runs");
		}

		// the fingerprint the documentation used to recommend
		@KafkaListener(id = "protoPayload", topics = "${test.topic}-proto-payload", groupId = "${test.group}")
		@Idempotent(policy = "events", key = "#key", fingerprint = "#payload")
		void protoPayload(@Header(KafkaHeaders.RECEIVED_KEY) String key, @Payload ProtoLike payload) {
			increment("protoPayload.runs");
		}

		// the event's id is a header, which a record may lack
		@KafkaListener(id = "header", topics = "${test.topic}-header", groupId = "${test.group}")
		@Idempotent(policy = "events", key = "@kafkaInputs.eventId(#record)")
		void header(ConsumerRecord<String, Object> record) {
			increment("header.runs");
		}

		// the first run hangs: a redelivery on another partition
		// takes the key over after the max execution time. A group of its own: a
		// rebalance of a group waits for every member, the hung one too, so the
		// other listeners' joins must not touch it
		@KafkaListener(id = "hang", topics = "${test.topic}-hang", groupId = "${test.group}-hang", concurrency = "2")
		@Idempotent(policy = "hangs", key = "#key", fingerprint = "#key")
		void hang(@Header(KafkaHeaders.RECEIVED_KEY) String key, @Payload ProtoLike payload)
				throws InterruptedException {
			if (increment("hang.runs") == 1) {
				this.release.await(60, TimeUnit.SECONDS);
			}
		}

		@KafkaListener(id = "any", topics = "${test.topic}-any", groupId = "${test.group}")
		@Idempotent(policy = "events", key = "@kafkaInputs.key('any', #key)")
		void any(@Header(KafkaHeaders.RECEIVED_KEY) String key, @Payload Object payload) {
			increment("any.runs");
		}

	}

}
