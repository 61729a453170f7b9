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

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.spring.observation.IdempotencyObservationContext;
import dev.idempotency.test.servers.TestServers;
import io.micrometer.observation.Observation;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestInstance.Lifecycle;
import org.junit.jupiter.api.TestMethodOrder;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.kafka.listener.CommonErrorHandler;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.kafka.test.EmbeddedKafkaKraftBroker;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Idempotent Spring Kafka listeners on a real broker (the in-JVM KRaft broker of
 * {@code spring-kafka-test}), with the tiered store on real Redis and PostgreSQL: every
 * event is settled once whatever the broker delivers twice, through duplicates produced
 * on purpose, a rebalance in the middle of the stream, and a consumer killed
 * ({@code SIGKILL}) in the middle of a message. Every listener run writes a row: the
 * tests count executions in the database.
 * <p>
 * The consumer that the crash test kills runs in a JVM of its own, which takes a while to
 * start: it is started with the broker, and the crash test runs last.
 *
 * @author Idempotency contributors
 */
@TestInstance(Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class IdempotentKafkaListenerIT {

	private static final Duration DEADLINE = Duration.ofSeconds(90);

	private final String run = Long.toHexString(System.nanoTime());

	private final String schema = "it_kafka_" + this.run;

	private final String prefix = "it-kafka-" + this.run + ":";

	private EmbeddedKafkaKraftBroker broker;

	private HikariDataSource dataSource;

	private JdbcTemplate jdbc;

	private KafkaProducer<String, String> producer;

	private final List<ConfigurableApplicationContext> instances = new ArrayList<>();

	private String crashTopic;

	private String crashGroup;

	private Process victim;

	@BeforeAll
	void startServers() {
		this.broker = new EmbeddedKafkaKraftBroker(1, 4);
		this.broker.afterPropertiesSet();
		this.dataSource = TestServers.postgres().dataSource(this.schema);
		this.jdbc = new JdbcTemplate(this.dataSource);
		for (String statement : KafkaTestApplication.SCHEMA_DDL.split(";")) {
			if (!statement.isBlank()) {
				this.jdbc.execute(statement);
			}
		}
		Map<String, Object> producerConfig = new HashMap<>();
		producerConfig.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, this.broker.getBrokersAsString());
		producerConfig.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
		producerConfig.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
		producerConfig.put(ProducerConfig.ACKS_CONFIG, "all");
		this.producer = new KafkaProducer<>(producerConfig);
		this.crashTopic = topic("crash");
		this.crashGroup = "g-crash-" + this.run;
		try {
			this.victim = startProcess(this.crashTopic, this.crashGroup, "victim");
		}
		catch (Exception ex) {
			throw new IllegalStateException("Could not start the victim's JVM", ex);
		}
	}

	@AfterAll
	void stopServers() throws InterruptedException {
		if (this.victim != null) {
			this.victim.destroyForcibly();
			this.victim.waitFor(30, TimeUnit.SECONDS);
		}
		this.instances.forEach(ConfigurableApplicationContext::close);
		if (this.producer != null) {
			this.producer.close();
		}
		TestServers.Redis redis = TestServers.redis();
		try (var factory = new AutoCloseableFactory(redis.connectionFactory());
				var connection = factory.factory().getConnection()) {
			TestServers.Redis.deleteKeys(connection, this.prefix);
		}
		if (this.dataSource != null) {
			TestServers.Postgres.dropSchema(this.dataSource, this.schema);
			this.dataSource.close();
		}
		if (this.broker != null) {
			this.broker.destroy();
		}
	}

	@Test
	void theInstancesRetryInProgressDeliveriesWithoutLimit() {
		ConfigurableApplicationContext instance = start("unused", "g-unused", "a");
		CommonErrorHandler errorHandler = instance.getBean(CommonErrorHandler.class);
		assertThat(errorHandler).isInstanceOf(DefaultErrorHandler.class);
		stop(instance);
	}

	@Test
	void duplicatesProducedOnPurposeAreSettledOnceAcrossTwoInstances() throws Exception {
		String topic = topic("duplicates");
		String group = "g-duplicates-" + this.run;
		start(topic, group, "a");
		start(topic, group, "b");
		int events = 60;
		for (int i = 0; i < events; i++) {
			String id = "dup-" + this.run + "-" + i;
			String payload = "{\"id\":\"" + id + "\",\"amount\":" + (100 + i) + ",\"note\":\"slow\"}";
			// two copies on two partitions: two consumers may run them at once; every
			// fifth event a third copy, on the topic keyed by header
			this.producer.send(new ProducerRecord<>(topic, i % 4, id, payload));
			this.producer.send(new ProducerRecord<>(topic, (i + 1) % 4, id, payload));
			if (i % 5 == 0) {
				this.producer.send(new ProducerRecord<>(topic, (i + 2) % 4, id, payload));
			}
		}
		for (int i = 0; i < 10; i++) {
			String id = "hdr-" + this.run + "-" + i;
			for (int copy = 0; copy < 3; copy++) {
				ProducerRecord<String, String> record = new ProducerRecord<>(topic + "-by-header", copy % 4,
						"delivery-" + copy, "{\"id\":\"" + id + "\"}");
				record.headers().add("event-id", id.getBytes(StandardCharsets.UTF_8));
				this.producer.send(record);
			}
		}
		this.producer.flush();
		awaitConsumed(group, topic, topic + "-by-header");
		assertEachSettledOnce("dup-" + this.run + "-", events);
		assertEachSettledOnce("hdr-" + this.run + "-", 10);
	}

	@Test
	void aRebalanceInTheMiddleOfTheStreamLosesNothingAndRunsNothingTwice() throws Exception {
		String topic = topic("rebalance");
		String group = "g-rebalance-" + this.run;
		ConfigurableApplicationContext a = start(topic, group, "a");
		int events = 200;
		for (int i = 0; i < events; i++) {
			String id = "reb-" + this.run + "-" + i;
			String payload = "{\"id\":\"" + id + "\",\"note\":\"slow\"}";
			this.producer.send(new ProducerRecord<>(topic, i % 4, id, payload));
			// a redelivery of every event, later in another partition
			this.producer.send(new ProducerRecord<>(topic, (i + 2) % 4, id, payload));
		}
		this.producer.flush();
		awaitTrue(() -> settled("reb-" + this.run + "-") >= events / 4, "a quarter settled by the first instance");
		start(topic, group, "b");
		awaitTrue(() -> settled("reb-" + this.run + "-") >= events / 2, "half settled by two instances");
		// the first instance leaves the group while
		// the others consume: its partitions move
		stop(a);
		start(topic, group, "c");
		awaitConsumed(group, topic);
		assertEachSettledOnce("reb-" + this.run + "-", events);
	}

	@Test
	void aRedeliveryRefusedWhileTheFirstRunsIsRetriedUntilItRunsRatherThanDropped() throws Exception {
		String topic = topic("no-wait");
		String group = "g-no-wait-" + this.run;
		String id = "nowait-" + this.run;
		String payload = "{\"id\":\"" + id + "\",\"note\":\"fail-first-slowly\"}";
		start(topic, group, "a");
		// the two consumers of the instance share the partitions: one gets the first
		// delivery, the other the redelivery
		List<List<Integer>> partitions = awaitAssigned(group, topic + "-no-wait", 2);
		this.producer.send(new ProducerRecord<>(topic + "-no-wait", partitions.get(0).get(0), id, payload));
		this.producer.flush();
		awaitTrue(() -> calls(id, "a") == 1, "the first run to start");
		this.producer.send(new ProducerRecord<>(topic + "-no-wait", partitions.get(1).get(0), id, payload)).get();
		// the redelivery is refused while the first runs (Spring Kafka's default error
		// handler would give it up after nine immediate retries); the first then fails
		// for good and only the redelivery, retried every second, can settle the event
		awaitTrue(() -> settled(id) == 1, "the redelivery to settle the event", Duration.ofSeconds(30));
		awaitConsumed(group, topic + "-no-wait");
		assertThat(calls(id, "a")).isEqualTo(2);
		assertThat(settled(id)).isOne();
	}

	@Test
	void eachRecordIsObservedAsAKafkaCall() throws Exception {
		String topic = topic("observed");
		String group = "g-observed-" + this.run;
		TestObservationRegistry registry = TestObservationRegistry.create();
		ConfigurableApplicationContext instance = new SpringApplicationBuilder(KafkaTestApplication.class)
			.properties(properties(topic, group, "observed"))
			.initializers((context) -> context.getBeanFactory().registerSingleton("observationRegistry", registry))
			.run();
		this.instances.add(instance);
		String id = "obs-" + this.run;
		String payload = "{\"id\":\"" + id + "\"}";
		this.producer.send(new ProducerRecord<>(topic, 0, id, payload)).get();
		awaitTrue(() -> settled(id) == 1, "the event to settle");
		// a redelivery, acknowledged without running
		this.producer.send(new ProducerRecord<>(topic, 1, id, payload)).get();
		awaitConsumed(group, topic);
		stop(instance);
		assertThat(settled(id)).isOne();
		assertThat(registry).hasHandledContextsThatSatisfy((contexts) -> {
			List<Observation.Context> calls = contexts.stream()
				.filter(IdempotencyObservationContext.class::isInstance)
				.toList();
			assertThat(calls).hasSize(2).allSatisfy((context) -> {
				assertThat(context.getName()).isEqualTo("idempotency.call");
				assertThat(context.getLowCardinalityKeyValue("entry.point").getValue()).isEqualTo("kafka");
				assertThat(context.getLowCardinalityKeyValue("policy").getValue()).isEqualTo("events");
			});
			assertThat(calls)
				.extracting((context) -> context.getLowCardinalityKeyValue("outcome").getValue() + "/"
						+ context.getLowCardinalityKeyValue("completion").getValue())
				.containsExactly("executed/stored", "replayed/none");
		});
	}

	@Test
	@Order(Integer.MAX_VALUE)
	void aConsumerKilledInTheMiddleOfAMessageLeavesItToAnotherThatSettlesItOnce() throws Exception {
		String topic = this.crashTopic;
		String group = this.crashGroup;
		String id = "crash-" + this.run;
		Process victim = this.victim;
		assertThat(victim.isAlive()).as("the victim's JVM is running").isTrue();
		try {
			this.producer.send(new ProducerRecord<>(topic, 0, id, "{\"id\":\"" + id + "\",\"note\":\"hang\"}"));
			this.producer.flush();
			awaitTrue(() -> calls(id, "victim") == 1, "the victim to enter the listener");
			start(topic, group, "survivor");
			victim.destroyForcibly();
			assertThat(victim.waitFor(30, TimeUnit.SECONDS)).isTrue();
			// the victim's session times out, the survivor gets the partition, waits for
			// the victim's lease to lapse and takes the key over
			awaitTrue(() -> settled(id) == 1, "the survivor to settle the event");
			awaitConsumed(group, topic);
		}
		finally {
			victim.destroyForcibly();
		}
		assertThat(calls(id, "victim")).isOne();
		assertThat(calls(id, "survivor")).isOne();
		assertThat(settled(id)).isOne();
		// a later redelivery of the settled event is acknowledged without running
		this.producer.send(new ProducerRecord<>(topic, 1, id, "{\"id\":\"" + id + "\",\"note\":\"hang\"}")).get();
		awaitConsumed(group, topic);
		assertThat(calls(id, "survivor")).isOne();
		assertThat(settled(id)).isOne();
	}

	private void assertEachSettledOnce(String prefix, int events) {
		List<Map<String, Object>> rows = this.jdbc.queryForList(
				"SELECT event_id, count(*) AS n FROM settlement WHERE event_id LIKE ? GROUP BY event_id", prefix + "%");
		assertThat(rows).hasSize(events).allSatisfy((row) -> assertThat(row.get("n")).isEqualTo(1L));
		Long calls = this.jdbc.queryForObject("SELECT count(*) FROM listener_call WHERE event_id LIKE ?", Long.class,
				prefix + "%");
		assertThat(calls).isEqualTo(events);
	}

	private long settled(String prefix) {
		Long count = this.jdbc.queryForObject("SELECT count(*) FROM settlement WHERE event_id LIKE ?", Long.class,
				prefix + "%");
		return (count != null) ? count : -1;
	}

	private long calls(String eventId, String instance) {
		Long count = this.jdbc.queryForObject("SELECT count(*) FROM listener_call WHERE event_id = ? AND instance = ?",
				Long.class, eventId, instance);
		return (count != null) ? count : -1;
	}

	private String topic(String name) {
		String topic = name + "-" + this.run;
		this.broker.addTopics(new NewTopic(topic, 4, (short) 1), new NewTopic(topic + "-by-header", 4, (short) 1),
				new NewTopic(topic + "-no-wait", 4, (short) 1));
		return topic;
	}

	// every record of the topics is consumed by the group: its committed offsets reached
	// the end of every partition
	private void awaitConsumed(String group, String... topics) {
		awaitTrue(() -> this.broker.doWithAdminFunction((admin) -> {
			try {
				Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
				for (String topic : topics) {
					for (int partition = 0; partition < 4; partition++) {
						latest.put(new TopicPartition(topic, partition), OffsetSpec.latest());
					}
				}
				Map<TopicPartition, ListOffsetsResultInfo> ends = admin.listOffsets(latest).all().get();
				Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(group)
					.partitionsToOffsetAndMetadata()
					.get();
				return ends.entrySet().stream().allMatch((end) -> {
					OffsetAndMetadata offset = committed.get(end.getKey());
					long position = (offset != null) ? offset.offset() : 0;
					return position >= end.getValue().offset();
				});
			}
			catch (Exception ex) {
				return false;
			}
		}), "group " + group + " to consume everything");
	}

	// the partitions of the topic that each consumer of the group holds, once the group
	// is stable with the given number of consumers of the topic
	private List<List<Integer>> awaitAssigned(String group, String topic, int consumers) {
		List<List<Integer>> assigned = new ArrayList<>();
		awaitTrue(() -> this.broker.doWithAdminFunction((admin) -> {
			try {
				ConsumerGroupDescription description = admin.describeConsumerGroups(List.of(group))
					.describedGroups()
					.get(group)
					.get();
				if (description.groupState() != GroupState.STABLE) {
					return false;
				}
				assigned.clear();
				for (MemberDescription member : description.members()) {
					List<Integer> own = member.assignment()
						.topicPartitions()
						.stream()
						.filter((partition) -> partition.topic().equals(topic))
						.map(TopicPartition::partition)
						.sorted()
						.toList();
					if (!own.isEmpty()) {
						assigned.add(own);
					}
				}
				return assigned.size() == consumers;
			}
			catch (Exception ex) {
				return false;
			}
		}), consumers + " consumers of " + topic + " in group " + group);
		return assigned;
	}

	private static void awaitTrue(BooleanSupplier condition, String what) {
		awaitTrue(condition, what, DEADLINE);
	}

	private static void awaitTrue(BooleanSupplier condition, String what, Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() > deadline) {
				throw new AssertionError("Timed out after " + timeout.toSeconds() + "s waiting for " + what);
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

	private Map<String, Object> properties(String topic, String group, String instance) {
		TestServers.Postgres postgres = TestServers.postgres();
		TestServers.Redis redis = TestServers.redis();
		Map<String, Object> properties = KafkaTestApplication.properties(this.prefix, topic, group, instance);
		properties.put("spring.kafka.bootstrap-servers", this.broker.getBrokersAsString());
		properties.put("spring.datasource.url", postgres.jdbcUrl());
		properties.put("spring.datasource.username", postgres.username());
		properties.put("spring.datasource.password", postgres.password());
		properties.put("spring.datasource.hikari.schema", this.schema);
		properties.put("spring.datasource.hikari.minimum-idle", "1");
		properties.put("spring.datasource.hikari.maximum-pool-size", "8");
		properties.put("spring.data.redis.host", redis.host());
		properties.put("spring.data.redis.port", String.valueOf(redis.port()));
		return properties;
	}

	private ConfigurableApplicationContext start(String topic, String group, String instance) {
		ConfigurableApplicationContext context = new SpringApplicationBuilder(KafkaTestApplication.class)
			.properties(properties(topic, group, instance))
			.run();
		this.instances.add(context);
		return context;
	}

	private void stop(ConfigurableApplicationContext instance) {
		instance.close();
		this.instances.remove(instance);
	}

	private Process startProcess(String topic, String group, String instance) throws Exception {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.add("-Xmx256m");
		// a short-lived JVM: it starts sooner without the optimizing compiler, and one GC
		// thread leaves the cores to the tests
		command.add("-XX:TieredStopAtLevel=1");
		command.add("-XX:+UseSerialGC");
		command.add("-cp");
		command.add(System.getProperty("java.class.path"));
		command.add(KafkaTestApplication.class.getName());
		properties(topic, group, instance).forEach((name, value) -> command.add("--" + name + "=" + value));
		File log = Files.createTempFile("kafka-victim-", ".log").toFile();
		log.deleteOnExit();
		return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log).start();
	}

	/**
	 * Closes a connection factory made for the clean-up.
	 */
	private record AutoCloseableFactory(
			org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory factory)
			implements
				AutoCloseable {

		@Override
		public void close() {
			this.factory.destroy();
		}

	}

}
