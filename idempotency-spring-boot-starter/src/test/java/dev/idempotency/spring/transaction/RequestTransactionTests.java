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

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.sql.SQLException;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.transaction.UnexpectedRollbackException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link RequestTransaction#isConnectionFailure(Exception)}: which failures of
 * a commit may have committed all the same; and for the time-out that a rolled-back
 * request's problem names.
 *
 * @author Idempotency contributors
 */
class RequestTransactionTests {

	@Test
	void ioErrorDuringTheCommitLeavesTheOutcomeUnknown() {
		SQLException sent = new SQLException("An I/O error occurred while sending to the backend.", "08006",
				new SocketTimeoutException("Read timed out"));
		assertThat(RequestTransaction.isConnectionFailure(new TransactionSystemException("Could not commit", sent)))
			.isTrue();
		assertThat(RequestTransaction
			.isConnectionFailure(new DataAccessResourceFailureException("commit", new IOException("reset")))).isTrue();
	}

	@Test
	void closedConnectionFoundByTheRollbackAfterAFailedCommitLeavesTheOutcomeUnknown() {
		// what a pool reports once the commit broke the connection: no SQLState
		SQLException closed = new SQLException("Connection is closed");
		assertThat(
				RequestTransaction.isConnectionFailure(new TransactionSystemException("JDBC rollback failed", closed)))
			.isTrue();
		assertThat(RequestTransaction.isConnectionFailure(new TransactionSystemException("rollback",
				new SQLException("This connection has been closed.", "08003"))))
			.isTrue();
	}

	@Test
	void failureThatTheServerReportedRolledTheTransactionBack() {
		SQLException duplicate = new SQLException("duplicate key value violates unique constraint", "23505");
		assertThat(RequestTransaction.isConnectionFailure(new DuplicateKeyException("JDBC commit", duplicate)))
			.isFalse();
		assertThat(RequestTransaction.isConnectionFailure(new TransactionSystemException("Could not commit",
				new SQLException("could not serialize access", "40001"))))
			.isFalse();
	}

	@Test
	void transactionMarkedRollbackOnlyRolledBack() {
		assertThat(RequestTransaction.isConnectionFailure(new UnexpectedRollbackException("marked rollback-only")))
			.isFalse();
	}

	@Test
	void timeOutProblemNamesTheTimeOutAppliedNotTheLockTimeoutBelowTheFloor() {
		assertThat(RequestTransactions.timeout(Duration.ofMillis(4000))).isEqualTo(Duration.ofSeconds(5));
		assertThat(RequestTransactions.describeTimeout(Duration.ofMillis(4000)))
			.isEqualTo("5 s, the floor of a request's time-out (the policy's lock timeout is 4000 ms)");
		assertThat(RequestTransactions.describeTimeout(Duration.ofMillis(7200)))
			.isEqualTo("8 s, the policy's lock timeout of 7200 ms rounded up to whole seconds");
		assertThat(RequestTransactions.describeTimeout(Duration.ofSeconds(30)))
			.isEqualTo("30 s, the policy's lock timeout");
	}

}
