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

import java.util.List;

import dev.idempotency.spring.Idempotent;
import dev.idempotency.spring.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.spring.autoconfigure.IdempotencyKafkaAutoConfiguration;
import dev.idempotency.spring.autoconfigure.IdempotencyMethodAutoConfiguration;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.kafka.annotation.KafkaListener;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for the idempotent Kafka listeners that start-up refuses: batch listeners, whose
 * refusals Spring Kafka would retry a fixed number of times and then skip. No broker is
 * needed: the containers are not started.
 *
 * @author Idempotency contributors
 */
class IdempotentKafkaListenerConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(IdempotencyAutoConfiguration.class, IdempotencyMethodAutoConfiguration.class,
						IdempotencyKafkaAutoConfiguration.class, KafkaAutoConfiguration.class))
		.withPropertyValues("idempotency.store.type=memory", "spring.kafka.bootstrap-servers=127.0.0.1:9",
				"spring.kafka.listener.auto-startup=false");

	@Test
	void aRecordListenerStarts() {
		this.runner.withBean(RecordListener.class).run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void failsForAnIdempotentListenerThatIsABatchListenerByItsAnnotation() {
		this.runner.withBean(BatchListener.class)
			.run((context) -> assertThat(context).getFailure()
				.hasMessageContaining("@Idempotent method " + BatchListener.class.getName() + ".onBatch")
				.hasMessageContaining("batch listener")
				.hasMessageContaining("IdempotencyTemplate"));
	}

	@Test
	void failsForAnIdempotentListenerThatIsABatchListenerByItsContainerFactory() {
		this.runner.withBean(FactoryBatchListener.class)
			.withPropertyValues("spring.kafka.listener.type=batch")
			.run((context) -> assertThat(context).getFailure()
				.hasMessageContaining("@Idempotent method " + FactoryBatchListener.class.getName() + ".onBatch")
				.hasMessageContaining("batch listener"));
	}

	static class RecordListener {

		@KafkaListener(topics = "records", groupId = "g")
		@Idempotent(key = "#p0")
		void onRecord(String payload) {
		}

	}

	static class BatchListener {

		@KafkaListener(topics = "batches", groupId = "g", batch = "true")
		@Idempotent(key = "#p0[0]")
		void onBatch(List<String> payloads) {
		}

	}

	static class FactoryBatchListener {

		@KafkaListener(topics = "batches", groupId = "g")
		@Idempotent(key = "#p0[0]")
		void onBatch(List<String> payloads) {
		}

	}

}
