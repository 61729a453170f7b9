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

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.UUID;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.IdempotencyStatus;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.StoredResponseCodec;
import dev.idempotency.core.StoredResponseFormatException;
import dev.idempotency.core.store.IdempotencyStoreException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The rows of {@link JdbcIdempotencyStore}'s table as the store reads them: the row a
 * claim statement returns, a record found by key, and the stored response, in the binary
 * form of a {@link StoredResponseCodec}.
 * <p>
 * Immutable and thread-safe.
 *
 * @author Idempotency contributors
 */
final class RecordRows {

	// under the store's name, where operators look for its warnings
	private static final Log logger = LogFactory.getLog(JdbcIdempotencyStore.class);

	private static final String STATUS_PROCESSING = "P";

	private static final String STATUS_COMPLETED = "C";

	/**
	 * What a completed record holds instead of a response too large for the database to
	 * take in one statement (MariaDB's {@code max_allowed_packet}): the request did
	 * complete, so its retries are answered that the response cannot be replayed, never
	 * run again. No encoded response starts like it.
	 */
	static final byte[] TOO_LARGE_TO_STORE = "idempotency:response-too-large-to-store"
		.getBytes(java.nio.charset.StandardCharsets.US_ASCII);

	private final StoredResponseCodec codec;

	RecordRows(StoredResponseCodec codec) {
		this.codec = codec;
	}

	byte[] encode(StoredResponse response) {
		return this.codec.encode(response);
	}

	/**
	 * Read the row of a claim statement.
	 * @param row the row, positioned
	 * @param guarded whether the statement was a guarded claim, with its
	 * {@code held_elsewhere} column: the key's lock is held by another transaction, which
	 * has not committed a record (no status) or may be changing the committed one
	 * @return the claim's insert, the lock held elsewhere, or the record found
	 * @throws SQLException if a column cannot be read
	 */
	static ClaimRow claimRow(ResultSet row, boolean guarded) throws SQLException {
		if (row.getBoolean("inserted")) {
			return Inserted.ROW;
		}
		boolean heldElsewhere = guarded && row.getBoolean("held_elsewhere");
		return (heldElsewhere && row.getString("status") == null) ? HeldElsewhere.ROW
				: ExistingRecord.of(row, heldElsewhere);
	}

	/**
	 * Read a record found by key.
	 * @param row the row, positioned
	 * @param key the key that was looked up, for the warning about an unreadable response
	 * @return the record
	 * @throws SQLException if a column cannot be read
	 */
	IdempotencyRecord record(ResultSet row, IdempotencyKey key) throws SQLException {
		return record(new IdempotencyKey(row.getString("scope"), row.getString("idem_key")),
				row.getBytes("fingerprint"), row.getString("status"), row.getObject("owner_token", UUID.class),
				row.getObject("created_at", OffsetDateTime.class),
				row.getObject("lease_expires_at", OffsetDateTime.class),
				row.getObject("expires_at", OffsetDateTime.class), row.getBytes("response"), row.getLong("ttl_ms"),
				key);
	}

	/**
	 * Build a record from the columns of its row, read as each database returns them.
	 * @param storedKey the scope and key stored in the row
	 * @param fingerprint the stored fingerprint
	 * @param status the stored status
	 * @param owner the owner token
	 * @param createdAt when the record was created
	 * @param leaseExpiresAt when its lease lapses, {@code null} once completed
	 * @param expiresAt when it expires
	 * @param response the stored response, {@code null} while processing
	 * @param ttlMillis how long it has to live, rounded down
	 * @param key the key that was looked up, for the warning about an unreadable response
	 * @return the record
	 */
	IdempotencyRecord record(IdempotencyKey storedKey, byte[] fingerprint, String status, UUID owner,
			@Nullable OffsetDateTime createdAt, @Nullable OffsetDateTime leaseExpiresAt,
			@Nullable OffsetDateTime expiresAt, byte @Nullable [] response, long ttlMillis, IdempotencyKey key) {
		boolean completed = STATUS_COMPLETED.equals(status);
		return new IdempotencyRecord(storedKey, RequestFingerprint.of(fingerprint),
				completed ? IdempotencyStatus.COMPLETED : IdempotencyStatus.PROCESSING, toOwnerToken(owner),
				toNullableInstant(createdAt), toNullableInstant(leaseExpiresAt), toInstant(expiresAt),
				completed ? response(response, key) : null, timeToLive(ttlMillis));
	}

