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
 * Tiered store (Redis in front of PostgreSQL), when {@code idempotency.store.type} is
 * {@code tiered} and both a {@link RedisConnectionFactory} and a {@link DataSource}
 * exist; start-up fails if the DataSource is not PostgreSQL. {@code auto} gets it from
 * {@link AutoStoreSelection}.
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

	@Bean
	TieredIdempotencyStore idempotencyStore(RedisConnectionFactory connectionFactory, IdempotencyProperties properties,
			JdbcStoreFactory jdbc, ObjectProvider<IdempotencyStoreCustomizer<TieredIdempotencyStore>> customizers) {
		jdbc.database().requireSupported(StoreType.TIERED);
		return tieredStore(connectionFactory, properties, jdbc, customizers);
	}

	static TieredIdempotencyStore tieredStore(RedisConnectionFactory connectionFactory,
			IdempotencyProperties properties, JdbcStoreFactory jdbc,
			ObjectProvider<IdempotencyStoreCustomizer<TieredIdempotencyStore>> customizers) {
		TieredIdempotencyStore store = new TieredIdempotencyStore(
				RedisStoreConfiguration.redisStore(connectionFactory, properties), jdbc.create());
		if (properties.getRedis().getTtl() != null) {
			store.setFastTtl(properties.getRedis().getTtl());
		}
		store.setFailureThreshold(properties.getTiered().getFailureThreshold());
		store.setOpenDuration(properties.getTiered().getOpenDuration());
		store.setClaimMode(properties.getTiered().getClaim());
		store.setClaimCommit(properties.getTiered().getClaimCommit());
		customizers.orderedStream().forEach((customizer) -> customizer.customize(store));
		StoreTypeCondition.logChoice(
				"tiered, Redis in front of " + jdbc.database().displayName() + " (" + jdbc.database().describe() + ")",
				properties.getStore().getType(),
				"Redis and a " + jdbc.database().displayName() + " DataSource present");
		return store;
	}

	static final class OnTieredStoreType extends StoreTypeCondition {

		OnTieredStoreType() {
			super(StoreType.TIERED);
		}

	}

}
