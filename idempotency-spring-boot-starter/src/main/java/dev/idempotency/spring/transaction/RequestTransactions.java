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

import java.time.Duration;
import java.util.Objects;

import javax.sql.DataSource;

import dev.idempotency.core.store.IdempotencyStoreException;

import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.DefaultTransactionDefinition;

/**
 * Begins the transactions of requests to transactional endpoints, on the transaction
 * manager of the store's {@code DataSource}.
 * <p>
 * Each is a new transaction ({@code PROPAGATION_REQUIRES_NEW}) with a
 * {@link #timeout(Duration) time-out} derived from the policy's lock timeout: statements
 * that the handler runs through Spring's JDBC support after that time fail (Spring's
 * {@code TransactionTimedOutException}), and the request ends rolled back; the PostgreSQL
 * store's claim also has PostgreSQL end the session once the transaction has sat idle
 * that long. So a hung handler cannot hold its key and a pooled connection for ever.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public final class RequestTransactions {

	/**
	 * The shortest time-out of a request's transaction: below it, a request that is
	 * merely slow (the first one after start-up, a pause of the JVM on a busy machine)
	 * would be rolled back.
	 */
	public static final Duration MIN_TIMEOUT = Duration.ofSeconds(5);

	private final PlatformTransactionManager manager;

	private final DataSource dataSource;

	/**
	 * Create an instance.
	 * @param manager the transaction manager of the store's data source
	 * @param dataSource the store's data source
	 */
	public RequestTransactions(PlatformTransactionManager manager, DataSource dataSource) {
		this.manager = Objects.requireNonNull(manager, "'manager' must not be null");
		this.dataSource = Objects.requireNonNull(dataSource, "'dataSource' must not be null");
	}

	/**
	 * Begin the transaction of a request, which the store's operations on the thread join
	 * until it ends.
	 * @param lockTimeout the policy's lock timeout, from which the transaction's
	 * {@link #timeout(Duration) time-out} is derived
	 * @return the open transaction
	 * @throws IdempotencyStoreException if no transaction could be begun (for example, no
	 * connection could be had from the pool): the store cannot be reached
	 */
	public RequestTransaction begin(Duration lockTimeout) {
		TransactionStatus status;
		try {
			status = this.manager.getTransaction(definition(lockTimeout));
		}
		catch (TransactionException ex) {
			throw new IdempotencyStoreException(
					"Could not begin the transaction of a request to a transactional endpoint: " + ex.getMessage(), ex);
		}
		try {
			return new RequestTransaction(this.manager, status, TransactionalClaims.open(this.dataSource));
		}
		catch (RuntimeException ex) {
			this.manager.rollback(status);
			throw ex;
		}
	}

	/**
	 * Return the transaction manager.
	 * @return the manager
	 */
	public PlatformTransactionManager getTransactionManager() {
		return this.manager;
	}

	/**
	 * Return the time-out of the transaction of a request: the policy's lock timeout (the
	 * time a crashed owner holds its key in the default mode), at least
	 * {@link #MIN_TIMEOUT}, rounded up to whole seconds.
	 * @param lockTimeout the policy's lock timeout
	 * @return the time-out
	 */
	public static Duration timeout(Duration lockTimeout) {
		Duration timeout = (lockTimeout.compareTo(MIN_TIMEOUT) < 0) ? MIN_TIMEOUT : lockTimeout;
		return Duration.ofSeconds(timeout.getSeconds() + ((timeout.getNano() > 0) ? 1 : 0));
	}

	/**
	 * Describe the time-out of the transaction of a request as {@link #timeout(Duration)}
	 * derives it, for a problem or a log line: the time-out applied and where it comes
	 * from.
	 * @param lockTimeout the policy's lock timeout
	 * @return for example {@code "5 s, the floor of a request's time-out (the policy's
	 * lock timeout is 4000 ms)"}
	 */
	static String describeTimeout(Duration lockTimeout) {
		long applied = timeout(lockTimeout).getSeconds();
		if (lockTimeout.compareTo(MIN_TIMEOUT) < 0) {
			return applied + " s, the floor of a request's time-out (the policy's lock timeout is "
					+ lockTimeout.toMillis() + " ms)";
		}
		if (lockTimeout.getNano() > 0) {
			return applied + " s, the policy's lock timeout of " + lockTimeout.toMillis()
					+ " ms rounded up to whole seconds";
		}
		return applied + " s, the policy's lock timeout";
	}

	private static TransactionDefinition definition(Duration lockTimeout) {
		DefaultTransactionDefinition definition = new DefaultTransactionDefinition(
				TransactionDefinition.PROPAGATION_REQUIRES_NEW);
		definition.setName("idempotent request");
		definition.setTimeout((int) Math.min(Integer.MAX_VALUE, timeout(lockTimeout).getSeconds()));
		return definition;
	}

}
