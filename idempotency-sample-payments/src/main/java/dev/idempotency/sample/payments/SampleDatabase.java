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

package dev.idempotency.sample.payments;

import java.sql.DatabaseMetaData;

import javax.sql.DataSource;

import org.springframework.jdbc.support.JdbcUtils;
import org.springframework.jdbc.support.MetaDataAccessException;

/**
 * The database the sample runs on, PostgreSQL or MariaDB, read once from the metadata of
 * the {@link DataSource}'s connections. Most of the sample's SQL is the same on both; the
 * few statements that are not ({@code ON CONFLICT}, {@code RETURNING} of an update) come
 * in one form for each, chosen with this.
 *
 * @author Idempotency contributors
 */
enum SampleDatabase {

	/**
	 * PostgreSQL, the sample's default (application.yml).
	 */
	POSTGRESQL,

	/**
	 * MariaDB 10.7 or later through MariaDB Connector/J, with the profile {@code mariadb}
	 * (application-mariadb.yml).
	 */
	MARIADB;

	/**
	 * Return the database a data source connects to.
	 * @param dataSource the data source
	 * @return the database
	 * @throws IllegalStateException if it is neither PostgreSQL nor MariaDB, or cannot be
	 * reached
	 */
	static SampleDatabase of(DataSource dataSource) {
		String product;
		try {
			product = JdbcUtils.extractDatabaseMetaData(dataSource, DatabaseMetaData::getDatabaseProductName);
		}
		catch (MetaDataAccessException ex) {
			throw new IllegalStateException("Could not read which database the sample runs on", ex);
		}
		return of(product);
	}

	static SampleDatabase of(String product) {
		return switch (product) {
			case "PostgreSQL" -> POSTGRESQL;
			case "MariaDB" -> MARIADB;
			default -> throw new IllegalStateException("The payments sample runs on PostgreSQL or on MariaDB (with"
					+ " MariaDB Connector/J and the profile mariadb), not on " + product);
		};
	}

}
