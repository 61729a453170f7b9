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
import dev.idempotency.core.store.InMemoryIdempotencyStore;
import dev.idempotency.spring.autoconfigure.IdempotencyProperties.StoreType;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/**
 * In-memory store: chosen by {@code idempotency.store.type=memory}, or by {@code auto}
 * without Redis and without a DataSource ({@link AutoStoreSelection} chooses it for a
 * DataSource the JDBC store does not support). It protects a single instance only.
 *
 * @author Idempotency contributors
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnMissingBean(IdempotencyStore.class)
@Conditional(InMemoryStoreConfiguration.OnMemoryStoreType.class)
class InMemoryStoreConfiguration {

	private static final Log logger = LogFactory.getLog(InMemoryStoreConfiguration.class);

	@Bean
	InMemoryIdempotencyStore idempotencyStore(IdempotencyProperties properties) {
		if (properties.getStore().getType() == StoreType.AUTO) {
			StoreTypeCondition.logChoice("in-memory", StoreType.AUTO, "no Redis, no DataSource");
		}
		return inMemoryStore(properties);
	}

	static InMemoryIdempotencyStore inMemoryStore(IdempotencyProperties properties) {
		logger.warn("Idempotency records are kept in memory (idempotency.store.type="
				+ properties.getStore().getType().name().toLowerCase(Locale.ROOT)
				+ "): duplicates are caught on this instance only and every record is lost on restart. "
				+ "Configure Redis and/or a PostgreSQL, MariaDB or MySQL DataSource to protect several instances.");
		return new InMemoryIdempotencyStore();
	}

	static final class OnMemoryStoreType extends StoreTypeCondition {

		OnMemoryStoreType() {
			super(StoreType.AUTO, StoreType.MEMORY);
		}

	}

}
