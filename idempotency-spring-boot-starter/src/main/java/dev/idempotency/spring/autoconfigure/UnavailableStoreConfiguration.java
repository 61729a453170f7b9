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

import java.util.Locale;

import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.spring.autoconfigure.IdempotencyProperties.StoreType;

import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Imported last: reached only when {@code idempotency.store.type} asks for a store that
 * no configuration before could create, and fails start-up saying what is missing.
 *
 * @author Idempotency contributors
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnMissingBean(IdempotencyStore.class)
class UnavailableStoreConfiguration {

	@Bean
	IdempotencyStore idempotencyStore(IdempotencyProperties properties) {
		StoreType type = properties.getStore().getType();
		throw new InvalidConfigurationPropertyValueException(StoreTypeCondition.PROPERTY,
				type.name().toLowerCase(Locale.ROOT), requirement(type));
	}

	static String requirement(StoreType type) {
		return switch (type) {
			case TIERED -> "the tiered store needs both a RedisConnectionFactory and a DataSource bean "
					+ "(spring-boot-starter-data-redis and spring-boot-starter-jdbc with PostgreSQL, MariaDB or MySQL)";
			case REDIS -> "the Redis store needs a RedisConnectionFactory bean (spring-boot-starter-data-redis)";
			case JDBC ->
				"the JDBC store needs a DataSource bean (spring-boot-starter-jdbc with PostgreSQL, MariaDB or MySQL)";
			default -> "no idempotency store could be configured for this type";
		};
	}

}
