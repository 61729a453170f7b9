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

import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * The databases whose SQL {@link JdbcIdempotencyStore}, {@link JdbcIdempotencyCleaner}
 * and {@link JdbcIdempotencySchemaInitializer} speak. Each has its statements in a class
 * of its own; a store, cleaner or initializer picks the dialect from its first
 * connection's metadata unless it was given one.
 *
 * @author Idempotency contributors
 * @since 0.4.0
 */
public enum JdbcDialect {

	/**
	 * PostgreSQL 12 or later.
	 */
	POSTGRESQL("PostgreSQL", "postgresql"),

	/**
	 * MariaDB 10.6 or later, with InnoDB tables: the whole store, including transactional
	 * claims.
	 */
	MARIADB("MariaDB", "mariadb"),

	/**
	 * MySQL 8.0.16 or later, with InnoDB tables: the statements of {@link #MARIADB} that
	 * MySQL shares. Transactional claims need MariaDB's statement-level lock time-out and
	 * idle-transaction time-out, which MySQL lacks, and are refused.
	 */
	MYSQL("MySQL", "mariadb");

	private final String displayName;

	private final String migrationFolder;

	JdbcDialect(String displayName, String migrationFolder) {
		this.displayName = displayName;
		this.migrationFolder = migrationFolder;
	}

	/**
	 * Return the database's name, for messages.
	 * @return the name, such as {@code MariaDB}
	 */
	public String displayName() {
		return this.displayName;
	}

	/**
	 * Return whether claims may be held by transactions of the application on this
	 * database (the transactional mode).
	 * @return {@code true} on PostgreSQL and MariaDB
	 */
	public boolean supportsTransactionalClaims() {
		return this != MYSQL;
	}

	// the folder of the migration scripts under JdbcIdempotencySchemaInitializer's base
	String migrationFolder() {
		return this.migrationFolder;
	}

	/**
	 * Return the dialect of a database from its product name and version, as JDBC
	 * metadata reports them. MySQL Connector/J names every server {@code MySQL}; a
	 * MariaDB server says so in its version.
	 * @param productName the database product name
	 * @param productVersion the database product version
	 * @return the dialect, or {@code null} for a database the store does not support
	 */
	public static @Nullable JdbcDialect of(@Nullable String productName, @Nullable String productVersion) {
		String name = (productName != null) ? productName.toLowerCase(Locale.ROOT) : "";
		String version = (productVersion != null) ? productVersion.toLowerCase(Locale.ROOT) : "";
		if (name.equals("postgresql")) {
			return POSTGRESQL;
		}
		if (name.equals("mariadb") || (name.equals("mysql") && version.contains("mariadb"))) {
			return MARIADB;
		}
		return name.equals("mysql") ? MYSQL : null;
	}

	/**
	 * Return the dialect of the database a connection's metadata describes.
	 * @param metaData the metadata
	 * @return the dialect
	 * @throws SQLException if the metadata cannot be read
	 * @throws IllegalStateException if the database is not one the store supports
	 */
	static JdbcDialect of(DatabaseMetaData metaData) throws SQLException {
		String name = metaData.getDatabaseProductName();
		String version = metaData.getDatabaseProductVersion();
		JdbcDialect dialect = of(name, version);
		if (dialect == null) {
			throw new IllegalStateException(
					"The JDBC idempotency store supports PostgreSQL, MariaDB and MySQL, not " + name + " " + version);
		}
		return dialect;
	}

}
