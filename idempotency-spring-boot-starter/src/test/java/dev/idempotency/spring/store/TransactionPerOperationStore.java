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

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.spring.transaction.TransactionalClaims;

import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionStatus;
import org.springframework.transaction.support.DefaultTransactionDefinition;

/**
 * Store that runs each operation of its delegate as the transactional mode runs the store
 * operations of a request: in a new transaction of the given manager, begun on the
 * calling thread, with {@link TransactionalClaims} open on it, and committed once the
 * operation returns (rolled back if it throws). The scope stays open until the commit has
 * run its synchronizations, as the filter's does.
 * <p>
 * So every operation of the store contract takes the path of the transactional mode: the
 * statements run on the transaction's connection, the claims are guarded by the key's
 * advisory lock, and the tiered store completes its fast tier after the commit. Each
 * operation commits on its own, so what one operation decided is visible to the next, as
 * between two requests; a thread of a race runs each of its operations in a transaction
 * of its own.
 *
 * @author Idempotency contributors
 */
public final class TransactionPerOperationStore implements IdempotencyStore {

	private static final TransactionDefinition DEFINITION = new DefaultTransactionDefinition(
			TransactionDefinition.PROPAGATION_REQUIRES_NEW);

	private final IdempotencyStore delegate;

	private final PlatformTransactionManager manager;

	private final boolean rollback;

	/**
	 * Create a store that runs each operation of the delegate in a transaction.
	 * @param delegate the store, whose operations must join the transactions of the
	 * manager
	 * @param manager the transaction manager of the delegate's data source
	 */
	public TransactionPerOperationStore(IdempotencyStore delegate, PlatformTransactionManager manager) {
		this(delegate, manager, false);
	}

	private TransactionPerOperationStore(IdempotencyStore delegate, PlatformTransactionManager manager,
			boolean rollback) {
		this.delegate = Objects.requireNonNull(delegate, "'delegate' must not be null");
		this.manager = Objects.requireNonNull(manager, "'manager' must not be null");
		this.rollback = rollback;
	}

	/**
	 * Return a store that runs each operation as this one does, but rolls its transaction
	 * back instead of committing it: what an operation leaves behind then shows whether
	 * it joined the transaction.
	 * @return the store that rolls back
	 */
	public TransactionPerOperationStore rollingBack() {
		return new TransactionPerOperationStore(this.delegate, this.manager, true);
	}

	/**
	 * Return the store whose operations run in transactions.
	 * @return the delegate
	 */
	public IdempotencyStore delegate() {
		return this.delegate;
	}

	@Override
	public AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token, Duration lease,
			Duration ttl) {
		return inTransaction(() -> this.delegate.acquire(key, fingerprint, token, lease, ttl));
	}

	@Override
	public boolean complete(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
		return inTransaction(() -> this.delegate.complete(key, token, response, ttl));
	}

	@Override
	public boolean release(IdempotencyKey key, OwnerToken token) {
		return inTransaction(() -> this.delegate.release(key, token));
	}

	@Override
	public boolean extend(IdempotencyKey key, OwnerToken token, Duration lease) {
		return inTransaction(() -> this.delegate.extend(key, token, lease));
	}

	@Override
	public Optional<IdempotencyRecord> find(IdempotencyKey key) {
		return inTransaction(() -> this.delegate.find(key));
	}

	@Override
	public boolean evict(IdempotencyKey key) {
		return inTransaction(() -> this.delegate.evict(key));
	}

	@Override
	public String name() {
		return this.delegate.name();
	}

	private <T> T inTransaction(Supplier<T> operation) {
		TransactionStatus status = this.manager.getTransaction(DEFINITION);
		TransactionalClaims.Scope claims;
		try {
			claims = TransactionalClaims.open(((DataSourceTransactionManager) this.manager).getDataSource());
		}
		catch (RuntimeException ex) {
			this.manager.rollback(status);
			throw ex;
		}
		try {
			T result;
			try {
				result = operation.get();
			}
			catch (RuntimeException | Error ex) {
				this.manager.rollback(status);
				throw ex;
			}
			if (this.rollback) {
				this.manager.rollback(status);
			}
			else {
				this.manager.commit(status);
			}
			return result;
		}
		finally {
			claims.close();
		}
	}

}