	/**
	 * Decode the response of a completed record. The request did complete: a response
	 * that cannot be read must neither run it again nor fail every retry until the record
	 * expires, so it is answered as {@link StoredResponse#unreadable()}, with a warning.
	 * @param data the stored bytes, {@code null} if the row has none
	 * @param key the record's key, for the warning
	 * @return the response
	 */
	StoredResponse response(byte @Nullable [] data, IdempotencyKey key) {
		if (data == null) {
			logger.warn("Completed record of key '" + key
					+ "' has no response: answering that it cannot be replayed until the record expires");
			return StoredResponse.unreadable();
		}
		if (java.util.Arrays.equals(data, TOO_LARGE_TO_STORE)) {
			return StoredResponse.unreadable();
		}
		try {
			return this.codec.decode(data);
		}
		catch (StoredResponseFormatException ex) {
			logger.warn("Stored response of key '" + key + "' cannot be decoded (" + ex.getMessage()
					+ "): answering that it cannot be replayed until the record expires");
			return StoredResponse.unreadable();
		}
	}

	static Duration timeToLive(long ttlMillis) {
		return Duration.ofMillis(Math.max(0, ttlMillis));
	}

	static UUID toUuid(OwnerToken token) {
		return new UUID(token.high(), token.low());
	}

	private static OwnerToken toOwnerToken(UUID uuid) {
		return new OwnerToken(uuid.getMostSignificantBits(), uuid.getLeastSignificantBits());
	}

	static Instant toInstant(@Nullable OffsetDateTime time) {
		if (time == null) {
			throw new IdempotencyStoreException("Record has no expiry");
		}
		return time.toInstant();
	}

	private static @Nullable Instant toNullableInstant(@Nullable OffsetDateTime time) {
		return (time != null) ? time.toInstant() : null;
	}

	/**
	 * A row of the claim statement: the claim's own insert, or the record that was
	 * already there.
	 */
	sealed interface ClaimRow permits Inserted, HeldElsewhere, ExistingRecord {

	}

	/**
	 * The guarded claim statement found the key's lock held and no committed record: a
	 * transaction not yet committed holds the claim, or another claim is being made.
	 */
	enum HeldElsewhere implements ClaimRow {

		ROW

	}

	/**
	 * The claim statement inserted the record: the key was free.
	 */
	enum Inserted implements ClaimRow {

		ROW

	}

	/**
	 * The record that was already there, classified by the database clock.
	 *
	 * @param fingerprint the fingerprint of the request that owns the record
	 * @param processing whether the record is still processing
	 * @param owner the owner token, compared by a takeover
	 * @param response the stored response of a completed record
	 * @param expiresAt when the record expires
	 * @param expired whether the record expired
	 * @param lapsed whether the lease lapsed
	 * @param leaseRemainingMillis how long the lease has to run
	 * @param ttlMillis how long the record has to live, rounded down
	 * @param takeoverMarked whether a takeover of the lapsed lease is scheduled
	 * @param takeoverDue whether the scheduled takeover time has come
	 * @param takeoverRemainingMillis how long until the scheduled takeover
	 * @param lockedElsewhere whether another transaction held the key's advisory lock
	 * when a guarded claim read the record
	 */
	record ExistingRecord(RequestFingerprint fingerprint, boolean processing, UUID owner, byte @Nullable [] response,
			@Nullable OffsetDateTime expiresAt, boolean expired, boolean lapsed, long leaseRemainingMillis,
			long ttlMillis, boolean takeoverMarked, boolean takeoverDue, long takeoverRemainingMillis,
			boolean lockedElsewhere) implements ClaimRow {

		static ExistingRecord of(ResultSet row, boolean lockedElsewhere) throws SQLException {
			return new ExistingRecord(RequestFingerprint.of(row.getBytes("fingerprint")),
					STATUS_PROCESSING.equals(row.getString("status")), row.getObject("owner_token", UUID.class),
					row.getBytes("response"), row.getObject("expires_at", OffsetDateTime.class),
					row.getBoolean("expired"), row.getBoolean("lapsed"), row.getLong("lease_remaining_ms"),
					row.getLong("ttl_ms"), row.getBoolean("takeover_marked"), row.getBoolean("takeover_due"),
					row.getLong("takeover_remaining_ms"), lockedElsewhere);
		}

	}

}
