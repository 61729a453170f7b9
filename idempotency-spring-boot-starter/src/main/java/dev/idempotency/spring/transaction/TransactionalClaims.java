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

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Marks the transaction whose store operations join it: the transactional mode, in which
 * a request's durable claim, the handler's own writes and the stored response commit
 * together.
 * <p>
 * Outside of it the PostgreSQL store runs each operation on a connection of its own and
 * never joins a transaction of the application (a claim must be visible to every instance
 * at once). Inside it, opened right after the request's transaction began, the store runs
 * its statements on that transaction's connection, and the tiered store completes its
 * fast tier only after the commit.
 * <p>
 * The mark belongs to one transaction, not to the thread: it is a resource of Spring's
 * {@link TransactionSynchronizationManager} that names the transaction's connection, and
 * it holds only while that connection is the one bound to the thread and the transaction
 * has not begun to complete. So a {@code REQUIRES_NEW} transaction inside the request
 * (whose connection is another) does not join, nor does any store operation run from the
 * transaction's completion callbacks (an {@code AFTER_COMMIT} event listener): those run
 * on connections of their own, as outside the mode. An idempotent method called inside
 * the transaction completes its key in it, before the commit, so that it needs no such
 * connection.
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
	 * Make the store operations of the transaction active on the current thread join it,
	 * until it begins to complete or the returned scope is closed.
	 * @param dataSource the store's data source, of which the transaction holds a
	 * connection
	 * @return the scope to close, on this thread, when the transaction has ended
	 * @throws IllegalStateException if no transaction with synchronization is active on
	 * the thread, it holds no connection of the data source, or the thread already joins
	 * one
	 */
	public static Scope open(DataSource dataSource) {
		if (!TransactionSynchronizationManager.isActualTransactionActive()
				|| !TransactionSynchronizationManager.isSynchronizationActive()) {
			throw new IllegalStateException("Transactional claims need a transaction active on the thread");
		}
		// the connection holder that a DataSourceTransactionManager (or JPA's) bound:
		// held as an Object, so that the class loads without spring-jdbc
		Object holder = TransactionSynchronizationManager.getResource(dataSource);
		if (holder == null) {
			throw new IllegalStateException(
					"Transactional claims need the transaction active on the thread to hold a connection of the"
							+ " store's DataSource");
		}
		Scope scope = new Scope(dataSource, holder, System.nanoTime());
		TransactionSynchronizationManager.bindResource(MARK, scope);
		TransactionSynchronizationManager.registerSynchronization(scope);
		return scope;
	}

	/**
	 * Return whether the store operations of the current thread join its transaction.
	 * @return {@code true} while a scope is {@link #open(DataSource) open}, its
	 * transaction's connection is the one bound to the thread, and the transaction has
	 * not begun to complete
	 */
	public static boolean isActive() {
		return current() != null;
	}

	/**
	 * Return when the transaction that the current thread joins began to be joined, by
	 * {@link System#nanoTime()}: no later than the transaction's start by the database's
	 * clock, from which PostgreSQL measures the lifetime of the records the transaction
	 * writes.
	 * @return the time the scope was opened
	 * @throws IllegalStateException if the thread joins no transaction
	 */
	public static long openedAt() {
		Scope scope = current();
		if (scope == null) {
			throw new IllegalStateException("The thread joins no transaction");
		}
		return scope.openedAt;
	}

	private static @Nullable Scope current() {
		// the flag first: outside a transaction, the common case, it answers alone
		if (!TransactionSynchronizationManager.isActualTransactionActive()) {
			return null;
		}
		Object bound = TransactionSynchronizationManager.getResource(MARK);
		return (bound instanceof Scope scope && scope.isJoinable()) ? scope : null;
	}

	/**
	 * The time during which the store operations of one transaction join it.
	 */
	public static final class Scope implements AutoCloseable, TransactionSynchronization {

		private final DataSource dataSource;

		private final Object connection;

		private final long openedAt;

		private volatile boolean completing;

		private volatile boolean closed;

		private Scope(DataSource dataSource, Object connection, long openedAt) {
			this.dataSource = dataSource;
			this.connection = connection;
			this.openedAt = openedAt;
		}

		private boolean isJoinable() {
			return !this.completing && !this.closed
					&& TransactionSynchronizationManager.getResource(this.dataSource) == this.connection;
		}

		/**
		 * Stop joining once the transaction begins to complete: what runs after that, in
		 * its commit or rollback callbacks, cannot be part of it.
		 * @see TransactionSynchronization#beforeCompletion()
		 */
		@Override
		public void beforeCompletion() {
			this.completing = true;
		}

		/**
		 * Close the scope when its transaction has ended.
		 * @param status the completion status
		 */
		@Override
		public void afterCompletion(int status) {
			close();
		}

		/**
		 * Stop joining. Closing twice has no effect.
		 */
		@Override
		public void close() {
			if (!this.closed) {
				this.closed = true;
				if (TransactionSynchronizationManager.getResource(MARK) == this) {
					TransactionSynchronizationManager.unbindResource(MARK);
				}
			}
		}

	}

}
