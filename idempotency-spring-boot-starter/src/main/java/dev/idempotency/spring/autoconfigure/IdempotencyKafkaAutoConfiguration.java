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

import java.lang.reflect.Method;
import java.util.Set;

import dev.idempotency.spring.Idempotent;
import dev.idempotency.spring.kafka.IdempotentListenerRetries;
import dev.idempotency.spring.method.IdempotentMethodAdvisor;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.kafka.annotation.KafkaHandler;
import org.springframework.kafka.annotation.KafkaListener;
import org.springframework.kafka.config.AbstractKafkaListenerContainerFactory;
import org.springframework.kafka.listener.CommonErrorHandler;
import org.springframework.kafka.listener.DefaultErrorHandler;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.util.StringUtils;

/**
 * Auto-configuration of Spring Kafka listeners whose methods are idempotent
 * ({@code @Idempotent(key = ...)} next to {@code @KafkaListener}): when the application
 * declares no {@link CommonErrorHandler}, the listener containers get a
 * {@link DefaultErrorHandler} that behaves as Spring Kafka's default (nine retries, then
 * the record is logged and skipped) except for a delivery whose first run is still in
 * progress elsewhere, which it retries without limit ({@link IdempotentListenerRetries}).
 * <p>
 * An idempotent listener that is a batch listener fails start-up: Spring Kafka retries a
 * failed batch with its fallback batch error handler's own fixed back-off and then skips
 * it, so a batch refused while its key is in progress elsewhere would be lost.
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

	@Bean
	static SmartInitializingSingleton idempotentBatchListenerCheck(ConfigurableListableBeanFactory beanFactory) {
		return new BatchListenerCheck(beanFactory);
	}

	/**
	 * Refuses the idempotent listener methods that are batch listeners, once every
	 * singleton (the container factories included) exists and before any container
	 * starts.
	 */
	static final class BatchListenerCheck implements SmartInitializingSingleton {

		private static final String DEFAULT_FACTORY = "kafkaListenerContainerFactory";

		private final ConfigurableListableBeanFactory beanFactory;

		BatchListenerCheck(ConfigurableListableBeanFactory beanFactory) {
			this.beanFactory = beanFactory;
		}

		@Override
		public void afterSingletonsInstantiated() {
			for (String name : this.beanFactory.getBeanDefinitionNames()) {
				Class<?> type = this.beanFactory.getType(name, false);
				if (type != null) {
					check(ClassUtils.getUserClass(type));
				}
			}
		}

		private void check(Class<?> type) {
			KafkaListener onClass = AnnotatedElementUtils.findMergedAnnotation(type, KafkaListener.class);
			ReflectionUtils.doWithMethods(type, (method) -> {
				Idempotent idempotent = AnnotatedElementUtils.findMergedAnnotation(method, Idempotent.class);
				if (idempotent == null || idempotent.key().isEmpty()) {
					return;
				}
				Set<KafkaListener> listeners = AnnotatedElementUtils.findMergedRepeatableAnnotations(method,
						KafkaListener.class);
				KafkaListener listener = listeners.isEmpty() ? null : listeners.iterator().next();
				if (listener == null && onClass != null
						&& AnnotatedElementUtils.hasAnnotation(method, KafkaHandler.class)) {
					listener = onClass;
				}
				if (listener == null) {
					return;
				}
				String batch = batch(listener, method);
				if (batch != null) {
					throw new IllegalStateException("@Idempotent method " + ClassUtils.getQualifiedMethodName(method)
							+ " is a batch listener (" + batch + "): Spring Kafka retries a failed batch with the"
							+ " fixed back-off of its fallback batch error handler, not the unlimited retries of a"
							+ " call in progress elsewhere or refused for want of a store, and then skips the batch,"
							+ " which would be lost. Make it a record listener (batch = \"false\"), or call an"
							+ " IdempotencyTemplate for each record inside the batch listener");
				}
			}, ReflectionUtils.USER_DECLARED_METHODS);
		}

		private @Nullable String batch(KafkaListener listener, Method method) {
			String batch = resolve(listener.batch());
			if (StringUtils.hasText(batch)) {
				return Boolean.parseBoolean(batch) ? "its @KafkaListener has batch = \"true\"" : null;
			}
			for (Class<?> parameter : method.getParameterTypes()) {
				if (ConsumerRecords.class.isAssignableFrom(parameter)) {
					return "it takes ConsumerRecords";
				}
			}
			String factory = resolve(listener.containerFactory());
			String name = StringUtils.hasText(factory) ? factory : DEFAULT_FACTORY;
			if (this.beanFactory.containsBean(name)
					&& this.beanFactory.getBean(name) instanceof AbstractKafkaListenerContainerFactory<?, ?, ?> found
					&& Boolean.TRUE.equals(found.isBatchListener())) {
				return "its container factory '" + name + "' makes batch listeners";
			}
			return null;
		}

		private @Nullable String resolve(String value) {
			return value.isEmpty() ? value : this.beanFactory.resolveEmbeddedValue(value);
		}

	}

}
