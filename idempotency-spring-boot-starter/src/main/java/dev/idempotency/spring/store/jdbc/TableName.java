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

import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * A validated, optionally schema-qualified, unquoted SQL identifier naming the records
 * table. Validation is what makes it safe to splice the name into SQL text.
 *
 * @param qualifiedName the name as written in SQL, lower case
 * @param schema the schema, or {@code null} for the connection's current schema
 * @param simpleName the table name without its schema, lower case
 * @author Idempotency contributors
 */
record TableName(String qualifiedName, @Nullable String schema, String simpleName) {

	static final String DEFAULT = "idempotency_record";

	// PostgreSQL truncates identifiers to 63 bytes: refuse longer ones rather than
	// silently addressing another table
	private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");

	static TableName parse(String name) {
		Objects.requireNonNull(name, "'tableName' must not be null");
		int dot = name.indexOf('.');
		String schema = (dot >= 0) ? name.substring(0, dot) : null;
		String table = (dot >= 0) ? name.substring(dot + 1) : name;
		if ((schema != null && !IDENTIFIER.matcher(schema).matches()) || !IDENTIFIER.matcher(table).matches()) {
			throw new IllegalArgumentException("'tableName' must be an unquoted SQL identifier of at most 63 "
					+ "characters (letters, digits, '_'), optionally qualified by a schema, not '" + name + "'");
		}
		String lowerSchema = (schema != null) ? schema.toLowerCase(Locale.ROOT) : null;
		String lowerTable = table.toLowerCase(Locale.ROOT);
		return new TableName((lowerSchema != null) ? lowerSchema + "." + lowerTable : lowerTable, lowerSchema,
				lowerTable);
	}

	String substitute(String sqlTemplate) {
		return sqlTemplate.replace("%TABLE%", this.qualifiedName);
	}

	@Override
	public String toString() {
		return this.qualifiedName;
	}

}
