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

import java.util.Objects;

import dev.idempotency.spring.method.IdempotencyStoreUnavailableException;
import dev.idempotency.spring.method.IdempotentCallInProgressException;
import dev.idempotency.spring.method.InvalidIdempotencyKeyException;
import dev.idempotency.spring.method.InvalidIdempotentRequestException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.jspecify.annotations.Nullable;

import org.springframework.kafka.listener.FailedRecordProcessor;
import org.springframework.kafka.listener.ListenerExecutionFailedException;
import org.springframework.kafka.support.KafkaUtils;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.FixedBackOff;

/**
 * Makes a Kafka error handler retry, without limit, a record whose idempotent listener
 * was refused before it ran, because the store could not decide it yet:
 * <ul>
 * <li>{@link IdempotentCallInProgressException}: another delivery of the same message (on
 * another instance, after a rebalance) is still running. Giving the record up would lose
 * it if that first run then failed; retrying it ends in the first run's stored outcome
 * (the record is acknowledged without running the listener) or, if the first run failed
 * or its instance died, in a run of its own;
 * <li>{@link IdempotencyStoreUnavailableException}: no store can say whether the message
 * ran (a fail-closed policy). Giving the record up would lose a message that never ran;
 * retrying it pauses the partition until the store answers.
 * </ul>
 * Each retry comes after the exception's {@code Retry-After}.
 * <p>
 * A record whose key or fingerprint cannot be had
 * ({@link InvalidIdempotencyKeyException}: a key expression that fails or gives nothing,
 * a missing header; {@link InvalidIdempotentRequestException}: a payload that has neither
 * a binary form nor JSON) would fail the same way on every retry: it is not retried but
 * handed at once to the handler's recoverer (a dead-letter topic, or Spring Kafka's
 * default, which logs and skips it), with an error logged that names the listener, the
 * record's topic-partition@offset and the reason.
 * <p>
 * Other exceptions keep the handler's own back-off.
 * <p>
 * The auto-configuration applies it to the {@code DefaultErrorHandler} it declares when
 * the application declares no {@code CommonErrorHandler}; call
 * {@link #retryUntilDecided(FailedRecordProcessor)} on an error handler of your own.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class IdempotentListenerRetries {

	private static final Log logger = LogFactory.getLog(IdempotentListenerRetries.class);

	private IdempotentListenerRetries() {
	}

	/**
	 * Make the given error handler retry the records that the store could not decide yet
	 * (in progress elsewhere, or the store unavailable) without limit, each after the
	 * {@code Retry-After} of its exception. Replaces the handler's back-off function.
	 * @param errorHandler the error handler, for example a {@code DefaultErrorHandler}
	 */
	public static void retryUntilDecided(FailedRecordProcessor errorHandler) {
		Objects.requireNonNull(errorHandler, "'errorHandler' must not be null");
		errorHandler.setBackOffFunction(IdempotentListenerRetries::backOff);
	}

	/**
	 * Return the back-off for a record that failed: see {@link #backOff(Throwable)}; for
	 * a record whose key or fingerprint cannot be had, none (the recoverer gets it at
	 * once), after an error is logged.
	 * @param record the record
	 * @param exception what the listener threw, as the container wraps it
	 * @return the back-off, or {@code null} for the handler's own
	 */
	static @Nullable BackOff backOff(ConsumerRecord<?, ?> record, Exception exception) {
		BackOff decided = backOff(exception);
		if (decided != null) {
			return decided;
		}
		for (Throwable cause = exception; cause != null; cause = cause.getCause()) {
			if (cause instanceof InvalidIdempotencyKeyException || cause instanceof InvalidIdempotentRequestException) {
				String listener = listener(exception);
				logger.error("Idempotent listener" + ((listener != null) ? " " + listener : "") + ": record "
						+ KafkaUtils.format(record) + " cannot be processed: " + cause.getMessage()
						+ ". It is not retried (every retry would fail the same way): the error handler's recoverer"
						+ " gets it");
				return new FixedBackOff(0, 0);
			}
		}
		return null;
	}

	private static @Nullable String listener(Throwable exception) {
		for (Throwable cause = exception; cause != null; cause = cause.getCause()) {
			if (cause instanceof ListenerExecutionFailedException failed && failed.getMessage() != null) {
				String message = failed.getMessage();
				int start = message.indexOf('\'');
				int end = message.lastIndexOf('\'');
				return (start >= 0 && end > start) ? message.substring(start + 1, end) : message;
			}
		}
		return null;
	}

	/**
	 * Return the back-off for a failure: without limit, at the {@code Retry-After}
	 * interval, for a call in progress elsewhere or refused for want of a store; else
	 * {@code null}, the handler's own.
	 * @param exception what the listener threw, as the container wraps it
	 * @return the back-off, or {@code null}
	 */
	static @Nullable BackOff backOff(Throwable exception) {
		for (Throwable cause = exception; cause != null; cause = cause.getCause()) {
			if (cause instanceof IdempotentCallInProgressException inProgress) {
				return new FixedBackOff(inProgress.getRetryAfter().toMillis(), FixedBackOff.UNLIMITED_ATTEMPTS);
			}
			if (cause instanceof IdempotencyStoreUnavailableException unavailable) {
				return new FixedBackOff(unavailable.getRetryAfter().toMillis(), FixedBackOff.UNLIMITED_ATTEMPTS);
			}
		}
		return null;
	}

}
