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

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import dev.idempotency.spring.kafka.KafkaInputsTestApplication.Inputs;
import dev.idempotency.spring.kafka.KafkaInputsTestApplication.ProtoLike;
import dev.idempotency.spring.kafka.KafkaInputsTestApplication.Recovered;
import dev.idempotency.test.servers.TestServers;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestInstance.Lifecycle;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.kafka.config.KafkaListenerEndpointRegistry;
import org.springframework.kafka.listener.MessageListenerContainer;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What idempotent Kafka listeners do with the inputs real applications meet, on the
 * in-JVM KRaft broker of {@code spring-kafka-test} and the Redis store: a payload that
 * Jackson cannot write (as protobuf messages), with the default fingerprint and with
 * {@code fingerprint = "#payload"}; a record without the header its key comes from; a
 * record whose fingerprint cannot be computed. A record that cannot be processed goes to
 * the application's recoverer at once, with a log line that names it; none is retried for
 * nothing or dropped without a word.
 *
 * @author Idempotency contributors
 */
@TestInstance(Lifecycle.PER_CLASS)
@ExtendWith(OutputCaptureExtension.class)
class IdempotentKafkaListenerInputsIT {

	private static final Duration DEADLINE = Duration.ofSeconds(60);

	private final String run = Long.toHexString(System.nanoTime());

	private final String topic = "inputs-" + this.run;

	private final String prefix = "it-kafka-inputs-" + this.run + ":";

	private EmbeddedKafkaKraftBroker broker;

	private KafkaProducer<String, String> producer;

	private ConfigurableApplicationContext context;

