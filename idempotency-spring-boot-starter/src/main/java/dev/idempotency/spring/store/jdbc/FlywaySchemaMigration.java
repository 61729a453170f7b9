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

package dev.idempotency.spring.store.jdbc;

import java.sql.Connection;
import java.util.Map;

import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.util.ClassUtils;

/**
 * The schema migration of {@link JdbcIdempotencySchemaInitializer} by Flyway, with a
 * history table of the library's own. Only this class refers to Flyway, so that the
 * initializer loads without it.
 *
 * @author Idempotency contributors
 */
final class FlywaySchemaMigration {

	private FlywaySchemaMigration() {
	}

	/**
	 * Return whether Flyway and its PostgreSQL support are on the class path.
	 * @param classLoader the class loader to look in
	 * @return {@code true} if the migration can run with Flyway
	 */
	static boolean isPresent(ClassLoader classLoader) {
		// Flyway 10 and later reach PostgreSQL through a module of their own
		return ClassUtils.isPresent("org.flywaydb.core.Flyway", classLoader)
				&& ClassUtils.isPresent("org.flywaydb.database.postgresql.PostgreSQLDatabaseType", classLoader);
	}

	/**
	 * Apply the migrations the database does not have yet, on the given connection.
	 * @param connection the connection, which stays open
	 * @param table the records table
	 * @param historyTable the library's history table, in the records table's schema
	 * @param classLoader the class loader of the scripts
	 * @return how many migrations ran
	 */
	static int migrate(Connection connection, TableName table, String historyTable, ClassLoader classLoader) {
		FluentConfiguration configuration = Flyway.configure(classLoader)
			.dataSource(new SingleConnectionDataSource(connection, true))
			// Flyway's own lock at session level, on the one connection it is given: a
			// transactional lock would need a second connection
			.configuration(Map.of("flyway.postgresql.transactional.lock", "false"))
			.locations(JdbcIdempotencySchemaInitializer.LOCATION)
			.table(historyTable)
			.placeholders(Map.of("table_name", table.qualifiedName(), "table_simple_name", table.simpleName()))
			// version 0 is below every migration of the library: a schema that already
			// holds the application's objects is baselined without skipping any of them
			.baselineOnMigrate(true)
			.baselineVersion("0")
			.baselineDescription("<< idempotency baseline >>")
			.cleanDisabled(true);
		@Nullable String schema = table.schema();
		if (schema != null) {
			configuration.schemas(schema).defaultSchema(schema);
		}
		return configuration.load().migrate().migrationsExecuted;
	}

}
