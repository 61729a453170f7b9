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

package dev.idempotency.spring.transaction;

import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * What the transactional-mode tests read back from the database: the rows a handler wrote
 * under a key, and the state of the key's record.
 *
 * @author Idempotency contributors
 */
final class LedgerRows {

	private static final Set<String> TABLES = Set.of("ledger_entry", "audit_entry", "jpa_entry", "nested_entry");

	private final JdbcTemplate jdbc;

	private final TransactionalTestDatabase database;

	/**
	 * Read the rows of a PostgreSQL database.
	 * @param jdbc the test's template
	 */
	LedgerRows(JdbcTemplate jdbc) {
		this(jdbc, TransactionalTestDatabase.POSTGRESQL);
	}

	/**
	 * Read the rows of the given database.
	 * @param jdbc the test's template
	 * @param database the database the template is on
	 */
	LedgerRows(JdbcTemplate jdbc, TransactionalTestDatabase database) {
		this.jdbc = jdbc;
		this.database = database;
	}

	/**
	 * Count the rows of a table written under a key.
	 * @param table one of the tests' tables
	 * @param key the idempotency key
	 * @return the number of rows
	 */
	long count(String table, String key) {
		if (!TABLES.contains(table)) {
			throw new IllegalArgumentException("Not a table of the tests: " + table);
		}
		Long count = this.jdbc.queryForObject("SELECT count(*) FROM " + table + " WHERE idem_key = ?", Long.class, key);
		return (count != null) ? count : 0;
	}

	/**
	 * Return the status of the key's live record.
	 * @param key the idempotency key
	 * @return {@code P} or {@code C}, or {@code null} without a live record
	 */
	@Nullable String recordStatus(String key) {
		List<String> statuses = this.jdbc.queryForList(this.database.recordStatusQuery(), String.class, key);
		return statuses.isEmpty() ? null : statuses.get(0);
	}

}
