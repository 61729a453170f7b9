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

import java.sql.DatabaseMetaData;
import java.util.Locale;

import javax.sql.DataSource;

import dev.idempotency.spring.autoconfigure.IdempotencyProperties.StoreType;
import dev.idempotency.spring.store.jdbc.JdbcDialect;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeanWrapperImpl;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.jdbc.DatabaseDriver;
import org.springframework.jdbc.support.JdbcUtils;
import org.springframework.jdbc.support.MetaDataAccessException;

/**
 * The database behind the application's {@link DataSource}, as the store selection needs
 * it: the JDBC store runs on PostgreSQL, MariaDB and MySQL only. Asked of the database
 * once, from the connection's metadata; when the database cannot be reached at start-up,
 * read from the data source's JDBC URL if it has one.
 *
 * @author Idempotency contributors
 */
final class JdbcDatabase {

	private static final Log logger = LogFactory.getLog(JdbcDatabase.class);

	private final DataSource dataSource;

	private volatile @Nullable Product product;

	JdbcDatabase(DataSource dataSource) {
		this.dataSource = dataSource;
	}

	/**
	 * Return whether the JDBC store supports the database (PostgreSQL, MariaDB, MySQL),
	 * or may: when neither the database nor the URL can tell, the answer is {@code true}
	 * and a warning says why.
	 * @return whether the JDBC store may use the database
	 */
	boolean isSupported() {
		Product product = product();
		return product.dialect() != null || product.unknown();
	}

	/**
	 * Return the database's dialect.
	 * @return the dialect, {@code null} if the database is not one the JDBC store
	 * supports or could not be told
	 */
	@Nullable JdbcDialect dialect() {
		return product().dialect();
	}

	/**
	 * Return the name the start-up lines give the database: its dialect's, or
	 * {@code the database} when it could not be told.
	 * @return the name
	 */
	String displayName() {
		JdbcDialect dialect = dialect();
		return (dialect != null) ? dialect.displayName() : "the database";
	}

	/**
	 * Return the database's name and version, for messages.
	 * @return a description of the database
	 */
	String describe() {
		return product().description();
	}

	/**
	 * Return whether the JDBC store may use the database for the configured store type:
	 * {@code true} on a database it supports, {@code false} for {@code auto} on another
	 * (which then leaves the JDBC store out).
	 * @param type the configured store type
	 * @return whether the JDBC store may use the database
	 * @throws InvalidConfigurationPropertyValueException if an explicit store type needs
	 * the JDBC store and the database is another
	 */
	boolean supports(StoreType type) {
		if (isSupported()) {
			return true;
		}
		if (type != StoreType.AUTO) {
			requireSupported(type);
		}
		return false;
	}

	/**
	 * Fail start-up if a store type that needs the JDBC store was configured for a
	 * database it does not support.
	 * @param type the configured store type
	 * @throws InvalidConfigurationPropertyValueException if the database is not
	 * PostgreSQL, MariaDB or MySQL
	 */
	void requireSupported(StoreType type) {
		if (!isSupported()) {
			throw new InvalidConfigurationPropertyValueException(StoreTypeCondition.PROPERTY,
					type.name().toLowerCase(Locale.ROOT),
					"the " + type.name().toLowerCase(Locale.ROOT)
							+ " store keeps its records in PostgreSQL, MariaDB or MySQL, but the DataSource is "
							+ describe());
		}
	}

	private Product product() {
		Product product = this.product;
		if (product == null) {
			product = inspect();
			this.product = product;
		}
		return product;
	}

	private Product inspect() {
		try {
			String name = JdbcUtils.extractDatabaseMetaData(this.dataSource, DatabaseMetaData::getDatabaseProductName);
			String version = JdbcUtils.extractDatabaseMetaData(this.dataSource,
					DatabaseMetaData::getDatabaseProductVersion);
			return new Product(JdbcDialect.of(name, version), false, name + " " + version);
		}
		catch (MetaDataAccessException ex) {
			String url = jdbcUrl();
			if (url != null) {
				DatabaseDriver driver = DatabaseDriver.fromJdbcUrl(url);
				logger.debug("Could not read the database's metadata; judging by its URL", ex);
				return new Product(dialectOf(driver), false,
						driver.name().toLowerCase(Locale.ROOT) + " (by its URL; it could not be reached)");
			}
			logger.warn("Could not tell which database the DataSource reaches (" + ex.getMessage()
					+ "); taking it for one the JDBC store supports, to learn which at its first operation");
			return new Product(null, true, "unknown (it could not be reached)");
		}
	}

	// HikariCP's and most pools' URL property; none for a DataSource without one
	private @Nullable String jdbcUrl() {
		BeanWrapperImpl wrapper = new BeanWrapperImpl(this.dataSource);
		for (String property : new String[] { "jdbcUrl", "url" }) {
			if (wrapper.isReadableProperty(property) && wrapper.getPropertyValue(property) instanceof String url) {
				return url;
			}
		}
		return null;
	}

	private static @Nullable JdbcDialect dialectOf(DatabaseDriver driver) {
		return switch (driver) {
			case POSTGRESQL -> JdbcDialect.POSTGRESQL;
			case MARIADB -> JdbcDialect.MARIADB;
			case MYSQL -> JdbcDialect.MYSQL;
			default -> null;
		};
	}

	private record Product(@Nullable JdbcDialect dialect, boolean unknown, String description) {
	}

}
