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

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;

import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.ResourceProvider;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.core.api.resource.LoadableResource;
import org.jspecify.annotations.Nullable;

import org.springframework.core.NativeDetector;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;

/**
 * The schema migration of {@link JdbcIdempotencySchemaInitializer} by Flyway, with a
 * history table of the library's own. Only this class refers to Flyway, so that the
 * initializer loads without it: it is loaded only once
 * {@link JdbcIdempotencySchemaInitializer} has found Flyway on the class path (its
 * verification loads Flyway's types), and nothing else may refer to it.
 * <p>
 * In a GraalVM native image, Flyway's class path scanner finds no script (a native image
 * cannot list the class path the way it does): the scripts are handed to Flyway by
 * {@link ScriptResources}, which lists them with Spring's resolver, as Spring Boot does
 * for an application's own migrations.
 *
 * @author Idempotency contributors
 */
final class FlywaySchemaMigration {

	private FlywaySchemaMigration() {
	}

	/**
	 * Apply the migrations the database does not have yet, on the given connection.
	 * @param connection the connection, which stays open
	 * @param dialect the database's dialect
	 * @param table the records table
	 * @param historyTable the library's history table, in the records table's schema
	 * @param classLoader the class loader of the scripts
	 * @return how many migrations ran
	 */
	static int migrate(Connection connection, JdbcDialect dialect, TableName table, String historyTable,
			ClassLoader classLoader) {
		ResourceProvider scripts = NativeDetector.inNativeImage()
				? new ScriptResources(classLoader, JdbcIdempotencySchemaInitializer.location(dialect)) : null;
		return migrate(connection, dialect, table, historyTable, classLoader, scripts);
	}

	/**
	 * Apply the migrations the database does not have yet, on the given connection.
	 * @param connection the connection, which stays open
	 * @param dialect the database's dialect
	 * @param table the records table
	 * @param historyTable the library's history table, in the records table's schema
	 * @param classLoader the class loader of the scripts
	 * @param scripts what gives Flyway the scripts ({@link ScriptResources} in a native
	 * image), or {@code null} for Flyway's scanner
	 * @return how many migrations ran
	 */
	static int migrate(Connection connection, JdbcDialect dialect, TableName table, String historyTable,
			ClassLoader classLoader, @Nullable ResourceProvider scripts) {
		FluentConfiguration configuration = Flyway.configure(classLoader)
			.dataSource(new SingleConnectionDataSource(connection, true))
			// Flyway's own lock at session level, on the one connection it is given: a
			// transactional lock would need a second connection
			.configuration((dialect == JdbcDialect.POSTGRESQL) ? Map.of("flyway.postgresql.transactional.lock", "false")
					: Map.of())
			.locations(JdbcIdempotencySchemaInitializer.location(dialect))
			.table(historyTable)
			.placeholders(Map.of("table_name", table.qualifiedName(), "table_simple_name", table.simpleName()))
			// version 0 is below every migration of the library: a schema that already
			// holds the application's objects is baselined without skipping any of them
			.baselineOnMigrate(true)
			.baselineVersion("0")
			.baselineDescription("<< idempotency baseline >>")
			.cleanDisabled(true);
		if (scripts != null) {
			configuration.resourceProvider(scripts);
		}
		@Nullable String schema = table.schema();
		if (schema != null) {
			configuration.schemas(schema).defaultSchema(schema);
		}
		return configuration.load().migrate().migrationsExecuted;
	}

	/**
	 * The scripts of one location of the class path, listed by Spring's resolver: what
	 * Flyway reads in a native image. Each has the name Flyway's scanner gives it (its
	 * file name, relative to the location), so that the history and the checksums are the
	 * same either way.
	 */
	static final class ScriptResources implements ResourceProvider {

		private final List<LoadableResource> scripts = new ArrayList<>();

		/**
		 * List the scripts of a location.
		 * @param classLoader the class loader of the scripts
		 * @param location the location, {@code classpath:} and a folder
		 * @throws UncheckedIOException if the location cannot be listed
		 */
		ScriptResources(ClassLoader classLoader, String location) {
			String folder = location.substring(location.indexOf(':') + 1);
			try {
				for (Resource resource : new PathMatchingResourcePatternResolver(classLoader)
					.getResources(location + "/*")) {
					String name = resource.getFilename();
					if (name != null && !name.isEmpty() && resource.isReadable()) {
						this.scripts.add(new Script(resource, folder, name));
					}
				}
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Could not list the idempotency migration scripts in " + location, ex);
			}
		}

		@Override
		public @Nullable LoadableResource getResource(String name) {
			for (LoadableResource script : this.scripts) {
				if (script.getRelativePath().equals(name) || script.getAbsolutePath().equals(name)) {
					return script;
				}
			}
			return null;
		}

		@Override
		public Collection<LoadableResource> getResources(String prefix, String[] suffixes) {
			return this.scripts.stream()
				.filter((script) -> script.getFilename().startsWith(prefix)
						&& Arrays.stream(suffixes).anyMatch(script.getFilename()::endsWith))
				.toList();
		}

	}

	private static final class Script extends LoadableResource {

		private final Resource resource;

		private final String folder;

		private final String name;

		Script(Resource resource, String folder, String name) {
			this.resource = resource;
			this.folder = folder;
			this.name = name;
		}

		@Override
		public Reader read() {
			try {
				return new BufferedReader(
						new InputStreamReader(this.resource.getInputStream(), StandardCharsets.UTF_8));
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Could not read the idempotency migration script " + this.resource, ex);
			}
		}

		@Override
		public String getAbsolutePath() {
			return this.folder + "/" + this.name;
		}

		@Override
		public String getAbsolutePathOnDisk() {
			return this.resource.getDescription();
		}

		@Override
		public String getFilename() {
			return this.name;
		}

		@Override
		public String getRelativePath() {
			return this.name;
		}

	}

}
