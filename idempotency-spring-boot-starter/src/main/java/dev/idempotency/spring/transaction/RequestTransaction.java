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
import java.sql.SQLException;
import java.util.Objects;

import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.engine.CompletionOutcome;
import dev.idempotency.core.engine.Decision;
import dev.idempotency.core.engine.Execution;
import dev.idempotency.core.store.IdempotencyStoreException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.TransactionTimedOutException;

/**
 * The transaction of one request to a transactional endpoint: begun by
 * {@link RequestTransactions} before the key is claimed, joined by the store's claim and
 * completion and by the handler's own transactional work, and ended here before the
 * response goes out, by {@link #complete(Execution, StoredResponse)} when the handler
 * produced a response, or by {@link #rollback()}.
 * <p>
 * It is always a new transaction ({@code PROPAGATION_REQUIRES_NEW}): a transaction that
 * some earlier filter began is suspended, so that the commit here is the real one and the
 * response never reaches the client before it. While it is open, the store operations of
 * the thread join it ({@link TransactionalClaims}).
 * <p>
 * Every way the request can end is one {@link Ending}; docs/stores/postgresql.md lists
 * them with what the client is answered. Not thread-safe: used on the request's thread
 * only.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class RequestTransaction {

	private static final Log logger = LogFactory.getLog(RequestTransaction.class);

	private final PlatformTransactionManager manager;

	private final TransactionStatus status;

	private final TransactionalClaims.Scope claims;

	private boolean ended;

	RequestTransaction(PlatformTransactionManager manager, TransactionStatus status, TransactionalClaims.Scope claims) {
		this.manager = manager;
		this.status = status;
		this.claims = claims;
	}

	/**
	 * End the transaction with the handler's response: store it and commit, unless the
	 * transaction can no longer commit (the handler's own work marked it rollback-only,
	 * or a statement of the handler failed), in which case it is rolled back with the
	 * claim, and nothing of the request persists.
	 * @param execution the request's execution, still open
	 * @param response the response to store
	 * @return how the request ended
	 */
	public Ending complete(Execution execution, StoredResponse response) {
		Objects.requireNonNull(execution, "'execution' must not be null");
		if (this.status.isRollbackOnly()) {
			// the handler's transactional work failed and marked the transaction: its
			// response describes work that will not persist, so it is not stored
			execution.release();
			rollback();
			return Ending.rolledBack("the handler's transaction was marked rollback-only", null);
		}
		CompletionOutcome outcome = execution.complete(response);
		if (outcome == CompletionOutcome.STORED) {
			return commit();
		}
		rollback();
		return switch (outcome) {
			// the handler's own answer that a retry should run it again
			case RELEASED -> Ending.RELEASED;
			case FENCED -> Ending.rolledBack("another request took the key over", null);
			default -> {
				IdempotencyStoreException failure = execution.failure().orElse(null);
				if (failure != null && isConnectionFailure(failure)) {
					yield Ending.connectionLost(failure);
				}
				if (failure != null && isTimeout(failure)) {
					yield Ending.rolledBack("it ran past its time-out, "
							+ RequestTransactions.describeTimeout(execution.policy().lockTimeout()), failure);
				}
				yield Ending.rolledBack("its response could not be stored in the request's transaction"
						+ ((failure != null) ? " (" + failure.getMessage() + ")" : ""), failure);
			}
		};
	}

	// commit the stored response with the handler's work
	private Ending commit() {
		end();
		try {
			this.manager.commit(this.status);
			return Ending.COMMITTED;
		}
		catch (RuntimeException ex) {
			// a TransactionException, or the DataAccessException of a JDBC transaction
			// manager that translates the commit's SQLException
			if (isConnectionFailure(ex)) {
				logger.warn("A request's transaction lost its connection during the commit: whether it committed is"
						+ " unknown (a retry is answered with the stored response if it did, or runs the handler"
						+ " again)", ex);
				return new Ending(Ending.Kind.OUTCOME_UNKNOWN, ex.getMessage(), ex);
			}
			logger.warn("A request's transaction did not commit: nothing of it persisted", ex);
			// the reason reaches the client: the database's message (a constraint's key
			// values, say) stays in the log
			return Ending.rolledBack("its commit failed", ex);
		}
		finally {
			this.claims.close();
		}
	}

	/**
	 * End the transaction of a request that is answered without running its handler,
	 * before the answer is written: what the store wrote to decide (a takeover it
	 * scheduled, say) is committed; after a store failure, and before a fail-open handler
	 * runs, the transaction is rolled back.
	 * @param decision the engine's decision, anything but {@link Decision.Execute}
	 * @return {@code true} if the decision may be answered, {@code false} if what the
	 * store wrote could not be committed
	 */
	public boolean endBeforeAnswer(Decision decision) {
		if (decision instanceof Decision.Unavailable || decision instanceof Decision.Unprotected) {
			rollback();
			return true;
		}
		return commit().kind() == Ending.Kind.COMMITTED;
	}

	/**
	 * Roll the transaction back, unless it already ended.
	 */
	public void rollback() {
		if (this.ended) {
			return;
		}
		end();
		try {
			this.manager.rollback(this.status);
		}
		catch (TransactionException | DataAccessException ex) {
			// nothing was committed: a failed rollback leaves nothing behind either (a
			// connection that the database closed, MariaDB's idle_transaction_timeout
			// say,
			// fails it with the driver's socket error)
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
	public boolean isEnded() {
		return this.ended;
	}

	private void end() {
		if (this.ended) {
			throw new IllegalStateException("The request's transaction has already ended");
		}
		this.ended = true;
	}

	/**
	 * Return whether a failure is one of the connection to the database: an I/O error, a
	 * connection exception of SQLState class {@code 08}, or an error of the driver or the
	 * pool without a SQLState, such as the closed connection that a rollback after a
	 * failed commit finds. When it ends a commit, the {@code COMMIT} may have been
	 * applied by the server all the same; a failure that the server reported (a deferred
	 * constraint) or a transaction marked rollback-only rolled the transaction back.
	 * @param failure the failure
	 * @return {@code true} if the connection failed
	 */
	static boolean isConnectionFailure(Throwable failure) {
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

	private static boolean isTimeout(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof TransactionTimedOutException) {
				return true;
			}
		}
		return false;
	}

	/**
	 * How a request's transaction ended, and so what its client is answered.
	 *
	 * @param kind the kind of ending
	 * @param reason why the transaction did not commit, for the client and the log, or
	 * {@code null} when it did
	 * @param failure the exception behind it, if any
	 */
	public record Ending(Kind kind, @Nullable String reason, @Nullable Throwable failure) {

		static final Ending COMMITTED = new Ending(Kind.COMMITTED, null, null);

		static final Ending RELEASED = new Ending(Kind.RELEASED, null, null);

		static Ending rolledBack(String reason, @Nullable Throwable failure) {
			return new Ending(Kind.ROLLED_BACK, reason, failure);
		}

		static Ending connectionLost(Throwable failure) {
			return new Ending(Kind.CONNECTION_LOST, failure.getMessage(), failure);
		}

		/**
		 * Return whether the client is answered with the handler's own response: when it
		 * committed, when the handler's status was not storable, and when the transaction
		 * rolled back but the handler's answer was an error, which claims nothing that
		 * the rollback undid (a rejection such as {@code 422}, whose retry runs the
		 * handler again). A success whose work was rolled back is never sent.
		 * @param status the handler's status
		 * @return {@code true} to send the handler's response
		 */
		public boolean answersWithHandlerResponse(int status) {
			return switch (this.kind) {
				case COMMITTED, RELEASED -> true;
				case ROLLED_BACK, CONNECTION_LOST -> status >= 400;
				case OUTCOME_UNKNOWN -> false;
			};
		}

		/**
		 * The kinds of ending.
		 */
		public enum Kind {

			/**
			 * The response was stored and committed with the handler's work.
			 */
			COMMITTED,

			/**
			 * The handler's status is not storable: the transaction was rolled back and
			 * the key released.
			 */
			RELEASED,

			/**
			 * The transaction could not commit (marked rollback-only, a failed statement
			 * of the handler, a commit the database refused) and was rolled back: nothing
			 * persisted and the key is free.
			 */
			ROLLED_BACK,

			/**
			 * The connection to the database was lost before the commit: nothing
			 * persisted and the key is free.
			 */
			CONNECTION_LOST,

			/**
			 * The connection was lost during the commit: the transaction may have
			 * committed.
			 */
			OUTCOME_UNKNOWN

		}

	}

}
