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

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcOperations;

/**
 * PostgreSQL store, when {@code idempotency.store.type} is {@code jdbc} and a
 * {@link DataSource} exists; start-up fails if it is not PostgreSQL. {@code auto} gets it
 * from {@link AutoStoreSelection}.
 *
 * @author Idempotency contributors
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass({ JdbcOperations.class, DataSource.class })
@ConditionalOnBean(DataSource.class)
@ConditionalOnMissingBean(IdempotencyStore.class)
@Conditional(JdbcStoreConfiguration.OnJdbcStoreType.class)
@Import(JdbcStoreSupport.class)
class JdbcStoreConfiguration {

	@Bean
	JdbcIdempotencyStore idempotencyStore(IdempotencyProperties properties, JdbcStoreFactory jdbc,
			ObjectProvider<IdempotencyStoreCustomizer<JdbcIdempotencyStore>> customizers) {
		jdbc.database().requireSupported(StoreType.JDBC);
		return jdbcStore(properties, jdbc, customizers);
	}

	static JdbcIdempotencyStore jdbcStore(IdempotencyProperties properties, JdbcStoreFactory jdbc,
			ObjectProvider<IdempotencyStoreCustomizer<JdbcIdempotencyStore>> customizers) {
		JdbcIdempotencyStore store = jdbc.create();
		customizers.orderedStream().forEach((customizer) -> customizer.customize(store));
		StoreTypeCondition.logChoice("jdbc, " + jdbc.database().displayName() + " (" + jdbc.database().describe() + ")",
				properties.getStore().getType(),
				"a " + jdbc.database().displayName() + " DataSource present, no Redis");
		return store;
	}

	static final class OnJdbcStoreType extends StoreTypeCondition {

		OnJdbcStoreType() {
			super(StoreType.JDBC);
		}

	}

}
