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

import java.sql.SQLException;
import java.util.Optional;
import java.util.UUID;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.spring.store.jdbc.JdbcOperationRunner.Operation;
import dev.idempotency.spring.store.jdbc.RecordRows.ClaimRow;
import org.jspecify.annotations.Nullable;

/**
 * The records table of {@link JdbcIdempotencyStore} in one database's SQL: every
 * operation the store and the cleaner make on a row, each as the statements that database
 * needs for it. {@link JdbcIdempotencyStore} decides what a claim means (replay,
 * mismatch, in progress, takeover) from what these operations return; each dialect
 * answers for how its statements make the claim atomic, never wait behind another
 * request's uncommitted claim when guarded, and read the record by the database's clock.
 * One subclass per {@link JdbcDialect}: {@link PostgresRecordTable} and
 * {@link MariaDbRecordTable}.
 * <p>
 * Every operation runs on the connection of the given {@link Operation}, the store's own
 * or, in the transactional mode, the transaction's. Immutable and thread-safe.
 *
 * @author Idempotency contributors
 */
abstract sealed class RecordTable permits PostgresRecordTable, MariaDbRecordTable {

	final TableName table;

	final JdbcDialect dialect;

	RecordTable(TableName table, JdbcDialect dialect) {
		this.table = table;
		this.dialect = dialect;
	}

	/**
	 * Return the table of a dialect.
	 * @param dialect the database's dialect
	 * @param table the table's name
	 * @return the table
	 */
	static RecordTable of(JdbcDialect dialect, TableName table) {
		return switch (dialect) {
			case POSTGRESQL -> new PostgresRecordTable(table);
			case MARIADB, MYSQL -> new MariaDbRecordTable(table, dialect);
		};
	}

	/**
	 * Return the table of an operation's database: the one its caller kept, if it is of
	 * the operation's dialect, else a new one.
	 * @param kept the table the caller kept, if any
	 * @param operation the operation
	 * @param table the table's name
	 * @return the table
	 */
	static RecordTable of(@Nullable RecordTable kept, Operation operation, TableName table) {
		return (kept != null && kept.dialect == operation.dialect()) ? kept : of(operation.dialect(), table);
	}

	/**
	 * Make one attempt at a claim: insert the record if the key has none, else read the
	 * record there, classified by the database clock.
	 * @param operation the operation
	 * @param claim the claim's values
	 * @param form the form the caller asked for
	 * @param guarded whether the claim must not wait behind a claim not yet committed
	 * (the transactional mode): one it meets is answered {@link RecordRows.HeldElsewhere}
	 * @param attempt the attempt, from 1; a later attempt follows one that found nothing
	 * to read
	 * @return the claim's insert, the record found, or {@code null} when the record that
	 * kept the insert out was gone by the time it was read (the caller tries again)
	 * @throws SQLException if a statement fails
	 */
	abstract @Nullable ClaimRow claim(Operation operation, Claim claim, ClaimForm form, boolean guarded, int attempt)
			throws SQLException;

	/**
	 * Take the record over from the owner the claim saw, if it expired or its lapsed
	 * lease may be taken over now.
	 * @param operation the operation
	 * @param claim the claim's values
	 * @param seenOwner the owner token the claim read
	 * @param atOnce whether a lapsed lease is taken over without its scheduled time
	 * @param guarded whether the write must not wait for a lock held by another
	 * transaction
	 * @return what the write did
	 * @throws SQLException if a statement fails
	 */
	abstract Write takeOver(Operation operation, Claim claim, UUID seenOwner, boolean atOnce, boolean guarded)
			throws SQLException;

	/**
	 * Set when a lapsed lease may be taken over, if no request did yet.
	 * @param operation the operation
	 * @param claim the claim's values
	 * @param seenOwner the owner token the claim read
	 * @param guarded whether the write must not wait for a lock held by another
	 * transaction
	 * @return what the write did
	 * @throws SQLException if a statement fails
	 */
	abstract Write scheduleTakeover(Operation operation, Claim claim, UUID seenOwner, boolean guarded)
			throws SQLException;

	/**
	 * Store the response of the owner's processing record; a completion retried after a
	 * lost reply finds the row completed with its own token, which is a success too.
	 * @param operation the operation
	 * @param id the digest of the key, the row's primary key
	 * @param owner the owner token
	 * @param response the encoded response
	 * @param ttlMillis the time to live of the completed record
	 * @return whether the record is completed with the owner's token
	 * @throws SQLException if a statement fails
	 */
	abstract boolean complete(Operation operation, byte[] id, UUID owner, byte[] response, long ttlMillis)
			throws SQLException;

