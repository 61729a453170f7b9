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

package dev.idempotency.spring.autoconfigure;

import dev.idempotency.spring.kafka.IdempotentListenerRetries;
import dev.idempotency.spring.method.IdempotentMethodAdvisor;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.kafka.listener.CommonErrorHandler;
import org.springframework.kafka.listener.DefaultErrorHandler;

/**
 * Auto-configuration of Spring Kafka listeners whose methods are idempotent
 * ({@code @Idempotent(key = ...)} next to {@code @KafkaListener}): when the application
 * declares no {@link CommonErrorHandler}, the listener containers get a
 * {@link DefaultErrorHandler} that behaves as Spring Kafka's default (nine retries, then
 * the record is logged and skipped) except for a delivery whose first run is still in
 * progress elsewhere, which it retries without limit ({@link IdempotentListenerRetries}).
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
@AutoConfiguration(after = IdempotencyMethodAutoConfiguration.class,
		beforeName = "org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration")
@ConditionalOnClass(DefaultErrorHandler.class)
@ConditionalOnBean(IdempotentMethodAdvisor.class)
public final class IdempotencyKafkaAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(CommonErrorHandler.class)
	DefaultErrorHandler idempotencyKafkaErrorHandler() {
		DefaultErrorHandler errorHandler = new DefaultErrorHandler();
		IdempotentListenerRetries.retryUntilDecided(errorHandler);
		return errorHandler;
	}

}
