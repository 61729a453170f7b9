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

import org.junit.jupiter.api.Test;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link ProblemHandler}.
 *
 * @author Idempotency contributors
 */
class ProblemHandlerTests {

	private final ProblemHandler handler = new ProblemHandler();

	@Test
	void lostDatabaseIsATransientProblemWithRetryAfter() {
		ResponseEntity<ProblemDetail> response = this.handler.databaseUnavailable(
				new DataAccessResourceFailureException("connection reset", new SQLException("I/O error")));
		assertThat(response.getStatusCode()).isEqualTo(HttpStatus.SERVICE_UNAVAILABLE);
		assertThat(response.getHeaders().getFirst(HttpHeaders.RETRY_AFTER)).isEqualTo("1");
		ProblemDetail problem = response.getBody();
		assertThat(problem).isNotNull();
		assertThat(problem.getStatus()).isEqualTo(503);
		assertThat(problem.getType()).hasToString(ProblemHandler.TYPE_BASE + "database-unavailable");
		assertThat(problem.getDetail()).doesNotContain("connection reset");
	}

	@Test
	void gatewayFaultKeepsItsStatus() {
		ProblemDetail problem = this.handler.gatewayFailed(new GatewayException(504));
		assertThat(problem.getStatus()).isEqualTo(504);
		assertThat(problem.getType()).hasToString(ProblemHandler.TYPE_BASE + "gateway-failure");
	}

}
