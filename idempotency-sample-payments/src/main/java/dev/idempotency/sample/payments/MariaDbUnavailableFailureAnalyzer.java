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

import java.sql.SQLException;
import java.sql.SQLInvalidAuthorizationSpecException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLTransientConnectionException;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.CannotGetJdbcConnectionException;

/**
 * Explains a start-up on MariaDB (the profile {@code mariadb}) that failed because no
 * MariaDB server took the connection, and says how to provide one: there is no embedded
 * MariaDB to fall back to. Failures on other databases are left to Spring Boot.
 *
 * @author Idempotency contributors
 */
class MariaDbUnavailableFailureAnalyzer implements FailureAnalyzer {

	private final Environment environment;

	MariaDbUnavailableFailureAnalyzer(Environment environment) {
		this.environment = environment;
	}

	@Override
	public @Nullable FailureAnalysis analyze(Throwable failure) {
		String url = this.environment.getProperty("spring.datasource.url", "");
		if (!url.startsWith("jdbc:mariadb:") || !isConnectionFailure(failure)) {
			return null;
		}
		String server = (url.indexOf('?') >= 0) ? url.substring(0, url.indexOf('?')) : url;
		String description = "The payments sample could not connect to MariaDB at " + server + " as '"
				+ this.environment.getProperty("spring.datasource.username", "") + "': " + driverMessage(failure);
		String action = """
				Start a MariaDB server (10.7 or later) there, for example with
				    docker run -d -p 3306:3306 -e MARIADB_ALLOW_EMPTY_ROOT_PASSWORD=1 mariadb:10.11
				or point the sample at yours with SPRING_DATASOURCE_URL (jdbc:mariadb://host:port/database),
				SPRING_DATASOURCE_USERNAME and SPRING_DATASOURCE_PASSWORD. There is no embedded MariaDB:
				without the profile mariadb the sample runs on PostgreSQL (README.md).""";
		return new FailureAnalysis(description, action, failure);
	}

	// what the driver said: the message of the innermost SQLException
	private static @Nullable String driverMessage(Throwable failure) {
		String message = failure.getMessage();
		for (Throwable cause = failure; cause != null; cause = (cause.getCause() != cause) ? cause.getCause() : null) {
			if (cause instanceof SQLException) {
				message = cause.getMessage();
			}
		}
		return message;
	}

	private static boolean isConnectionFailure(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = (cause.getCause() != cause) ? cause.getCause() : null) {
			if (cause instanceof CannotGetJdbcConnectionException || cause instanceof SQLNonTransientConnectionException
					|| cause instanceof SQLTransientConnectionException
					|| cause instanceof SQLInvalidAuthorizationSpecException) {
				return true;
			}
		}
		return false;
	}

}
