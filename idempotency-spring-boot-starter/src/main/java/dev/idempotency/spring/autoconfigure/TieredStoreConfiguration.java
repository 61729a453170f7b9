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
import dev.idempotency.spring.store.jdbc.JdbcIdempotencySchemaInitializer;
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
 * Tiered store (Redis in front of PostgreSQL), when both a {@link RedisConnectionFactory}
 * and a {@link DataSource} exist and {@code idempotency.store.type} is {@code tiered} or
 * {@code auto}. It is imported first, so that {@code auto} prefers it. Whether the
 * {@code DataSource} reaches PostgreSQL is known only once it exists: with another
 * database {@code auto} gets the Redis store from here, and {@code tiered} fails
 * start-up.
 *
 * @author Idempotency contributors
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({ RedisConnectionFactory.class, JdbcOperations.class, DataSource.class })
@ConditionalOnBean({ RedisConnectionFactory.class, DataSource.class })
@ConditionalOnMissingBean(IdempotencyStore.class)
@Conditional(TieredStoreConfiguration.OnTieredStoreType.class)
@Import(JdbcStoreSupport.class)
class TieredStoreConfiguration {

	// auto with a database the PostgreSQL store does not support: Redis alone
	@Bean
	IdempotencyStore idempotencyStore(RedisConnectionFactory connectionFactory, DataSource dataSource,
			IdempotencyProperties properties, IdempotencyJdbcProperties jdbcProperties, JdbcDatabase database,
			ObjectProvider<JdbcIdempotencySchemaInitializer> initializer,
			ObjectProvider<IdempotencyStoreCustomizer<TieredIdempotencyStore>> customizers,
			ObjectProvider<IdempotencyStoreCustomizer<RedisIdempotencyStore>> redisCustomizers) {
		StoreType type = properties.getStore().getType();
		if (!database.supports(type)) {
			StoreTypeCondition.logChoice("redis", type, "Redis present; the DataSource is " + database.describe()
					+ ", which the PostgreSQL store does not support");
			RedisIdempotencyStore redis = RedisStoreConfiguration.redisStore(connectionFactory, properties);
			redisCustomizers.orderedStream().forEach((customizer) -> customizer.customize(redis));
			return redis;
		}
		TieredIdempotencyStore store = new TieredIdempotencyStore(
				RedisStoreConfiguration.redisStore(connectionFactory, properties),
				JdbcStoreSupport.jdbcStore(dataSource, properties, jdbcProperties, initializer));
		if (properties.getRedis().getTtl() != null) {
			store.setFastTtl(properties.getRedis().getTtl());
		}
		store.setFailureThreshold(properties.getTiered().getFailureThreshold());
		store.setOpenDuration(properties.getTiered().getOpenDuration());
		store.setClaimMode(properties.getTiered().getClaim());
		store.setClaimCommit(properties.getTiered().getClaimCommit());
		customizers.orderedStream().forEach((customizer) -> customizer.customize(store));
		StoreTypeCondition.logChoice("tiered, Redis in front of PostgreSQL (" + database.describe() + ")", type,
				"Redis and a PostgreSQL DataSource present");
		return store;
	}

	static final class OnTieredStoreType extends StoreTypeCondition {

		OnTieredStoreType() {
			super(StoreType.AUTO, StoreType.TIERED);
		}

	}

}
