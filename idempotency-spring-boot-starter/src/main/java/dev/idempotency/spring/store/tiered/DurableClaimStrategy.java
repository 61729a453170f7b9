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

package dev.idempotency.spring.store.tiered;

import java.time.Duration;
import java.util.Optional;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.spring.store.FreshKeyClaim;
import dev.idempotency.spring.transaction.TransactionalClaims;
import org.jspecify.annotations.Nullable;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The {@link TieredClaimMode#DURABLE durable claim}: a key the fast tier granted is
 * claimed in the durable tier with the same owner token, and the durable tier answers
 * every operation on the claim first. The fast tier follows, best effort: it is completed
 * after the durable tier, released whatever the durable tier answered, and renewed in the
 * background so that it never holds up the durable renewal.
 * <p>
 * In the transactional mode ({@link TransactionalClaims}) the durable claim and
 * completion are part of the application's transaction: the fast tier is completed only
 * after that transaction commits, and released if it rolls back.
 *
 * @author Idempotency contributors
 */
final class DurableClaimStrategy implements ClaimStrategy {

	private final FastTier fast;

	private final IdempotencyStore durable;

	// the claims committed asynchronously; null while claims commit synchronously
	private volatile @Nullable UnflushedClaims unflushed;

	DurableClaimStrategy(FastTier fast, IdempotencyStore durable) {
		this.fast = fast;
		this.durable = durable;
	}

	void setClaimCommit(ClaimCommit claimCommit) {
		this.unflushed = (claimCommit == ClaimCommit.ASYNCHRONOUS) ? new UnflushedClaims(this.durable) : null;
	}

	ClaimCommit getClaimCommit() {
		return (this.unflushed != null) ? ClaimCommit.ASYNCHRONOUS : ClaimCommit.SYNCHRONOUS;
	}

	// the asynchronous claims, when they apply: never in the transactional mode, whose
	// claim commits with the application's own writes
	private @Nullable UnflushedClaims unflushed() {
		UnflushedClaims unflushed = this.unflushed;
		return (unflushed != null && !TransactionalClaims.isActive()) ? unflushed : null;
	}

	@Override
	public TieredClaimMode mode() {
		return TieredClaimMode.DURABLE;
	}

	@Override
	public AcquireResult claimGranted(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
			Duration lease, Duration ttl) {
		long askedAt = System.nanoTime();
		UnflushedClaims unflushed = unflushed();
		AcquireResult result;
		try {
			// the fast tier holds the same claim: the durable one may skip the flush; and
			// the key is most likely new to the durable tier too
			if (unflushed != null) {
				result = unflushed.acquire(key, fingerprint, token, lease, ttl);
			}
			else if (this.durable instanceof FreshKeyClaim fresh) {
				result = fresh.acquireFresh(key, fingerprint, token, lease, ttl);
			}
			else {
				result = this.durable.acquire(key, fingerprint, token, lease, ttl);
			}
		}
		catch (RuntimeException ex) {
			throw ClaimStrategy.undoClaim(this.fast, key, token, ex);
		}
		if (result instanceof AcquireResult.Acquired && TransactionalClaims.isActive()) {
			// the durable claim is the transaction's: the fast one must not outlive a
			// rollback, however the transaction ends (a failed statement, a commit the
			// database refused, a lost connection)
			TransactionSynchronizationManager.registerSynchronization(new FastReleaseAfterRollback(key, token));
		}
		else if (result instanceof AcquireResult.Replay replay) {
			// the fast tier had lost the record: copy it back over the claim we hold
			this.fast.rewarm(key, token, replay, ttl, askedAt);
		}
		else if (!(result instanceof AcquireResult.Acquired)) {
			this.fast.undoClaim(key, token);
		}
		return result;
	}

	@Override
	public AcquireResult confirmMismatch(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
			Duration lease, Duration ttl) {
		AcquireResult result = this.durable.acquire(key, fingerprint, token, lease, ttl);
		if (!(result instanceof AcquireResult.Mismatch)) {
			// the fast record contradicts the source of truth (a claim whose release
			// failed, for instance): drop it so that it stops refusing this key
			this.fast.drop(FastTier.ACQUIRE, key);
		}
		return result;
	}

	@Override
	public boolean complete(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
		// durable first: the client must never receive a response that could be lost
		if (!completeDurable(key, token, response, ttl)) {
			return false;
		}
		if (TransactionalClaims.isActive()) {
			// the durable record commits with the application's transaction, or not at
			// all: the fast tier must not replay a response that may yet be rolled back
			TransactionSynchronizationManager.registerSynchronization(
					new FastCompletionAfterCommit(key, token, response, ttl, TransactionalClaims.openedAt()));
			return true;
		}
		completeFast(key, token, response, ttl);
		return true;
	}

	// Refused: the fast record is gone, or it is another owner's claim, one whose undo
	// failed after the durable tier turned it away. Such a claim would answer "in
	// progress" until its lease ran out: drop it, the next acquire copies the record.
	private void completeFast(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
		if (this.fast.complete(key, token, response, ttl) == FastTier.Outcome.REFUSED) {
			this.fast.drop(FastTier.COMPLETE, key);
		}
	}

	// an asynchronous claim that the durable tier lost in a crash is completed as a key
	// never claimed, unless another owner's record is there
	private boolean completeDurable(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
		UnflushedClaims unflushed = unflushed();
		if (unflushed == null) {
			return this.durable.complete(key, token, response, ttl);
		}
		// kept if the completion throws: the engine may try it again
		boolean completed = this.durable.complete(key, token, response, ttl)
				|| unflushed.completeLost(key, token, response, ttl);
		unflushed.forget(token);
		return completed;
	}

	@Override
	public boolean release(IdempotencyKey key, OwnerToken token) {
		UnflushedClaims unflushed = this.unflushed;
		if (unflushed != null) {
			unflushed.forget(token);
		}
		try {
			return this.durable.release(key, token);
		}
		finally {
			// only ever removes a record that this token owns, whatever the durable
			// answer, and even when the durable tier failed: a claim of the
			// transactional mode vanishes with its rolled-back transaction, and the fast
			// record must not outlive it
			this.fast.release(key, token);
		}
	}

	@Override
	public boolean extend(IdempotencyKey key, OwnerToken token, Duration lease) {
		boolean extended = this.durable.extend(key, token, lease);
		UnflushedClaims unflushed = unflushed();
		if (!extended && unflushed != null) {
			// the durable tier lost an asynchronous claim: write it again while the fast
			// tier still turns duplicates away
			extended = unflushed.reclaim(key, token, lease);
		}
		if (extended && unflushed != null) {
			unflushed.renewed(token, lease);
		}
		if (extended) {
			this.fast.extendInBackground(key, token, lease);
		}
		return extended;
	}

	@Override
	public Optional<IdempotencyRecord> find(IdempotencyKey key, Optional<IdempotencyRecord> durableRecord) {
		return durableRecord;
	}

	/**
	 * Releases the fast claim of a durable claim made in a transaction, if that
	 * transaction does not commit.
	 */
	private final class FastReleaseAfterRollback implements TransactionSynchronization {

		private final IdempotencyKey key;

		private final OwnerToken token;

		FastReleaseAfterRollback(IdempotencyKey key, OwnerToken token) {
			this.key = key;
			this.token = token;
		}

		@Override
		public void afterCompletion(int status) {
			if (status != STATUS_COMMITTED) {
				DurableClaimStrategy.this.fast.release(this.key, this.token);
			}
		}

	}

	/**
	 * Completes the fast tier once the transaction that completed the durable record has
	 * committed, and releases the fast claim if it rolled back: a retry then finds the
	 * key free in both tiers. The copy lives no longer than the durable record, whose
	 * lifetime PostgreSQL counts from the transaction's start.
	 */
	private final class FastCompletionAfterCommit implements TransactionSynchronization {

		private final IdempotencyKey key;

		private final OwnerToken token;

		private final StoredResponse response;

		private final Duration ttl;

		private final long transactionStart;

		FastCompletionAfterCommit(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl,
				long transactionStart) {
			this.key = key;
			this.token = token;
			this.response = response;
			this.ttl = ttl;
			this.transactionStart = transactionStart;
		}

		@Override
		public void afterCommit() {
			// whole milliseconds, rounded down: never past the durable record
			long remaining = this.ttl.minusNanos(System.nanoTime() - this.transactionStart).toMillis();
			if (remaining > 0) {
				completeFast(this.key, this.token, this.response, Duration.ofMillis(remaining));
			}
			else {
				DurableClaimStrategy.this.fast.release(this.key, this.token);
			}
		}

		@Override
		public void afterCompletion(int status) {
			if (status != STATUS_COMMITTED) {
				DurableClaimStrategy.this.fast.release(this.key, this.token);
			}
		}

	}

}
