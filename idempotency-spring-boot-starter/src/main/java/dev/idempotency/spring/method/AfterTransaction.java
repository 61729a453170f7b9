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

import java.util.HashMap;
import java.util.Map;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.engine.CompletionOutcome;
import dev.idempotency.core.engine.Execution;
import dev.idempotency.spring.transaction.TransactionalClaims;
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
 *
 * @author Idempotency contributors
 */
final class AfterTransaction implements TransactionSynchronization {

	private final Execution execution;

	private final @Nullable StoredResponse outcome;

	private AfterTransaction(Execution execution, @Nullable StoredResponse outcome) {
		this.execution = execution;
		this.outcome = outcome;
	}

	/**
	 * End the execution in, or when, the transaction active on the thread ends, if there
	 * is one.
	 * @param execution the execution
	 * @param fingerprint the call's fingerprint, for a second call in the transaction
	 * @param outcome what to store, or {@code null} to release the key
	 * @return {@code false} if no transaction is active: the caller ends the execution
	 */
	static boolean end(Execution execution, RequestFingerprint fingerprint, @Nullable StoredResponse outcome) {
		if (!TransactionSynchronizationManager.isSynchronizationActive()
				|| !TransactionSynchronizationManager.isActualTransactionActive()) {
			return false;
		}
		if (execution.policy().transactional() && TransactionalClaims.isActive()) {
			// the claim is a row of the request's transaction: so is its outcome
			if (outcome == null) {
				execution.release();
			}
			else if (execution.complete(outcome) == CompletionOutcome.STORED) {
				Completions.current().put(execution.key(), new Completed(fingerprint, outcome));
			}
			return true;
		}
		TransactionSynchronizationManager.registerSynchronization(new AfterTransaction(execution, outcome));
		if (outcome != null) {
			Completions.current().put(execution.key(), new Completed(fingerprint, outcome));
		}
		return true;
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

	@Override
	public void afterCompletion(int status) {
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
	 * The outcomes of the calls that one transaction ended, by key: one of the
	 * transaction's synchronizations, so that a transaction suspended for a
	 * {@code REQUIRES_NEW} one keeps its own, and they go with it.
	 */
	private static final class Completions implements TransactionSynchronization {

		private final Map<IdempotencyKey, Completed> byKey = new HashMap<>();

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

		void put(IdempotencyKey key, Completed completed) {
			this.byKey.put(key, completed);
		}

		@Override
		public void afterCompletion(int status) {
			this.byKey.clear();
		}

	}

}
