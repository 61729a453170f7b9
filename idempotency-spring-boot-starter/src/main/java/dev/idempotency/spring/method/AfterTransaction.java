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

package dev.idempotency.spring.method;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.engine.CompletionOutcome;
import dev.idempotency.core.engine.Execution;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.spring.transaction.TransactionalClaims;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Ends the execution of a call made in a transaction, so that a retry never replays work
 * the database does not have. Loaded only when {@code spring-tx} is present.
 * <ul>
 * <li>A call whose claim joined the transaction of a request to a transactional endpoint
 * (see {@link TransactionalClaims}) ends in that transaction, on its connection, before
 * its commit, as the request's own completion does: its outcome commits with the
 * handler's writes or rolls back with them, and no second connection is needed after the
 * commit.
 * <li>Any other call's outcome is stored once the transaction committed, and its key
 * released if it rolled back. Until then the execution's heartbeat keeps the key.
 * </ul>
 * Either way the transaction remembers the outcome of each key it ended, so that a second
 * call under the same key in the same transaction gets the first one's outcome (see
 * {@link #completed(IdempotencyKey)}) rather than find its own key in progress.
 * <p>
 * <b>Savepoints.</b> The transaction also remembers after which of its savepoints each
 * call ended (Spring tells its synchronizations of each savepoint it creates and of each
 * rollback to one: a {@code PROPAGATION_NESTED} transaction, or
 * {@link org.springframework.transaction.SavepointManager} used on a transaction status).
 * When the transaction rolls back to a savepoint, the calls that ended after it are
 * undone with their writes, at once: the transaction forgets their outcomes, a call whose
 * outcome was to be stored at the commit releases its key instead, and a call that ended
 * in a request's transaction releases what a store keeps of it outside the transaction
 * (the tiered store's fast copy of its claim), its record rolling back with the
 * savepoint. A savepoint released into its parent keeps them.
 *
 * @author Idempotency contributors
 */
final class AfterTransaction implements TransactionSynchronization {

	private static final Log logger = LogFactory.getLog(AfterTransaction.class);

	private final Execution execution;

	private final @Nullable StoredResponse outcome;

	// the transaction rolled back to a savepoint made before the call ended: the key
	// was released then, and the transaction's end has nothing left to do
	private boolean undone;

	private AfterTransaction(Execution execution, @Nullable StoredResponse outcome) {
		this.execution = execution;
		this.outcome = outcome;
	}

	/**
	 * End the execution in, or when, the transaction active on the thread ends, if there
	 * is one.
	 * @param store the engine's store, to release what it keeps outside the transaction
	 * of a call that the transaction undoes
	 * @param execution the execution
	 * @param fingerprint the call's fingerprint, for a second call in the transaction
	 * @param outcome what to store, or {@code null} to release the key
	 * @return {@code false} if no transaction is active: the caller ends the execution
	 */
	static boolean end(IdempotencyStore store, Execution execution, RequestFingerprint fingerprint,
			@Nullable StoredResponse outcome) {
		if (!TransactionSynchronizationManager.isSynchronizationActive()
				|| !TransactionSynchronizationManager.isActualTransactionActive()) {
			return false;
		}
		if (execution.policy().transactional() && TransactionalClaims.isActive()) {
			// the claim is a row of the request's transaction: so is its outcome
			if (outcome == null) {
				execution.release();
				return true;
			}
			Completed completed = (execution.complete(outcome) == CompletionOutcome.STORED)
					? new Completed(fingerprint, outcome) : null;
			Completions.current().ended(execution.key(), completed, () -> releaseQuietly(store, execution));
			return true;
		}
		AfterTransaction afterTransaction = new AfterTransaction(execution, outcome);
		TransactionSynchronizationManager.registerSynchronization(afterTransaction);
		Completed completed = (outcome != null) ? new Completed(fingerprint, outcome) : null;
		Completions.current().ended(execution.key(), completed, afterTransaction::undo);
		return true;
	}

	// a claim of the transactional mode whose savepoint is rolled back: its rows roll
	// back with it, but not what the store keeps elsewhere (the tiered store's fast
	// claim, which would otherwise be completed after the commit)
	private static void releaseQuietly(IdempotencyStore store, Execution execution) {
		try {
			store.release(execution.key(), execution.token());
		}
		catch (RuntimeException ex) {
			logger.warn("Could not release key '" + execution.key() + "' after its savepoint was rolled back: the"
					+ " store keeps it until its lease lapses", ex);
		}
	}

	/**
	 * Return the outcome that a call under the given key stored, or is to store, in the
	 * transaction active on the thread.
	 * @param key the key
	 * @return the outcome, or {@code null} if the transaction ended no call of that key
	 * (or none is active)
	 */
	static @Nullable Completed completed(IdempotencyKey key) {
		if (!TransactionSynchronizationManager.isSynchronizationActive()
				|| !TransactionSynchronizationManager.isActualTransactionActive()) {
			return null;
		}
		Completions completions = Completions.find();
		return (completions != null) ? completions.byKey.get(key) : null;
	}

	// the transaction rolled back to a savepoint made before the call ended: the call's
	// writes are gone, nothing of it can commit any more, so its key is released now
	private void undo() {
		if (this.undone) {
			return;
		}
		this.undone = true;
		try {
			this.execution.close();
		}
		catch (RuntimeException ex) {
			// never thrown into the rollback to the savepoint
			logger.warn("Could not release key '" + this.execution.key() + "' after its savepoint was rolled back", ex);
		}
	}

	@Override
	public void afterCompletion(int status) {
		if (this.undone) {
			return;
		}
		if (status == STATUS_COMMITTED && this.outcome != null) {
			this.execution.complete(this.outcome);
		}
		else if (status == STATUS_ROLLED_BACK && this.execution.policy().transactional()) {
			// the claim joined the transaction (see TransactionalClaims) and vanished
			// with it
			this.execution.rolledBack();
		}
		else {
			// rolled back, or unknown: nothing to replay; a retry runs the call again
			this.execution.close();
		}
	}

	/**
	 * The outcome of a call ended in the current transaction.
	 *
	 * @param fingerprint the call's fingerprint
	 * @param response its stored form
	 */
	record Completed(RequestFingerprint fingerprint, StoredResponse response) {

	}

	/**
	 * The calls that one transaction ended, and the outcomes it remembers by key: one of
	 * the transaction's synchronizations, so that a transaction suspended for a
	 * {@code REQUIRES_NEW} one keeps its own, and they go with it. Each call is marked
	 * with the number of savepoints the transaction had made when it ended; a rollback to
	 * a savepoint undoes the calls marked with its number or a later one. A savepoint
	 * made before the first call of the transaction ended, which this synchronization did
	 * not see made, comes before all of them.
	 */
	private static final class Completions implements TransactionSynchronization {

		private final Map<IdempotencyKey, Completed> byKey = new HashMap<>();

		private final List<Ended> ended = new ArrayList<>();

		private final Map<Object, Long> savepoints = new IdentityHashMap<>();

		private long savepointsMade;

		static @Nullable Completions find() {
			for (TransactionSynchronization synchronization : TransactionSynchronizationManager.getSynchronizations()) {
				if (synchronization instanceof Completions completions) {
					return completions;
				}
			}
			return null;
		}

		static Completions current() {
			Completions completions = find();
			if (completions == null) {
				completions = new Completions();
				TransactionSynchronizationManager.registerSynchronization(completions);
			}
			return completions;
		}

		void ended(IdempotencyKey key, @Nullable Completed completed, Runnable undo) {
			if (completed != null) {
				this.byKey.put(key, completed);
			}
			this.ended.add(new Ended(key, completed, undo, this.savepointsMade));
		}

		@Override
		public void savepoint(Object savepoint) {
			this.savepointsMade++;
			this.savepoints.put(savepoint, this.savepointsMade);
		}

		@Override
		public void savepointRollback(Object savepoint) {
			// unseen: made before this synchronization was registered, so before every
			// call
			long made = this.savepoints.getOrDefault(savepoint, 0L);
			for (Iterator<Ended> calls = this.ended.iterator(); calls.hasNext();) {
				Ended call = calls.next();
				if (call.savepointsMade() >= made) {
					calls.remove();
					if (call.completed() != null && this.byKey.get(call.key()) == call.completed()) {
						this.byKey.remove(call.key());
					}
					call.undo().run();
				}
			}
		}

		@Override
		public void afterCompletion(int status) {
			this.byKey.clear();
			this.ended.clear();
			this.savepoints.clear();
		}

	}

	/**
	 * A call that the transaction ended.
	 *
	 * @param key its key
	 * @param completed the outcome the transaction remembers, or {@code null}
	 * @param undo what undoes it when the transaction rolls back to a savepoint made
	 * before it ended
	 * @param savepointsMade how many savepoints the transaction had made when it ended
	 */
	private record Ended(IdempotencyKey key, @Nullable Completed completed, Runnable undo, long savepointsMade) {

	}

}
