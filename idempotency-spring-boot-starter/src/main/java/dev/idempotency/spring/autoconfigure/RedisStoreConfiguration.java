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

import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.IdempotencyStoreCustomizer;
import dev.idempotency.spring.autoconfigure.IdempotencyProperties.StoreType;
import dev.idempotency.spring.store.redis.RedisIdempotencyStore;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Redis store, when a {@link RedisConnectionFactory} exists and
 * {@code idempotency.store.type} is {@code redis}, or {@code auto} without a DataSource
 * (with one, {@link AutoStoreSelection} chooses first).
 *
 * @author Idempotency contributors
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(RedisConnectionFactory.class)
@ConditionalOnBean(RedisConnectionFactory.class)
@ConditionalOnMissingBean(IdempotencyStore.class)
@Conditional(RedisStoreConfiguration.OnRedisStoreType.class)
class RedisStoreConfiguration {

	@Bean
	RedisIdempotencyStore idempotencyStore(RedisConnectionFactory connectionFactory, IdempotencyProperties properties,
			ObjectProvider<IdempotencyStoreCustomizer<RedisIdempotencyStore>> customizers) {
		StoreTypeCondition.logChoice("redis", properties.getStore().getType(), "Redis present, no DataSource");
		return redisStore(connectionFactory, properties, customizers);
	}

	static RedisIdempotencyStore redisStore(RedisConnectionFactory connectionFactory, IdempotencyProperties properties,
			ObjectProvider<IdempotencyStoreCustomizer<RedisIdempotencyStore>> customizers) {
		RedisIdempotencyStore store = redisStore(connectionFactory, properties);
		customizers.orderedStream().forEach((customizer) -> customizer.customize(store));
		return store;
	}

	static RedisIdempotencyStore redisStore(RedisConnectionFactory connectionFactory,
			IdempotencyProperties properties) {
		RedisIdempotencyStore store = new RedisIdempotencyStore(connectionFactory);
		store.setKeyPrefix(properties.getRedis().getKeyPrefix());
		return store;
	}

	static final class OnRedisStoreType extends StoreTypeCondition {

		OnRedisStoreType() {
			super(StoreType.AUTO, StoreType.REDIS);
		}

	}

}