	/**
	 * Store a completed record of a key the store never claimed, unless a live record of
	 * another owner is there.
	 * @param operation the operation
	 * @param key the key
	 * @param fingerprint the request's fingerprint
	 * @param owner the owner token
	 * @param response the encoded response
	 * @param ttlMillis the time to live of the completed record
	 * @return whether the record is completed with the owner's token
	 * @throws SQLException if a statement fails
	 */
	abstract boolean completeUnclaimed(Operation operation, IdempotencyKey key, RequestFingerprint fingerprint,
			UUID owner, byte[] response, long ttlMillis) throws SQLException;

	/**
	 * Delete the owner's processing record.
	 * @param operation the operation
	 * @param id the digest of the key, the row's primary key
	 * @param owner the owner token
	 * @return whether a live record was deleted (an expired one is deleted too, but
	 * answers {@code false})
	 * @throws SQLException if a statement fails
	 */
	abstract boolean release(Operation operation, byte[] id, UUID owner) throws SQLException;

	/**
	 * Renew the owner's lease.
	 * @param operation the operation
	 * @param id the digest of the key, the row's primary key
	 * @param owner the owner token
	 * @param leaseMillis the new lease
	 * @return whether the owner's live processing record has the new lease
	 * @throws SQLException if a statement fails
	 */
	abstract boolean extend(Operation operation, byte[] id, UUID owner, long leaseMillis) throws SQLException;

	/**
	 * Read a live record.
	 * @param operation the operation
	 * @param id the digest of the key, the row's primary key
	 * @param key the key
	 * @param rows the reader of rows
	 * @return the record, empty if the key has none or it expired
	 * @throws SQLException if a statement fails
	 */
	abstract Optional<IdempotencyRecord> find(Operation operation, byte[] id, IdempotencyKey key, RecordRows rows)
			throws SQLException;

	/**
	 * Delete a record, whoever owns it.
	 * @param operation the operation
	 * @param id the digest of the key, the row's primary key
	 * @return whether a live record was deleted
	 * @throws SQLException if a statement fails
	 */
	abstract boolean evict(Operation operation, byte[] id) throws SQLException;

	/**
	 * Give rows without a purge time one from their expiry, at most a batch of them.
	 * @param operation the operation
	 * @param batchSize the most rows to change
	 * @return how many rows changed
	 * @throws SQLException if a statement fails
	 */
	abstract int scheduleUnscheduled(Operation operation, int batchSize) throws SQLException;

	/**
	 * Delete expired records whose lease is not live, at most a batch of them, without
	 * waiting for rows another statement holds where the database allows it.
	 * @param operation the operation
	 * @param batchSize the most rows to change
	 * @return how many rows were deleted
	 * @throws SQLException if a statement fails
	 */
	abstract int purgeExpired(Operation operation, int batchSize) throws SQLException;

	/**
	 * What a conditional write of a claim did.
	 */
	enum Write {

		/**
		 * The row matched the condition and was written.
		 */
		DONE,

		/**
		 * The row did not match (another request changed it first).
		 */
		MISSED,

		/**
		 * Another transaction holds the row; a guarded write does not wait for it.
		 */
		LOCKED

	}

	/**
	 * The statements a claim starts with.
	 */
	enum ClaimForm {

		/**
		 * The insert, or the row found, in as few round trips as the database allows.
		 */
		COMBINED,

		/**
		 * The same, an inserted claim committed without waiting for the disk where the
		 * database offers that per transaction.
		 */
		UNFLUSHED,

		/**
		 * The insert alone first: the key is almost always new.
		 */
		INSERT_FIRST

	}

	/**
	 * The values of one claim, as its statements bind them.
	 *
	 * @param key the key
	 * @param id the digest of the key, the primary key of its row
	 * @param fingerprint the request's fingerprint
	 * @param fingerprintBytes the fingerprint as stored
	 * @param token the claiming owner
	 * @param owner the owner token as a UUID
	 * @param leaseMillis the lease
	 * @param ttlMillis the time to live of a new record
	 * @param idleMillis how long the claim's transaction may sit idle in the
	 * transactional mode: its request's time-out
	 */
	record Claim(IdempotencyKey key, byte[] id, RequestFingerprint fingerprint, byte[] fingerprintBytes,
			OwnerToken token, UUID owner, long leaseMillis, long ttlMillis, long idleMillis) {

	}

}
