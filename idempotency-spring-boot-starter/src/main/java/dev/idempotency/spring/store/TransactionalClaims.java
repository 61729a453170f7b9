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

package dev.idempotency.spring.store;

import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Marks the thread whose store operations join the application's transaction: the
 * transactional mode, in which a request's durable claim, the handler's own writes and
 * the stored response commit together.
 * <p>
 * Outside of it the PostgreSQL store runs each operation on a connection of its own and
 * never joins a transaction of the application (a claim must be visible to every instance
 * at once). Inside it, begun by the filter right after it began the request's
 * transaction, the store runs its statements on the transaction's connection, and the
 * tiered store completes its fast tier only after the commit. The mark is a resource of
 * Spring's {@link TransactionSynchronizationManager}, so it holds only while a
 * transaction is active on the thread.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class TransactionalClaims {

	private static final Object MARK = new Object() {

		@Override
		public String toString() {
			return "idempotency transactional claims";
		}

	};

	private TransactionalClaims() {
	}

	/**
	 * Make the store operations of the current thread join the transaction active on it,
	 * until the returned scope is closed.
	 * @return the scope to close, on this thread, when the transaction has ended
	 * @throws IllegalStateException if no transaction is active on the thread, or the
	 * thread already joins one
	 */
	public static Scope open() {
		if (!TransactionSynchronizationManager.isActualTransactionActive()) {
			throw new IllegalStateException("Transactional claims need a transaction active on the thread");
		}
		TransactionSynchronizationManager.bindResource(MARK, System.nanoTime());
		return new Scope();
	}

	/**
	 * Return whether the store operations of the current thread join its transaction.
	 * @return {@code true} while a scope is {@link #open() open} and a transaction active
	 */
	public static boolean isActive() {
		// the flag first: outside a transaction, the common case, it answers alone
		return TransactionSynchronizationManager.isActualTransactionActive()
				&& TransactionSynchronizationManager.hasResource(MARK);
	}

	/**
	 * Return when the current thread began to join its transaction, by
	 * {@link System#nanoTime()}: no later than the transaction's start by the database's
	 * clock, from which PostgreSQL measures the lifetime of the records the transaction
	 * writes.
	 * @return the time the scope was opened
	 * @throws IllegalStateException if the thread joins no transaction
	 */
	public static long openedAt() {
		if (!(TransactionSynchronizationManager.getResource(MARK) instanceof Long openedAt)) {
			throw new IllegalStateException("The thread joins no transaction");
		}
		return openedAt;
	}

	/**
	 * The time during which the store operations of a thread join its transaction.
	 */
	public static final class Scope implements AutoCloseable {

		private boolean closed;

		private Scope() {
		}

		/**
		 * Stop joining. Closing twice has no effect.
		 */
		@Override
		public void close() {
			if (!this.closed) {
				this.closed = true;
				TransactionSynchronizationManager.unbindResourceIfPossible(MARK);
			}
		}

	}

}
