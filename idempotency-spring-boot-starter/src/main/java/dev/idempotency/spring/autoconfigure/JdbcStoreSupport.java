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
import java.util.function.Supplier;

import javax.sql.DataSource;

import dev.idempotency.spring.autoconfigure.IdempotencyProperties.StoreType;
import dev.idempotency.spring.store.jdbc.JdbcDialect;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencyCleaner;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencySchemaInitializer;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencyStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.jdbc.EmbeddedDatabaseConnection;
import org.springframework.boot.sql.init.DatabaseInitializationMode;
import org.springframework.boot.sql.init.dependency.DatabaseInitializationDependencyConfigurer;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.io.ResourceLoader;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Beans shared by the JDBC and tiered stores: their settings, the schema migration and
 * the scheduled cleanup of expired rows.
 *
 * @author Idempotency contributors
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(IdempotencyJdbcProperties.class)
@Import(DatabaseInitializationDependencyConfigurer.class)
class JdbcStoreSupport {

	private static final Log logger = LogFactory.getLog(JdbcStoreSupport.class);

	// Migrates the library's table after the application's own database initialisation
	// (its Flyway or Liquibase migrations), so that an application migrating an empty
	// schema for the first time still finds it empty.
	@Bean
	JdbcDatabase idempotencyJdbcDatabase(DataSource dataSource) {
		return new JdbcDatabase(dataSource);
	}

	@Bean
	@ConditionalOnMissingBean
	@Conditional(OnSchemaInitialization.class)
	@DependsOnDatabaseInitialization
	JdbcIdempotencySchemaInitializer idempotencySchemaInitializer(DataSource dataSource,
			IdempotencyJdbcProperties properties, IdempotencyProperties idempotencyProperties, JdbcDatabase database,
			ResourceLoader resourceLoader) {
		JdbcIdempotencySchemaInitializer initializer = new JdbcIdempotencySchemaInitializer(dataSource);
		StoreType type = idempotencyProperties.getStore().getType();
		if (!database.supports(type)) {
			// auto leaves the JDBC store out: nothing to create
			return initializer;
		}
		initializer.setTableName(properties.getTableName());
		JdbcDialect dialect = database.dialect();
		if (dialect != null) {
			initializer.setDialect(dialect);
		}
		ClassLoader classLoader = resourceLoader.getClassLoader();
		if (classLoader != null) {
			initializer.setClassLoader(classLoader);
		}
		if (properties.getInitializeSchema() == DatabaseInitializationMode.EMBEDDED
				&& !EmbeddedDatabaseConnection.isEmbedded(dataSource)) {
			logger.info("Idempotency table '" + properties.getTableName() + "' left as it is:"
					+ " idempotency.jdbc.initialize-schema is embedded and the database is not embedded");
			return initializer;
		}
		initializer.initialize();
		return initializer;
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "idempotency.jdbc.cleanup.enabled", matchIfMissing = true)
	JdbcCleanupScheduler idempotencyCleanupScheduler(DataSource dataSource, IdempotencyJdbcProperties properties,
			JdbcDatabase database, ObjectProvider<JdbcIdempotencySchemaInitializer> initializer) {
		// clean only once the table exists
		initializer.getIfAvailable();
		JdbcIdempotencyCleaner cleaner = new JdbcIdempotencyCleaner(dataSource);
		cleaner.setTableName(properties.getTableName());
		JdbcDialect dialect = database.dialect();
		if (dialect != null) {
			cleaner.setDialect(dialect);
		}
		cleaner.setBatchSize(properties.getCleanup().getBatchSize());
		cleaner.setPauseFactor(properties.getCleanup().getPauseFactor());
		return new JdbcCleanupScheduler(cleaner, properties.getCleanup().getInterval(), database::isSupported);
	}

	@Bean
	JdbcStoreFactory idempotencyJdbcStoreFactory(DataSource dataSource, IdempotencyProperties properties,
			IdempotencyJdbcProperties jdbcProperties, JdbcDatabase database,
			ObjectProvider<JdbcIdempotencySchemaInitializer> initializer) {
		return new JdbcStoreFactory(database, () -> {
			// the table must exist before the first request
			initializer.getIfAvailable();
			JdbcIdempotencyStore store = new JdbcIdempotencyStore(dataSource);
			JdbcDialect dialect = database.dialect();
			if (dialect != null) {
				store.setDialect(dialect);
				if (!dialect.supportsTransactionalClaims() && TransactionalMode.isConfigured(properties)) {
					throw new IllegalStateException("Transactional idempotency policies need PostgreSQL or MariaDB;"
							+ " the DataSource is " + database.describe() + ", where a claim cannot be kept from"
							+ " waiting behind another request's uncommitted claim (docs/stores/mariadb.md)");
				}
			}
			store.setTableName(jdbcProperties.getTableName());
			store.setConfirmTakeover(jdbcProperties.isConfirmTakeover());
			store.setTransactionalClaims(TransactionalMode.isConfigured(properties));
			return store;
		});
	}

	/**
	 * The database behind the DataSource, and the JDBC store over it, for the
	 * configurations of the stores that keep their records there.
	 *
	 * @param database the database behind the DataSource
	 * @param factory creates the JDBC store, its table migrated
	 */
	record JdbcStoreFactory(JdbcDatabase database, Supplier<JdbcIdempotencyStore> factory) {

		JdbcIdempotencyStore create() {
			return this.factory.get();
		}

	}

	/**
	 * Matches unless {@code idempotency.jdbc.initialize-schema} is {@code never}.
	 */
	static final class OnSchemaInitialization extends SpringBootCondition {

		private static final String PROPERTY = "idempotency.jdbc.initialize-schema";

		@Override
		public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
			DatabaseInitializationMode mode = Binder.get(context.getEnvironment())
				.bind(PROPERTY, DatabaseInitializationMode.class)
				.orElse(DatabaseInitializationMode.ALWAYS);
			if (mode == DatabaseInitializationMode.NEVER) {
				return ConditionOutcome.noMatch(PROPERTY + " is never");
			}
			return ConditionOutcome.match(PROPERTY + " is " + mode.name().toLowerCase(Locale.ROOT));
		}

	}

}
