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

package dev.idempotency.spring.web;

import java.io.IOException;
import java.sql.SQLException;

import dev.idempotency.core.store.IdempotencyStoreException;
import dev.idempotency.spring.store.TransactionalClaims;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.DefaultTransactionDefinition;

/**
 * The transaction of one request to a transactional endpoint: begun by the filter before
 * the key is claimed, joined by the store's claim and completion and by the handler's own
 * transactional work, and ended by the filter before the response goes out.
 * <p>
 * It is always a new transaction ({@code PROPAGATION_REQUIRES_NEW}): a transaction that
 * some earlier filter began is suspended, so that the commit here is the real one and the
 * response never reaches the client before it. While it is open, the store operations of
 * the thread join it ({@link TransactionalClaims}).
 * <p>
 * Only this class of the filter's uses Spring's transaction API, so that the filter runs
 * without {@code spring-tx} when no policy is transactional. Not thread-safe: used on the
 * request's thread only.
 *
 * @author Idempotency contributors
 */
final class RequestTransaction {

	private static final TransactionDefinition DEFINITION = newDefinition();

	// under the filter's name, where applications look for what the filter reports
	private static final Log logger = LogFactory.getLog(IdempotencyFilter.class);

	private final PlatformTransactionManager manager;

	private final TransactionStatus status;

	private final TransactionalClaims.Scope claims;

	private boolean ended;

	private RequestTransaction(PlatformTransactionManager manager, TransactionStatus status,
			TransactionalClaims.Scope claims) {
		this.manager = manager;
		this.status = status;
		this.claims = claims;
	}

	/**
	 * Begin the transaction of a request.
	 * @param manager the transaction manager of the store's data source
	 * @return the open transaction
	 * @throws IdempotencyStoreException if no transaction could be begun (for example, no
	 * connection could be had from the pool): the store cannot be reached
	 */
	static RequestTransaction begin(PlatformTransactionManager manager) {
		TransactionStatus status;
		try {
			status = manager.getTransaction(DEFINITION);
		}
		catch (TransactionException ex) {
			throw new IdempotencyStoreException(
					"Could not begin the transaction of a request to a transactional endpoint: " + ex.getMessage(), ex);
		}
		try {
			return new RequestTransaction(manager, status, TransactionalClaims.open());
		}
		catch (RuntimeException ex) {
			manager.rollback(status);
			throw ex;
		}
	}

	/**
	 * Commit the transaction.
	 * @return {@code null} once committed, else why it could not be: the transaction was
	 * rolled back (a constraint checked at commit, a lost connection, a transaction
	 * marked rollback-only) and nothing of it persisted, or, when the connection failed
	 * during the commit itself, its outcome is unknown (a retry then finds the key either
	 * free or completed: both are safe)
	 */
	@Nullable Exception commit() {
		end();
		try {
			this.manager.commit(this.status);
			return null;
		}
		catch (RuntimeException ex) {
			// a TransactionException, or the DataAccessException of a JDBC transaction
			// manager that translates the commit's SQLException
			return ex;
		}
		finally {
			this.claims.close();
		}
	}

	/**
	 * Return whether a failure of {@link #commit()} leaves the outcome of the transaction
	 * unknown: the connection failed (an I/O error, a connection exception of SQLState
	 * class {@code 08}, or an error of the driver or the pool without a SQLState, such as
	 * the closed connection that a rollback after a failed commit finds), so the
	 * {@code COMMIT} may have been applied by the server all the same. A failure that the
	 * server reported (a deferred constraint) or a transaction marked rollback-only
	 * rolled the transaction back.
	 * @param failure what {@link #commit()} returned
	 * @return {@code true} if the transaction may have committed
	 */
	static boolean isOutcomeUnknown(Exception failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof IOException) {
				return true;
			}
			if (cause instanceof SQLException sql
					&& (sql.getSQLState() == null || sql.getSQLState().startsWith("08"))) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Roll the transaction back, unless it already ended.
	 */
	void rollback() {
		if (this.ended) {
			return;
		}
		end();
		try {
			this.manager.rollback(this.status);
		}
		catch (TransactionException ex) {
			// nothing was committed: a failed rollback leaves nothing behind either
			logger.debug("Rollback of a request's transaction failed", ex);
		}
		finally {
			this.claims.close();
		}
	}

	/**
	 * Return whether the transaction was committed or rolled back.
	 * @return {@code true} once ended
	 */
	boolean isEnded() {
		return this.ended;
	}

	private void end() {
		if (this.ended) {
			throw new IllegalStateException("The request's transaction has already ended");
		}
		this.ended = true;
	}

	private static TransactionDefinition newDefinition() {
		DefaultTransactionDefinition definition = new DefaultTransactionDefinition(
				TransactionDefinition.PROPAGATION_REQUIRES_NEW);
		definition.setName("idempotent request");
		return definition;
	}

}
