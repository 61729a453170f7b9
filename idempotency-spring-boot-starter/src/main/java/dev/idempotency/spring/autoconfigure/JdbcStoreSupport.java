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

import dev.idempotency.spring.store.jdbc.JdbcIdempotencyCleaner;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencySchemaInitializer;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencyStore;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.sql.init.dependency.DatabaseInitializationDependencyConfigurer;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/**
 * Beans shared by the JDBC and tiered stores: the schema migration and the scheduled
 * cleanup of expired rows.
 *
 * @author Idempotency contributors
 */
@Configuration(proxyBeanMethods = false)
@Import(DatabaseInitializationDependencyConfigurer.class)
class JdbcStoreSupport {

	// Migrates the library's table with its own Flyway history, after the application's
	// own database initialisation (its Flyway or Liquibase migrations), so that an
	// application migrating an empty schema for the first time still finds it empty.
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnProperty(name = "idempotency.jdbc.initialize-schema", havingValue = "always", matchIfMissing = true)
	@DependsOnDatabaseInitialization
	JdbcIdempotencySchemaInitializer idempotencySchemaInitializer(DataSource dataSource,
			IdempotencyProperties properties) {
		JdbcIdempotencySchemaInitializer initializer = new JdbcIdempotencySchemaInitializer(dataSource);
		initializer.setTableName(properties.getJdbc().getTableName());
		initializer.initialize();
		return initializer;
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "idempotency.jdbc.cleanup.enabled", matchIfMissing = true)
	JdbcCleanupScheduler idempotencyCleanupScheduler(DataSource dataSource, IdempotencyProperties properties,
			ObjectProvider<JdbcIdempotencySchemaInitializer> initializer) {
		// clean only once the table exists
		initializer.getIfAvailable();
		JdbcIdempotencyCleaner cleaner = new JdbcIdempotencyCleaner(dataSource);
		cleaner.setTableName(properties.getJdbc().getTableName());
		cleaner.setBatchSize(properties.getJdbc().getCleanup().getBatchSize());
		return new JdbcCleanupScheduler(cleaner, properties.getJdbc().getCleanup().getInterval());
	}

	static JdbcIdempotencyStore jdbcStore(DataSource dataSource, IdempotencyProperties properties,
			ObjectProvider<JdbcIdempotencySchemaInitializer> initializer) {
		// the table must exist before the first request
		initializer.getIfAvailable();
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(dataSource);
		store.setTableName(properties.getJdbc().getTableName());
		store.setConfirmTakeover(properties.getJdbc().isConfirmTakeover());
		store.setTransactionalClaims(TransactionalMode.isConfigured(properties));
		return store;
	}

}
