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

import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.engine.Execution;
import org.jspecify.annotations.Nullable;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Ends the execution of a call made in a transaction when that transaction ends: its
 * outcome is stored once the transaction committed, and its key released if it rolled
 * back, so that a retry never replays work the database does not have. Until then the
 * execution's heartbeat keeps the key. Loaded only when {@code spring-tx} is present.
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
	 * End the execution when the transaction active on the thread ends, if there is one.
	 * @param execution the execution
	 * @param outcome what to store on commit, or {@code null} to release the key either
	 * way
	 * @return {@code false} if no transaction is active: the caller ends the execution
	 */
	static boolean defer(Execution execution, @Nullable StoredResponse outcome) {
		if (!TransactionSynchronizationManager.isSynchronizationActive()
				|| !TransactionSynchronizationManager.isActualTransactionActive()) {
			return false;
		}
		TransactionSynchronizationManager.registerSynchronization(new AfterTransaction(execution, outcome));
		return true;
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

}
