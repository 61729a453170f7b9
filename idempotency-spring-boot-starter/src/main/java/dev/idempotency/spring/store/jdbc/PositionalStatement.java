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
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

import org.springframework.jdbc.core.namedparam.NamedParameterUtils;

/**
 * A statement written with named parameters, turned once into JDBC text and bound by
 * position on a plain {@link PreparedStatement}.
 * <p>
 * The store runs the statements of every first request (the claim and the completion)
 * this way, on the operation's connection
 * ({@link JdbcOperationRunner.Operation#prepare}), instead of through
 * {@link org.springframework.jdbc.core.simple.JdbcClient}: on plain JDBC the
 * application's CPU time per tiered first request fell from 342 to 317 us and its
 * throughput rose by 7% (docs/benchmarks/restructuring.md, "Plain JDBC for the claim and
 * the completion"). Every other statement runs through the client. The SQL stays the same
 * named-parameter text as the store's other statements; Spring's
 * {@link NamedParameterUtils} parses it, once, when the statement is built.
 *
 * @author Idempotency contributors
 */
final class PositionalStatement {

	private final String sql;

	// for each placeholder, in order, the index of its value among the declared
	// parameters: a parameter named twice in the text is bound twice
	private final int[] slots;

	private final int parameterCount;

	/**
	 * Build a statement from its named-parameter text.
	 * @param namedSql the SQL text with {@code :name} parameters
	 * @param parameters the names of its parameters, in the order
	 * {@link #prepare(Connection, Object...)} takes their values
	 * @throws IllegalArgumentException if the text names a parameter not declared, or
	 * does not use a declared one
	 */
	PositionalStatement(String namedSql, String... parameters) {
		Map<String, Integer> indexes = new HashMap<>();
		for (int i = 0; i < parameters.length; i++) {
			if (indexes.put(parameters[i], i) != null) {
				throw new IllegalArgumentException("Parameter '" + parameters[i] + "' is declared twice");
			}
		}
		Object[] order;
		try {
			order = NamedParameterUtils.buildValueArray(namedSql, indexes);
		}
		catch (RuntimeException ex) {
			throw new IllegalArgumentException("Statement names a parameter that is not declared: " + ex.getMessage(),
					ex);
		}
		this.slots = new int[order.length];
		boolean[] used = new boolean[parameters.length];
		for (int i = 0; i < order.length; i++) {
			this.slots[i] = (Integer) order[i];
			used[this.slots[i]] = true;
		}
		for (int i = 0; i < used.length; i++) {
			if (!used[i]) {
				throw new IllegalArgumentException("Parameter '" + parameters[i] + "' is not used by the statement");
			}
		}
		this.sql = NamedParameterUtils.parseSqlStatementIntoString(namedSql);
		this.parameterCount = parameters.length;
	}

	/**
	 * Return the JDBC text of the statement, with a {@code ?} for each parameter.
	 * @return the JDBC text
	 */
	String sql() {
		return this.sql;
	}

	/**
	 * Prepare the statement on the given connection with the given values bound.
	 * @param connection the connection
	 * @param values the values of the declared parameters, in their declared order, never
	 * {@code null}
	 * @return the prepared statement, for the caller to run and close
	 * @throws SQLException if the driver fails
	 */
	PreparedStatement prepare(Connection connection, Object... values) throws SQLException {
		if (values.length != this.parameterCount) {
			throw new IllegalArgumentException(
					"Statement takes " + this.parameterCount + " values, but " + values.length + " were given");
		}
		PreparedStatement statement = connection.prepareStatement(this.sql);
		try {
			for (int i = 0; i < this.slots.length; i++) {
				statement.setObject(i + 1, Objects.requireNonNull(values[this.slots[i]], "values must not be null"));
			}
			return statement;
		}
		catch (SQLException | RuntimeException ex) {
			try {
				statement.close();
			}
			catch (SQLException closeFailure) {
				ex.addSuppressed(closeFailure);
			}
			throw ex;
		}
	}

}
