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

package dev.idempotency.spring.store.jdbc;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import javax.sql.DataSource;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.IdempotencyStatus;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.spring.store.TransactionPerOperationStore;
import dev.idempotency.spring.transaction.TransactionalClaims;
import dev.idempotency.test.AbstractIdempotencyStoreTests;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store contract for {@link JdbcIdempotencyStore} in the transactional mode, on a
 * real database server: PostgreSQL ({@link JdbcIdempotencyStoreTransactionalIT}) or
 * MariaDB ({@link MariaDbTransactionalStoreIT}).
 * <p>
 * What the transactional mode means for the contract, which speaks of single store
 * operations: the store has {@link JdbcIdempotencyStore#setTransactionalClaims(boolean)
 * transactional claims} on, as the mode's start-up sets it, and each operation of the
 * contract runs as a request of a transactional policy runs its store operations: in a
 * new transaction of a {@link DataSourceTransactionManager} of the store's data source,
 * on the calling thread, with {@link TransactionalClaims} open, committed once the
 * operation returns ({@link TransactionPerOperationStore}). So every case takes the
 * joined-connection path and the guarded claim (the key's advisory lock on PostgreSQL, a
 * statement that does not wait for row locks on MariaDB), and each racing thread of the
 * concurrency cases claims in a transaction of its own. One transaction per operation,
 * not per case: a case plays several requests in turn on one thread, and what one of them
 * decided must be committed for the next to see it.
 * <p>
 * The cases on leases (lapse, renewal, takeover) hold as they are. A transactional
 * request renews no lease, but its store still must: a claim committed by a request of a
 * policy that is not transactional, or by an instance that crashed after the commit of a
 * claim and before that of the completion, is taken over once its lease lapses.
 *
 * @author Idempotency contributors
 */
abstract class AbstractJdbcTransactionalStoreIT extends AbstractIdempotencyStoreTests {

	/**
	 * Return the pooled data source of the database under test, whose table exists.
	 * @return the data source
	 */
	protected abstract DataSource dataSource();

	private DataSourceTransactionManager transactionManager() {
		return new DataSourceTransactionManager(dataSource());
	}

	// the contract's lapse tests take a lapsed lease over at first sight; the confirmed
	// takeover, the default, is tested in JdbcIdempotencyStorePostgresIT
	@Override
	protected IdempotencyStore createStore() {
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(dataSource());
		store.setConfirmTakeover(false);
		store.setTransactionalClaims(true);
		return new TransactionPerOperationStore(store, transactionManager());
	}

	// the cases above would pass on auto-committed operations too: this one shows that
	// the operations of the store under test join their transactions
	@Test
	void claimOfARolledBackTransactionLeavesNothing() {
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		TransactionPerOperationStore rollingBack = ((TransactionPerOperationStore) store()).rollingBack();
		assertThat(rollingBack.acquire(key, fingerprint("a"), token, LONG_LEASE, LONG_TTL))
			.isEqualTo(new AcquireResult.Acquired(token));
		assertThat(store().find(key)).isEmpty();
		OwnerToken next = OwnerToken.generate();
		assertThat(store().acquire(key, fingerprint("b"), next, LONG_LEASE, LONG_TTL))
			.isEqualTo(new AcquireResult.Acquired(next));
		assertThat(rollingBack.complete(key, next, response(201, "{}"), LONG_TTL)).isTrue();
		assertThat(store().find(key)).get()
			.satisfies((record) -> assertThat(record.status()).isEqualTo(IdempotencyStatus.PROCESSING));
	}

	@Test
	void claimNotYetCommittedIsHeldWithoutItsFingerprint() {
		IdempotencyStore store = ((TransactionPerOperationStore) store()).delegate();
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		inTransaction(() -> {
			assertThat(store.acquire(key, fingerprint("a"), token, LONG_LEASE, LONG_TTL))
				.isEqualTo(new AcquireResult.Acquired(token));
			// another claimant, on a thread and in a transaction of its own, finds the
			// key held: it cannot read the fingerprint of an uncommitted claim
			AcquireResult other = CompletableFuture
				.supplyAsync(() -> store().acquire(key, fingerprint("b"), OwnerToken.generate(), LONG_LEASE, LONG_TTL))
				.join();
			assertThat(other).isInstanceOfSatisfying(AcquireResult.InProgress.class,
					(inProgress) -> assertThat(inProgress.retryAfter()).isEqualTo(LONG_LEASE));
			return other;
		});
		// committed, the fingerprint is known
		assertThat(store().acquire(key, fingerprint("b"), OwnerToken.generate(), LONG_LEASE, LONG_TTL))
			.isInstanceOf(AcquireResult.Mismatch.class);
		assertThat(store().find(key)).get().extracting(IdempotencyRecord::owner).isEqualTo(token);
	}

	// acquireFresh, the tiered store's claim of a key its fast tier granted: the guarded
	// insert takes the key's lock in the same statement, and inserts only when it got it
	@Test
	void freshClaimTakesTheLockOfItsKeyInItsInsert() {
		JdbcIdempotencyStore store = (JdbcIdempotencyStore) ((TransactionPerOperationStore) store()).delegate();
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		inTransaction(() -> {
			assertThat(store.acquireFresh(key, fingerprint("a"), token, LONG_LEASE, LONG_TTL))
				.isEqualTo(new AcquireResult.Acquired(token));
			// another request's fresh claim while this transaction is open: held, and
			// at once, since this thread waits for it and so never commits
			AcquireResult other = CompletableFuture.supplyAsync(() -> freshClaim(store, key, fingerprint("a")))
				.orTimeout(20, TimeUnit.SECONDS)
				.join();
			assertThat(other).isInstanceOf(AcquireResult.InProgress.class);
			return other;
		});
		// committed: a fresh claim reads the record
		assertThat(freshClaim(store, key, fingerprint("a"))).isInstanceOf(AcquireResult.InProgress.class);
		assertThat(freshClaim(store, key, fingerprint("b"))).isInstanceOf(AcquireResult.Mismatch.class);
		assertThat(store().find(key)).get().extracting(IdempotencyRecord::owner).isEqualTo(token);
	}

	private AcquireResult freshClaim(JdbcIdempotencyStore store, IdempotencyKey key, RequestFingerprint fingerprint) {
		return inTransaction(() -> store.acquireFresh(key, fingerprint, OwnerToken.generate(), LONG_LEASE, LONG_TTL));
	}

	// store operations as a request of a transactional policy runs them: in a transaction
	// of their own that they join, committed when the work returns
	protected <T> T inTransaction(Supplier<T> work) {
		T result = new TransactionTemplate(transactionManager()).execute((status) -> {
			try (TransactionalClaims.Scope claims = TransactionalClaims.open(dataSource())) {
				return work.get();
			}
		});
		assertThat(result).isNotNull();
		return result;
	}

}
