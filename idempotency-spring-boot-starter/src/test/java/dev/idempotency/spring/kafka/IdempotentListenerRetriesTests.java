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

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.store.IdempotencyStoreException;
import dev.idempotency.spring.method.IdempotencyStoreUnavailableException;
import dev.idempotency.spring.method.IdempotentCallInProgressException;
import dev.idempotency.spring.method.InvalidIdempotencyKeyException;
import dev.idempotency.spring.method.InvalidIdempotentRequestException;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.kafka.listener.ListenerExecutionFailedException;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.BackOffExecution;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link IdempotentListenerRetries}.
 *
 * @author Idempotency contributors
 */
@ExtendWith(OutputCaptureExtension.class)
class IdempotentListenerRetriesTests {

	@Test
	void anInProgressCallIsRetriedWithoutLimitAfterItsRetryAfter() {
		IdempotentCallInProgressException inProgress = new IdempotentCallInProgressException(
				IdempotencyKey.global("event-1"), Duration.ofSeconds(2));
		// as the container wraps what the listener threw
		BackOff backOff = IdempotentListenerRetries
			.backOff(new ListenerExecutionFailedException("listener failed", inProgress));
		assertThat(backOff).isNotNull();
		BackOffExecution execution = backOff.start();
		for (int attempt = 0; attempt < 1000; attempt++) {
			assertThat(execution.nextBackOff()).isEqualTo(2000);
		}
	}

	@Test
	void aCallRefusedForWantOfAStoreIsRetriedWithoutLimitAfterItsRetryAfter() {
		IdempotencyStoreUnavailableException unavailable = new IdempotencyStoreUnavailableException(
				IdempotencyKey.global("event-1"), Duration.ofSeconds(1),
				new IdempotencyStoreException("connection refused"));
		BackOff backOff = IdempotentListenerRetries
			.backOff(new ListenerExecutionFailedException("listener failed", unavailable));
		assertThat(backOff).isNotNull();
		BackOffExecution execution = backOff.start();
		for (int attempt = 0; attempt < 1000; attempt++) {
			assertThat(execution.nextBackOff()).isEqualTo(1000);
		}
	}

	@Test
	void aRecordWhoseKeyCannotBeHadIsNotRetriedAndIsLogged(CapturedOutput output) {
		ConsumerRecord<String, String> record = new ConsumerRecord<>("orders", 2, 17L, "k", "v");
		InvalidIdempotencyKeyException invalid = new InvalidIdempotencyKeyException(
				"The idempotency key of operation 'settle' is missing");
		BackOff backOff = IdempotentListenerRetries.backOff(record, new ListenerExecutionFailedException(
				"Listener method 'void com.example.Settlements.settle(java.lang.String)' threw exception", invalid));
		assertThat(backOff).isNotNull();
		assertThat(backOff.start().nextBackOff()).isEqualTo(BackOffExecution.STOP);
		assertThat(output).contains("Idempotent listener void com.example.Settlements.settle(java.lang.String):"
				+ " record orders-2@17 cannot be processed: The idempotency key of operation 'settle' is missing."
				+ " It is not retried");
	}

	@Test
	void aRecordWhoseFingerprintCannotBeHadIsNotRetried() {
		ConsumerRecord<String, String> record = new ConsumerRecord<>("orders", 0, 3L, "k", "v");
		InvalidIdempotentRequestException invalid = new InvalidIdempotentRequestException("no fingerprint", null, null);
		BackOff backOff = IdempotentListenerRetries.backOff(record,
				new ListenerExecutionFailedException("listener failed", invalid));
		assertThat(backOff).isNotNull();
		assertThat(backOff.start().nextBackOff()).isEqualTo(BackOffExecution.STOP);
	}

	@Test
	void anyOtherFailureKeepsTheHandlersOwnBackOff() {
		assertThat(IdempotentListenerRetries
			.backOff(new ListenerExecutionFailedException("listener failed", new IllegalStateException()))).isNull();
	}

}