	@BeforeAll
	void start() {
		this.broker = new EmbeddedKafkaKraftBroker(1, 1);
		this.broker.afterPropertiesSet();
		List<NewTopic> topics = new ArrayList<>();
		for (String suffix : List.of("-proto", "-proto-payload", "-header", "-any")) {
			topics.add(new NewTopic(this.topic + suffix, 1, (short) 1));
		}
		topics.add(new NewTopic(this.topic + "-hang", 2, (short) 1));
		this.broker.addTopics(topics.toArray(new NewTopic[0]));
		Map<String, Object> producerConfig = new HashMap<>();
		producerConfig.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, this.broker.getBrokersAsString());
		producerConfig.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
		producerConfig.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
		producerConfig.put(ProducerConfig.ACKS_CONFIG, "all");
		this.producer = new KafkaProducer<>(producerConfig);
		TestServers.Redis redis = TestServers.redis();
		Map<String, Object> properties = new HashMap<>();
		properties.put("spring.main.web-application-type", "none");
		properties.put("spring.main.banner-mode", "off");
		properties.put("spring.autoconfigure.exclude",
				"org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration,"
						+ "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration");
		properties.put("spring.data.redis.repositories.enabled", "false");
		properties.put("spring.data.redis.host", redis.host());
		properties.put("spring.data.redis.port", String.valueOf(redis.port()));
		properties.put("spring.kafka.bootstrap-servers", this.broker.getBrokersAsString());
		properties.put("spring.kafka.consumer.auto-offset-reset", "earliest");
		properties.put("spring.kafka.consumer.value-deserializer",
				KafkaInputsTestApplication.ProtoLikeDeserializer.class.getName());
		properties.put("idempotency.store.type", "redis");
		properties.put("idempotency.redis.key-prefix", this.prefix);
		properties.put("idempotency.policies.events.lock-timeout", "2s");
		properties.put("idempotency.policies.hangs.lock-timeout", "1s");
		properties.put("idempotency.policies.hangs.max-execution-time", "3s");
		properties.put("test.topic", this.topic);
		properties.put("test.group", "g-" + this.run);
		this.context = new SpringApplicationBuilder(KafkaInputsTestApplication.class).properties(properties).run();
	}

	@AfterAll
	void stop() {
		if (this.context != null) {
			inputs().release();
			this.context.close();
		}
		if (this.producer != null) {
			this.producer.close();
		}
		TestServers.Redis redis = TestServers.redis();
		var factory = redis.connectionFactory();
		try (var connection = factory.getConnection()) {
			TestServers.Redis.deleteKeys(connection, this.prefix);
		}
		finally {
			factory.destroy();
		}
		if (this.broker != null) {
			this.broker.destroy();
		}
	}

	@Test
	void theApplicationsJacksonCannotWriteTheProtobufLikePayload() {
		assertThatExceptionOfType(JacksonException.class)
			.isThrownBy(() -> this.context.getBean(JsonMapper.class).writeValueAsBytes(new ProtoLike("settle 100")));
	}

	@Test
	void aPayloadJacksonCannotWriteIsFingerprintedByItsBinaryFormByDefault() throws Exception {
		send("-proto", "p-1", "settle 100");
		send("-proto", "p-1", "settle 100");
		awaitTrue(() -> inputs().count("proto.attempts") >= 2, "both deliveries");
		// a different message under the same id is not taken for a duplicate
		send("-proto", "p-1", "settle 999");
		awaitTrue(() -> recovered("-proto").size() == 1, "the reused key to reach the recoverer");
		assertThat(inputs().count("proto.runs")).isOne();
	}

	@Test
	void aPayloadJacksonCannotWriteIsFingerprintedByItsBinaryFormWhenTheFingerprintIsThePayload() throws Exception {
		send("-proto-payload", "pp-1", "settle 100");
		send("-proto-payload", "pp-1", "settle 100");
		send("-proto-payload", "pp-2", "settle 200");
		awaitTrue(() -> inputs().count("protoPayload.runs") == 2, "both events settled");
		Thread.sleep(1000);
		assertThat(inputs().count("protoPayload.runs")).isEqualTo(2);
		assertThat(recovered("-proto-payload")).isEmpty();
	}

	@Test
	void aRecordWithoutItsKeyHeaderGoesToTheRecovererAtOnceWithALogLine(CapturedOutput output) throws Exception {
		this.producer.send(new ProducerRecord<>(this.topic + "-header", 0, "h-1", "settle 100")).get();
		awaitTrue(() -> recovered("-header").size() == 1, "the record to reach the recoverer");
		Thread.sleep(1000);
		// one delivery: not retried for nothing
		assertThat(inputs().count("header.attempts")).isOne();
		assertThat(inputs().count("header.runs")).isZero();
		assertThat(output).contains("record " + this.topic + "-header-0@0")
			.contains("listener " + Inputs.class.getName() + ".header")
			.contains("idempotency key")
			.contains("missing");
	}

	@Test
	void aRecordWhoseFingerprintCannotBeComputedGoesToTheRecovererAtOnceWithALogLine(CapturedOutput output)
			throws Exception {
		send("-any", "a-1", "poison pill");
		awaitTrue(() -> recovered("-any").size() == 1, () -> "the record to reach the recoverer " + inputs());
		Thread.sleep(1000);
		assertThat(inputs().count("any.attempts")).isOne();
		assertThat(inputs().count("any.runs")).isZero();
		assertThat(output).contains("record " + this.topic + "-any-0@0")
			.contains("listener " + Inputs.class.getName() + ".any")
			.contains("fingerprint");
		// a payload with a binary form runs
		send("-any", "a-2", "settle 100");
		awaitTrue(() -> inputs().count("any.runs") == 1, "the next record to run");
	}

	@Test
	void aListenerHungPastItsMaxExecutionTimeLosesItsKeyToARedelivery() throws Exception {
		// each of the two consumers holds one partition before the first run hangs: a
		// rebalance after it would wait for the hung consumer and stall the redelivery
		MessageListenerContainer container = this.context.getBean(KafkaListenerEndpointRegistry.class)
			.getListenerContainer("hang");
		awaitTrue(() -> {
			Map<String, Collection<TopicPartition>> assignments = container.getAssignmentsByClientId();
			return assignments != null && assignments.size() == 2
					&& assignments.values().stream().allMatch((partitions) -> partitions.size() == 1);
		}, () -> "each hang consumer to hold one partition " + container.getAssignmentsByClientId());
		send("-hang", 0, "hang-1", "settle 100");
		awaitTrue(() -> inputs().count("hang.runs") == 1, "the first run to start, and hang");
		long sent = System.nanoTime();
		// the same message again, on the partition of the other consumer
		send("-hang", 1, "hang-1", "settle 100");
		// refused while the hung run renews its lease; after its 3 s
		// max execution time the lease lapses (1 s), and it runs
		awaitTrue(() -> inputs().count("hang.runs") == 2, "the redelivery to take the key over");
		assertThat(Duration.ofNanos(System.nanoTime() - sent)).isGreaterThan(Duration.ofSeconds(1));
		inputs().release();
	}

	private void send(String suffix, String key, String value) throws Exception {
		send(suffix, 0, key, value);
	}

	private void send(String suffix, int partition, String key, String value) throws Exception {
		this.producer.send(new ProducerRecord<>(this.topic + suffix, partition, key, value)).get();
	}

	private Inputs inputs() {
		return this.context.getBean(Inputs.class);
	}

	private List<ConsumerRecord<?, ?>> recovered(String suffix) {
		return this.context.getBean(Recovered.class)
			.records()
			.stream()
			.filter((record) -> record.topic().equals(this.topic + suffix))
			.toList();
	}

	private static void awaitTrue(BooleanSupplier condition, String what) {
		awaitTrue(condition, () -> what);
	}

	private static void awaitTrue(BooleanSupplier condition, Supplier<String> what) {
		long deadline = System.nanoTime() + DEADLINE.toNanos();
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() > deadline) {
				throw new AssertionError("Timed out after " + DEADLINE.toSeconds() + "s waiting for " + what.get());
			}
			try {
				Thread.sleep(100);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new AssertionError(ex);
			}
		}
	}

}
