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

package dev.idempotency.core.store;

import java.time.Duration;
import java.util.Locale;
import java.util.Optional;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;

/**
 * Storage of idempotency records: the one place where the key lifecycle
 * {@code ABSENT -> PROCESSING -> COMPLETED -> EXPIRED} is decided.
 * <p>
 * <b>Atomicity.</b> Every operation is atomic with respect to every other operation on
 * the same key, across all application instances that share the store. In particular,
 * among any number of concurrent {@link #acquire acquisitions} of an absent key (or of a
 * key whose lease has lapsed) exactly one returns {@link AcquireResult.Acquired}.
 * <p>
 * <b>Fencing.</b> {@link #complete}, {@link #release} and {@link #extend} succeed only
 * for the caller whose token owns the record. A lapsed lease alone does not revoke
 * ownership; another caller taking the key over does. A rejected call changes nothing.
 * <p>
 * <b>Time.</b> Leases and expiry are measured by the store's clock (for example Redis
 * {@code TIME} or PostgreSQL {@code now()}), never by the application's, so that
 * instances with skewed clocks agree. An expired record behaves exactly as an absent one.
 * A store that can tell how long a record still lives, by its own clock, reports it with
 * replays and found records ({@link AcquireResult.Replay#timeToLive()},
 * {@link IdempotencyRecord#timeToLive()}), so that whoever copies a record elsewhere
 * never has to compare the store's instants with another clock.
 * <p>
 * <b>Failures.</b> Expected outcomes are return values. When the store cannot answer it
 * throws {@link IdempotencyStoreException}, and the caller must assume nothing about the
 * record. A completed record whose response cannot be decoded is not a failure: the
 * request did complete, so the store answers with
 * {@link dev.idempotency.core.StoredResponse#unreadable()} in its place until the record
 * expires.
 * <p>
 * Implementations are thread-safe. No argument may be {@code null}.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public interface IdempotencyStore {

	/**
	 * Try to become the owner of a key, or learn why not.
	 * <ul>
	 * <li>absent or expired: store a {@code PROCESSING} record owned by {@code token}
	 * with the given fingerprint, lease and expiry, and return
	 * {@link AcquireResult.Acquired};
	 * <li>stored with another fingerprint (processing or completed):
	 * {@link AcquireResult.Mismatch}, changing nothing;
	 * <li>completed: {@link AcquireResult.Replay} with the stored response;
	 * <li>processing with a live lease: {@link AcquireResult.InProgress};
	 * <li>processing with a lapsed lease: take the record over for {@code token} and
	 * return {@link AcquireResult.Acquired}.
	 * </ul>
	 * @param key the key
	 * @param fingerprint the request's fingerprint
	 * @param token the caller's new fencing token (see {@link OwnerToken#generate()})
	 * @param lease how long the caller owns the key unless it extends the lease
	 * @param ttl how long the record lives if it is never completed or released
	 * @return the outcome
	 * @throws IdempotencyStoreException if the store cannot answer
	 */
	AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token, Duration lease,
			Duration ttl);

	/**
	 * Store the response of the handler and move the record to {@code COMPLETED}, to
	 * expire {@code ttl} from now.
	 * @param key the key
	 * @param token the caller's token
	 * @param response the response to replay
	 * @param ttl how long to keep the completed record
	 * @return {@code true} if stored, or if the record was already completed by this same
	 * token (so that a completion retried after a lost reply is not mistaken for a
	 * fencing); {@code false} if the caller no longer owns the record (fenced out), in
	 * which case nothing was written
	 * @throws IdempotencyStoreException if the store cannot answer
	 */
	boolean complete(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl);

	/**
	 * Remove a processing record so that the next request runs the handler again (the
	 * handler failed or produced a response that must not be replayed).
	 * @param key the key
	 * @param token the caller's token
	 * @return {@code true} if removed; {@code false} if the caller no longer owns it
	 * @throws IdempotencyStoreException if the store cannot answer
	 */
	boolean release(IdempotencyKey key, OwnerToken token);

	/**
	 * Extend the caller's lease to {@code lease} from now (the heartbeat of a running
	 * handler). The record's expiry is extended too if it would otherwise end first.
	 * @param key the key
	 * @param token the caller's token
	 * @param lease the new lease, from now
	 * @return {@code true} if extended; {@code false} if the caller no longer owns the
	 * record
	 * @throws IdempotencyStoreException if the store cannot answer
	 */
	boolean extend(IdempotencyKey key, OwnerToken token, Duration lease);

	/**
	 * Read a record for diagnostics. Never use the result to decide whether to run a
	 * handler: only {@link #acquire} decides atomically.
	 * @param key the key
	 * @return the record, or empty if absent or expired
	 * @throws IdempotencyStoreException if the store cannot answer
	 */
	Optional<IdempotencyRecord> find(IdempotencyKey key);

	/**
	 * Delete a record whatever its state (an operator's tool for a stuck key).
	 * @param key the key
	 * @return {@code true} if a record was deleted
	 * @throws IdempotencyStoreException if the store cannot answer
	 */
	boolean evict(IdempotencyKey key);

	/**
	 * Return the short name of this store: the {@code store} tag of its metrics and the
	 * {@code store} detail of its health. The stores of this project answer
	 * {@code memory}, {@code redis}, {@code jdbc} and {@code tiered}, for their own class
	 * only: a subclass, like any other store, gets the default, the simple name of its
	 * class in lower case. A store whose name must survive a rename of its class
	 * overrides this method.
	 * @return the name, never {@code null}
	 */
	default String name() {
		return getClass().getSimpleName().toLowerCase(Locale.ROOT);
	}

}
