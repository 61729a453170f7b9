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
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;

import javax.sql.DataSource;

import dev.idempotency.spring.Idempotent;
import org.apache.kafka.clients.consumer.ConsumerRecord;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.support.KafkaHeaders;
import org.springframework.messaging.handler.annotation.Header;
import org.springframework.messaging.handler.annotation.Payload;
import org.springframework.stereotype.Component;

/**
 * An application instance for the tests of idempotent Kafka listeners: a consumer that
 * settles payment events, each at most once by its id. Every run of a listener first
 * writes a row of {@code listener_call} on a connection of its own, so that the tests
 * count executions in the database; a settlement is a row of {@code settlement}, which
 * has no unique constraint, so that a double settlement would show.
 * <p>
 * A payload that contains {@code hang} makes the run of the instance named {@code victim}
 * wait forever after its call row (the crash test kills the instance there); {@code slow}
 * makes it take 30 ms. Run as a separate process by {@link #main(String[])}.
 *
 * @author Idempotency contributors
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
public class KafkaTestApplication {

	static final String SCHEMA_DDL = """
			CREATE TABLE IF NOT EXISTS listener_call (
				id bigserial PRIMARY KEY,
				event_id text NOT NULL,
				instance text NOT NULL
			);
			CREATE TABLE IF NOT EXISTS settlement (
				id bigserial PRIMARY KEY,
				event_id text NOT NULL,
				payload text NOT NULL
			);
			""";

	/**
	 * Run an instance as a process of its own.
	 * @param args the application's arguments
	 */
	public static void main(String[] args) {
		SpringApplication.run(KafkaTestApplication.class, args);
	}

	/**
	 * Return the properties of an instance, which is not a web application: the tiered
	 * store and its Redis key prefix, the listeners' topic and group, and the
	 * {@code events} policy: a short lease, and a duplicate waits for the first run's
	 * outcome.
	 * @param prefix the Redis key prefix
	 * @param topic the topic of the key listener ({@code <topic>-by-header} for the
	 * other)
	 * @param group the consumer group
	 * @param instance the instance's name, in the call rows
	 * @return the properties, to add to
	 */
	static Map<String, Object> properties(String prefix, String topic, String group, String instance) {
		Map<String, Object> properties = new LinkedHashMap<>();
		// a consumer, not a web application: the engine and the advisor need no web stack
		properties.put("spring.main.web-application-type", "none");
		properties.put("spring.main.banner-mode", "off");
		properties.put("spring.autoconfigure.exclude",
				"org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration");
		properties.put("spring.data.redis.repositories.enabled", "false");
		properties.put("spring.kafka.consumer.auto-offset-reset", "earliest");
		properties.put("spring.kafka.consumer.properties.session.timeout.ms", "6000");
		properties.put("spring.kafka.consumer.properties.heartbeat.interval.ms", "1000");
		properties.put("spring.kafka.consumer.properties.max.poll.interval.ms", "30000");
		properties.put("spring.kafka.listener.concurrency", "2");
		properties.put("idempotency.store.type", "tiered");
		properties.put("idempotency.redis.key-prefix", prefix);
		properties.put("idempotency.policies.events.lock-timeout", "2s");
		properties.put("idempotency.policies.events.in-flight-wait", "10s");
		properties.put("idempotency.policies.events-no-wait.lock-timeout", "2s");
		properties.put("test.topic", topic);
		properties.put("test.group", group);
		properties.put("test.instance", instance);
		return properties;
	}

	@Component
	static class Settlements {

		private final JdbcTemplate jdbc;

		private final DataSource dataSource;

		private final String instance;

		Settlements(JdbcTemplate jdbc, DataSource dataSource,
				@org.springframework.beans.factory.annotation.Value("${test.instance}") String instance) {
			this.jdbc = jdbc;
			this.dataSource = dataSource;
			this.instance = instance;
		}

		// the event's id is the record key
		@KafkaListener(id = "settle", topics = "${test.topic}", groupId = "${test.group}")
		@Idempotent(policy = "events", key = "#key", fingerprint = "#payload")
		void settle(@Header(KafkaHeaders.RECEIVED_KEY) String key, @Payload String payload)
				throws InterruptedException {
			run(key, payload);
		}

		// the event's id is a header: the record key may be anything
		@KafkaListener(id = "deliver", topics = "${test.topic}-by-header", groupId = "${test.group}")
		@Idempotent(policy = "events", key = "new String(#record.headers().lastHeader('event-id').value(), 'UTF-8')",
				fingerprint = "#record.value()")
		void deliver(ConsumerRecord<String, String> record) throws InterruptedException {
			run(new String(record.headers().lastHeader("event-id").value(), StandardCharsets.UTF_8), record.value());
		}

		// a redelivery meets a run in progress at
		// once: refused, and left to the error handler
		@KafkaListener(id = "settleWithoutWait", topics = "${test.topic}-no-wait", groupId = "${test.group}")
		@Idempotent(policy = "events-no-wait", key = "#key", fingerprint = "#payload")
		void settleWithoutWait(@Header(KafkaHeaders.RECEIVED_KEY) String key, @Payload String payload)
				throws InterruptedException {
			run(key, payload);
		}

		private void run(String eventId, String payload) throws InterruptedException {
			call(eventId);
			if (payload.contains("fail-first-slowly") && calls(eventId) == 1) {
				// longer than the ten attempts of Spring Kafka's default error handling
				// take (each is a new poll, about half a second)
				Thread.sleep(8000);
				// one of the exceptions Spring Kafka's error handler does not retry: this
				// delivery is given up, and only a redelivery can settle the event
				throw new ClassCastException("the first run of " + eventId + " failed for good");
			}
			if (payload.contains("hang") && this.instance.equals("victim")) {
				Thread.sleep(Long.MAX_VALUE);
			}
			if (payload.contains("slow")) {
				Thread.sleep(30);
			}
			this.jdbc.update("INSERT INTO settlement (event_id, payload) VALUES (?, ?)", eventId, payload);
		}

		private long calls(String eventId) {
			Long count = this.jdbc.queryForObject("SELECT count(*) FROM listener_call WHERE event_id = ?", Long.class,
					eventId);
			return (count != null) ? count : -1;
		}

		// a row per run, on a connection of its own: committed at once
		private void call(String eventId) {
			try (Connection connection = this.dataSource.getConnection();
					PreparedStatement insert = connection
						.prepareStatement("INSERT INTO listener_call (event_id, instance) VALUES (?, ?)")) {
				connection.setAutoCommit(true);
				insert.setString(1, eventId);
				insert.setString(2, this.instance);
				insert.executeUpdate();
			}
			catch (SQLException ex) {
				throw new IllegalStateException(ex);
			}
		}

	}

}
