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

import javax.sql.DataSource;

import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.IdempotencyStoreCustomizer;
import dev.idempotency.spring.autoconfigure.IdempotencyProperties.StoreType;
import dev.idempotency.spring.autoconfigure.JdbcStoreSupport.JdbcStoreFactory;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spring.store.redis.RedisIdempotencyStore;
import dev.idempotency.spring.store.tiered.TieredIdempotencyStore;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.jdbc.core.JdbcOperations;

/**
 * The store {@code idempotency.store.type=auto} gets when a {@link DataSource} exists.
 * The PostgreSQL store runs on PostgreSQL only, and which database a DataSource reaches
 * is known only once it exists, so the choice is made here, when the store is created: on
 * PostgreSQL, the store the DataSource completes (tiered with Redis, else jdbc); on
 * another database, the store {@code auto} chooses without a DataSource (Redis, else
 * in-memory). Every other choice is made by the conditions of the store configurations
 * alone.
 *
 * @author Idempotency contributors
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({ JdbcOperations.class, DataSource.class })
@ConditionalOnBean(DataSource.class)
@ConditionalOnMissingBean(IdempotencyStore.class)
@Conditional(AutoStoreSelection.OnAutoStoreType.class)
@Import(JdbcStoreSupport.class)
class AutoStoreSelection {

	// after WithRedis, which is registered first
	@Bean
	@ConditionalOnMissingBean(IdempotencyStore.class)
	IdempotencyStore idempotencyStore(IdempotencyProperties properties, JdbcStoreFactory jdbc,
			ObjectProvider<IdempotencyStoreCustomizer<JdbcIdempotencyStore>> customizers) {
		if (jdbc.database().isSupported()) {
			return JdbcStoreConfiguration.jdbcStore(properties, jdbc, customizers);
		}
		StoreTypeCondition.logChoice("in-memory", StoreType.AUTO, "no Redis; " + unsupported(jdbc));
		return InMemoryStoreConfiguration.inMemoryStore(properties);
	}

	private static String unsupported(JdbcStoreFactory jdbc) {
		return "the DataSource is " + jdbc.database().describe() + ", which the JDBC store does not support";
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(RedisConnectionFactory.class)
	@ConditionalOnBean(RedisConnectionFactory.class)
	static class WithRedis {

		@Bean
		IdempotencyStore idempotencyStore(RedisConnectionFactory connectionFactory, IdempotencyProperties properties,
				JdbcStoreFactory jdbc, ObjectProvider<IdempotencyStoreCustomizer<TieredIdempotencyStore>> customizers,
				ObjectProvider<IdempotencyStoreCustomizer<RedisIdempotencyStore>> redisCustomizers) {
			if (jdbc.database().isSupported()) {
				return TieredStoreConfiguration.tieredStore(connectionFactory, properties, jdbc, customizers);
			}
			StoreTypeCondition.logChoice("redis", StoreType.AUTO, "Redis present; " + unsupported(jdbc));
			return RedisStoreConfiguration.redisStore(connectionFactory, properties, redisCustomizers);
		}

	}

	static final class OnAutoStoreType extends StoreTypeCondition {

		OnAutoStoreType() {
			super(StoreType.AUTO);
		}

	}

}
