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

import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.Optional;
import java.util.UUID;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.store.IdempotencyStoreException;
import dev.idempotency.spring.store.jdbc.JdbcOperationRunner.Operation;
import dev.idempotency.spring.store.jdbc.RecordRows.ClaimRow;
import dev.idempotency.spring.store.jdbc.RecordRows.ExistingRecord;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The records table in the SQL of MariaDB and MySQL (InnoDB). What differs from
 * PostgreSQL, and why:
 * <ul>
 * <li><b>The claim</b> is {@code INSERT IGNORE}, whose affected-row count is 1 for a
 * fresh row and 0 for a duplicate whatever the connection's {@code useAffectedRows}
 * setting says (found rows count only for {@code UPDATE}s): the count of
 * {@code INSERT ... ON DUPLICATE KEY UPDATE} would read 1 for an untouched duplicate
 * under the found-rows default of MySQL Connector/J, the same as a fresh claim. A
 * duplicate's record is then read with a locking read ({@code LOCK IN SHARE MODE}), which
 * sees the latest committed row whatever the isolation level and the auto-commit mode,
 * except in an application's transaction, which reads its own snapshot and never takes a
 * lock that would hold up the owner's completion.</li>
 * <li><b>Not waiting.</b> InnoDB makes an insert of a key wait while another transaction
 * holds an uncommitted row of the same key. A guarded claim (the transactional mode) runs
 * each of its writes as {@code SET STATEMENT innodb_lock_wait_timeout=0 FOR ...}: a row
 * held by a transaction not yet committed fails the statement at once (error 1205) and
 * the claim answers that the key is held, with the transaction it runs in intact (InnoDB
 * rolls back the statement only, unless the server runs with
 * {@code innodb_rollback_on_timeout}, which the store checks). The uncommitted row's own
 * lock is the claim's guard: no advisory lock has to outlive it.</li>
 * <li><b>Idle transactions.</b> The first claim of an application's transaction sets
 * MariaDB's {@code idle_transaction_timeout} for the session to the request's time-out,
 * and its completion sets the previous value back: a handler hung outside the database
 * has its connection closed by the server, which rolls the claim back and frees the
 * key.</li>
 * <li><b>Row counts</b> are read only where they cannot be ambiguous: every
 * {@code UPDATE} changes a column it matched on, so matched and changed rows agree; the
 * one that may change nothing (a renewal within the same microsecond) confirms a count of
 * 0 with a read. {@code DELETE ... RETURNING} is MariaDB's alone: a release or eviction
 * deletes a live row first and an expired one second.</li>
 * <li><b>Time</b> is {@code UTC_TIMESTAMP(6)}, constant within a statement, stored in
 * {@code DATETIME(6)} columns: the session's time zone never matters.</li>
 * <li><b>Commits</b> are synchronous: InnoDB has no per-transaction relaxed flush, so the
 * asynchronous claim commit commits as the plain claim does.</li>
 * <li><b>Cleanup</b> deletes with {@code ORDER BY purge_after LIMIT n} at READ COMMITTED,
 * which locks the rows it deletes and no gaps between them.</li>
 * </ul>
 * Immutable and thread-safe.
 *
 * @author Idempotency contributors
 */
final class MariaDbRecordTable extends RecordTable {

	// under the store's name, where operators look for its warnings
	private static final Log logger = LogFactory.getLog(JdbcIdempotencyStore.class);

	private static final String NOW = "UTC_TIMESTAMP(6)";

	// InnoDB's "Lock wait timeout exceeded", which a guarded statement meets at once
	private static final int LOCK_WAIT_TIMEOUT = 1205;

	private static final String NO_WAIT = "SET STATEMENT innodb_lock_wait_timeout=0 FOR ";

	private static final String INSERT_CLAIM = """
			INSERT IGNORE INTO %TABLE% (id, scope, idem_key, fingerprint, status, owner_token,
				created_at, lease_expires_at, expires_at, purge_after)
			VALUES (:id, :scope, :key, :fingerprint, 'P', :owner, %NOW%,
				%NOW% + INTERVAL :leaseMillis * 1000 MICROSECOND, %NOW% + INTERVAL :ttlMillis * 1000 MICROSECOND,
				%NOW% + INTERVAL (:ttlMillis + :leaseMillis) * 1000 MICROSECOND)""";

	// the record a claim found, with the database clock's time of the statement: the
	// store classifies it by that time (expired, lapsed, what remains), which costs the
	// server less than the same comparisons made in the statement; every replay and
	// duplicate on MariaDB reads it
	private static final String READ_CLAIMED = """
			SELECT fingerprint, status, owner_token, response, expires_at, lease_expires_at, takeover_at,
				%NOW% AS read_at
			FROM %TABLE%
			WHERE id = :id""";

	// MariaDB assigns left to right, each assignment seeing the ones before it: the
	// columns that others are computed from are assigned last
	private static final String TAKE_OVER = """
			UPDATE %TABLE%
			SET purge_after = %NOW% + INTERVAL (:ttlMillis + :leaseMillis) * 1000 MICROSECOND,
				fingerprint = :fingerprint, status = 'P', owner_token = :owner, response = NULL,
				created_at = %NOW%, lease_expires_at = %NOW% + INTERVAL :leaseMillis * 1000 MICROSECOND,
				expires_at = %NOW% + INTERVAL :ttlMillis * 1000 MICROSECOND, takeover_at = NULL
			WHERE id = :id AND owner_token = :seenOwner
				AND (expires_at <= %NOW% OR (status = 'P' AND lease_expires_at <= %NOW% AND fingerprint = :fingerprint
					AND (:atOnce OR takeover_at <= %NOW%)))""";

	private static final String SCHEDULE_TAKEOVER = """
			UPDATE %TABLE%
			SET takeover_at = %NOW% + INTERVAL :leaseMillis * 1000 MICROSECOND
			WHERE id = :id AND owner_token = :seenOwner AND status = 'P' AND lease_expires_at <= %NOW%
				AND takeover_at IS NULL AND expires_at > %NOW%""";

	// purge_after first: it is computed from the expiry the claim set
	private static final String COMPLETE = """
			UPDATE %TABLE%
			SET purge_after = CASE WHEN %NOW% + INTERVAL :ttlMillis * 1000 MICROSECOND < expires_at
					THEN %NOW% + INTERVAL :ttlMillis * 1000 MICROSECOND
					ELSE GREATEST(COALESCE(purge_after, expires_at), %NOW% + INTERVAL :ttlMillis * 1000 MICROSECOND) END,
				status = 'C', response = :response, lease_expires_at = NULL,
				expires_at = %NOW% + INTERVAL :ttlMillis * 1000 MICROSECOND, takeover_at = NULL
			WHERE id = :id AND owner_token = :owner AND status = 'P' AND expires_at > %NOW%""";

	private static final String COMPLETED_BY_OWNER = """
			SELECT 1 FROM %TABLE%
			WHERE id = :id AND owner_token = :owner AND status = 'C' AND expires_at > %NOW%""";

	private static final String INSERT_COMPLETED = """
			INSERT IGNORE INTO %TABLE% (id, scope, idem_key, fingerprint, status, owner_token, created_at,
				lease_expires_at, expires_at, response, purge_after)
			VALUES (:id, :scope, :key, :fingerprint, 'C', :owner, %NOW%, NULL,
				%NOW% + INTERVAL :ttlMillis * 1000 MICROSECOND, :response, %NOW% + INTERVAL :ttlMillis * 1000 MICROSECOND)""";

	// an expired row or the owner's own processing row, overwritten; the owner token or
	// the status changes, so the row counts whatever the connection counts
	private static final String OVERWRITE_COMPLETED = """
			UPDATE %TABLE%
			SET purge_after = CASE WHEN %NOW% + INTERVAL :ttlMillis * 1000 MICROSECOND < expires_at
					THEN %NOW% + INTERVAL :ttlMillis * 1000 MICROSECOND
					ELSE GREATEST(COALESCE(purge_after, expires_at), %NOW% + INTERVAL :ttlMillis * 1000 MICROSECOND) END,
				created_at = CASE WHEN expires_at <= %NOW% THEN %NOW% ELSE created_at END,
				scope = :scope, idem_key = :key, fingerprint = :fingerprint, status = 'C', owner_token = :owner,
				lease_expires_at = NULL, expires_at = %NOW% + INTERVAL :ttlMillis * 1000 MICROSECOND,
				response = :response, takeover_at = NULL
			WHERE id = :id AND (expires_at <= %NOW% OR (owner_token = :owner AND status = 'P'))""";

	private static final String RELEASE_LIVE = """
			DELETE FROM %TABLE%
			WHERE id = :id AND owner_token = :owner AND status = 'P' AND expires_at > %NOW%""";

	private static final String RELEASE_EXPIRED = """
			DELETE FROM %TABLE%
			WHERE id = :id AND owner_token = :owner AND status = 'P'""";

	// expires_at before lease_expires_at, which it is computed from
	private static final String EXTEND = """
			UPDATE %TABLE%
			SET purge_after = GREATEST(COALESCE(purge_after, expires_at), expires_at,
					%NOW% + INTERVAL :leaseMillis * 1000 MICROSECOND),
				expires_at = GREATEST(expires_at, %NOW% + INTERVAL :leaseMillis * 1000 MICROSECOND),
				lease_expires_at = %NOW% + INTERVAL :leaseMillis * 1000 MICROSECOND, takeover_at = NULL
			WHERE id = :id AND owner_token = :owner AND status = 'P' AND expires_at > %NOW%""";

	// the renewal's own condition: a row that did not match it then cannot match it now
	// (only its owner could make it match again, by a renewal of its own)
	private static final String EXTENDED = """
			SELECT 1 FROM %TABLE%
			WHERE id = :id AND owner_token = :owner AND status = 'P' AND expires_at > %NOW%""";

	// the remaining lifetime is rounded down: no copy made from it may outlive the row
	private static final String FIND = """
			SELECT scope, idem_key, fingerprint, status, owner_token, created_at, lease_expires_at, expires_at,
				response, FLOOR(TIMESTAMPDIFF(MICROSECOND, %NOW%, expires_at) / 1000) AS ttl_ms
			FROM %TABLE%
			WHERE id = :id AND expires_at > %NOW%""";

	private static final String EVICT_LIVE = """
			DELETE FROM %TABLE%
			WHERE id = :id AND expires_at > %NOW%""";

	private static final String EVICT_EXPIRED = """
			DELETE FROM %TABLE%
			WHERE id = :id""";

	private static final String DELETE_EXPIRED = """
			DELETE FROM %TABLE%
			WHERE purge_after <= %NOW% AND expires_at <= %NOW% AND NOT (status = 'P' AND lease_expires_at > %NOW%)
			ORDER BY purge_after
			LIMIT :batchSize""";

	private static final String SCHEDULE_UNSCHEDULED = """
			UPDATE %TABLE%
			SET purge_after = GREATEST(expires_at, COALESCE(lease_expires_at, expires_at))
			WHERE purge_after IS NULL
			LIMIT :batchSize""";

	// the session's idle limit before the transaction's first claim set it, and setting
	// it; the value is MariaDB's in seconds
	private static final String LIMIT_IDLE = "SET @idempotency_idle_before = @@session.idle_transaction_timeout,"
			+ " @@session.idle_transaction_timeout = ?";

	private static final String RESTORE_IDLE = "SET @@session.idle_transaction_timeout = @idempotency_idle_before";

	private final PositionalStatement insertClaim;

	private final PositionalStatement insertClaimGuarded;

	private final PositionalStatement readClaimed;

	private final PositionalStatement readClaimedLocking;

	private final PositionalStatement readClaimedLockingGuarded;

	private final PositionalStatement takeOver;

	private final PositionalStatement takeOverGuarded;

	private final PositionalStatement scheduleTakeover;

	private final PositionalStatement scheduleTakeoverGuarded;

	private final PositionalStatement complete;

	private final PositionalStatement completedByOwner;

	private final PositionalStatement insertCompleted;

	private final PositionalStatement overwriteCompleted;

	private final PositionalStatement releaseLive;

	private final PositionalStatement releaseExpired;

	private final PositionalStatement extend;

	private final PositionalStatement extended;

	private final PositionalStatement find;

	private final PositionalStatement evictLive;

	private final PositionalStatement evictExpired;

	private final PositionalStatement deleteExpired;

	private final PositionalStatement scheduleUnscheduled;

	// the key of the transaction resource that marks the idle limit as set
	private final Object idleLimitKey = new Object();

	// the largest encoded response a completion sends, from the server's
	// max_allowed_packet; 0 until read
	private volatile long largestResponse;

	// whether the server rolls back only the statement that met a lock wait time-out,
	// read once: innodb_rollback_on_timeout is fixed at the server's start
	private volatile boolean statementRollbackChecked;

	MariaDbRecordTable(TableName table, JdbcDialect dialect) {
		super(table, dialect);
		String[] claim = { "id", "scope", "key", "fingerprint", "owner", "leaseMillis", "ttlMillis" };
		this.insertClaim = statement(INSERT_CLAIM, claim);
		this.insertClaimGuarded = statement(NO_WAIT + INSERT_CLAIM, claim);
		this.readClaimed = statement(READ_CLAIMED, "id");
		this.readClaimedLocking = statement(READ_CLAIMED + " LOCK IN SHARE MODE", "id");
		// NOWAIT rather than SET STATEMENT: MySQL Connector/J refuses to run a query that
		// starts with SET as one (it expects no result set)
		this.readClaimedLockingGuarded = statement(READ_CLAIMED + " LOCK IN SHARE MODE NOWAIT", "id");
		String[] takeOver = { "id", "fingerprint", "owner", "seenOwner", "leaseMillis", "ttlMillis", "atOnce" };
		this.takeOver = statement(TAKE_OVER, takeOver);
		this.takeOverGuarded = statement(NO_WAIT + TAKE_OVER, takeOver);
		this.scheduleTakeover = statement(SCHEDULE_TAKEOVER, "id", "seenOwner", "leaseMillis");
		this.scheduleTakeoverGuarded = statement(NO_WAIT + SCHEDULE_TAKEOVER, "id", "seenOwner", "leaseMillis");
		this.complete = statement(COMPLETE, "id", "owner", "response", "ttlMillis");
		this.completedByOwner = statement(COMPLETED_BY_OWNER, "id", "owner");
		String[] completed = { "id", "scope", "key", "fingerprint", "owner", "response", "ttlMillis" };
		this.insertCompleted = statement(INSERT_COMPLETED, completed);
		this.overwriteCompleted = statement(OVERWRITE_COMPLETED, completed);
		this.releaseLive = statement(RELEASE_LIVE, "id", "owner");
		this.releaseExpired = statement(RELEASE_EXPIRED, "id", "owner");
		this.extend = statement(EXTEND, "id", "owner", "leaseMillis");
		this.extended = statement(EXTENDED, "id", "owner");
		this.find = statement(FIND, "id");
		this.evictLive = statement(EVICT_LIVE, "id");
		this.evictExpired = statement(EVICT_EXPIRED, "id");
		this.deleteExpired = statement(DELETE_EXPIRED, "batchSize");
		this.scheduleUnscheduled = statement(SCHEDULE_UNSCHEDULED, "batchSize");
	}

	private PositionalStatement statement(String template, String... parameters) {
		return new PositionalStatement(this.table.substitute(template.replace("%NOW%", NOW)), parameters);
	}

	// On a connection of the store's own: the insert first, and the record read only
	// when the key has one. A guarded insert that meets a row held by another
	// transaction fails at once; the claim then reads what was committed before, without
	// a lock. With auto-commit off, the row locks that the insert's duplicate check and
	// the locking read took are released (committed) before a takeover writes the row:
	// two takers holding a shared lock on it would otherwise deadlock on their writes.
	// In the application's transaction (the transactional mode) the record is read
	// first, from the transaction's snapshot and without a lock, and the insert made
	// only for a key without one: the duplicate check of an insert, and a locking read,
	// hold a shared lock on the row until the transaction ends, which would hold up
	// every takeover meanwhile (two takers holding it could neither write).
	@Override
	@Nullable ClaimRow claim(Operation operation, Claim claim, ClaimForm form, boolean guarded, int attempt) throws SQLException {
		if (guarded) {
			requireTransactionalClaims(operation);
		}
		if (operation.isTransaction()) {
			return claimInTransaction(operation, claim);
		}
		if (insert(operation, claim, guarded)) {
			return RecordRows.Inserted.ROW;
		}
		Connection connection = operation.connection();
		try {
			return read(operation, guarded ? this.readClaimedLockingGuarded : this.readClaimedLocking, claim.id(),
					false);
		}
		catch (SQLException ex) {
			if (!guarded || ex.getErrorCode() != LOCK_WAIT_TIMEOUT) {
				throw ex;
			}
			return readHeld(operation, claim.id());
		}
		finally {
			if (!connection.getAutoCommit()) {
				connection.commit();
			}
		}
	}

	private ClaimRow claimInTransaction(Operation operation, Claim claim) throws SQLException {
		limitIdleTransaction(operation, claim.idleMillis());
		ExistingRecord existing = read(operation, this.readClaimed, claim.id(), false);
		if (existing != null) {
			return existing;
		}
		if (insert(operation, claim, true)) {
			return RecordRows.Inserted.ROW;
		}
		// No row in the snapshot, and yet the key has one: held by a transaction not yet
		// committed, or committed after the snapshot began (a duplicate that waits for
		// the first request reads again in the same transaction). The latest committed
		// row, by a locking read that does not wait; its shared lock lasts until this
		// transaction ends, which only a request that found its key held pays.
		try {
			existing = read(operation, this.readClaimedLockingGuarded, claim.id(), false);
		}
		catch (SQLException ex) {
			if (ex.getErrorCode() != LOCK_WAIT_TIMEOUT) {
				throw ex;
			}
		}
		return (existing != null) ? existing : RecordRows.HeldElsewhere.ROW;
	}

	// true if the claim inserted its row; false if the key has one, or (guarded) a
	// transaction not yet committed holds it
	private boolean insert(Operation operation, Claim claim, boolean guarded) throws SQLException {
		Object[] values = { claim.id(), claim.key().scope(), claim.key().key(), claim.fingerprintBytes(),
				bytes(claim.owner()), claim.leaseMillis(), claim.ttlMillis() };
		try (PreparedStatement statement = operation.prepare(guarded ? this.insertClaimGuarded : this.insertClaim,
				values)) {
			return statement.executeUpdate() == 1;
		}
		catch (SQLException ex) {
			if (guarded && ex.getErrorCode() == LOCK_WAIT_TIMEOUT) {
				return false;
			}
			throw ex;
		}
	}

	// another transaction holds the key's row: the record committed before it, if any,
	// which that transaction may be changing
	private ClaimRow readHeld(Operation operation, byte[] id) throws SQLException {
		ExistingRecord existing = read(operation, this.readClaimed, id, true);
		return (existing != null) ? existing : RecordRows.HeldElsewhere.ROW;
	}

	private @Nullable ExistingRecord read(Operation operation, PositionalStatement statement, byte[] id,
			boolean lockedElsewhere) throws SQLException {
		try (PreparedStatement prepared = operation.prepare(statement, (Object) id);
				ResultSet row = prepared.executeQuery()) {
			if (!row.next()) {
				return null;
			}
			LocalDateTime readAt = row.getObject("read_at", LocalDateTime.class);
			LocalDateTime expiresAt = row.getObject("expires_at", LocalDateTime.class);
			LocalDateTime leaseExpiresAt = row.getObject("lease_expires_at", LocalDateTime.class);
			LocalDateTime takeoverAt = row.getObject("takeover_at", LocalDateTime.class);
			if (readAt == null || expiresAt == null) {
				throw new IdempotencyStoreException("Record has no expiry, or the database gave no time");
			}
			return new ExistingRecord(RequestFingerprint.of(row.getBytes("fingerprint")),
					"P".equals(row.getString("status")), uuid(row.getBytes("owner_token")), row.getBytes("response"),
					utc(expiresAt), reached(expiresAt, readAt), reached(leaseExpiresAt, readAt),
					millisUntil(leaseExpiresAt, readAt, true), millisUntil(expiresAt, readAt, false),
					takeoverAt != null, reached(takeoverAt, readAt), millisUntil(takeoverAt, readAt, true),
					lockedElsewhere);
		}
	}

	// whether a time of the record is at or before the statement's time (false for none,
	// as SQL's comparison with NULL reads)
	static boolean reached(@Nullable LocalDateTime time, LocalDateTime readAt) {
		return time != null && !time.isAfter(readAt);
	}

	// the whole milliseconds from the statement's time to a time of the record, rounded
	// up (what remains of a lease, or until a takeover) or down (what remains of a
	// record's time to live); 0 for none. The columns hold microseconds, which the
	// difference keeps exactly.
	static long millisUntil(@Nullable LocalDateTime time, LocalDateTime readAt, boolean roundUp) {
		if (time == null) {
			return 0;
		}
		long micros = ChronoUnit.MICROS.between(readAt, time);
		return roundUp ? -Math.floorDiv(-micros, 1000) : Math.floorDiv(micros, 1000);
	}

	private void requireTransactionalClaims(Operation operation) throws SQLException {
		if (!this.dialect.supportsTransactionalClaims()) {
			throw new IdempotencyStoreException("Transactional claims need MariaDB: " + this.dialect.displayName()
					+ " cannot make a claim that does not wait behind an uncommitted one"
					+ " (no statement-level innodb_lock_wait_timeout of 0)");
		}
		if (this.statementRollbackChecked) {
			return;
		}
		try (Statement statement = operation.connection().createStatement();
				ResultSet result = statement.executeQuery("SELECT @@global.innodb_rollback_on_timeout")) {
			if (result.next() && result.getBoolean(1)) {
				// a duplicate's claim would roll back the whole transaction it runs in
				throw new IdempotencyStoreException("Transactional claims need innodb_rollback_on_timeout=OFF"
						+ " (MariaDB's default): with it ON, a claim that finds its key held by another"
						+ " transaction would roll back the whole transaction it runs in");
			}
		}
		this.statementRollbackChecked = true;
	}

	// Once per transaction: the server closes the connection of a transaction idle for
	// longer than the request's time-out, which rolls the claim back; the transaction's
	// completion sets the session's previous limit back.
	private void limitIdleTransaction(Operation operation, long idleMillis) throws SQLException {
		if (!TransactionSynchronizationManager.isSynchronizationActive()
				|| TransactionSynchronizationManager.hasResource(this.idleLimitKey)) {
			return;
		}
		Connection connection = operation.connection();
		try (PreparedStatement statement = connection.prepareStatement(LIMIT_IDLE)) {
			statement.setLong(1, Math.max(1, (idleMillis + 999) / 1000));
			statement.execute();
		}
		TransactionSynchronizationManager.bindResource(this.idleLimitKey, Boolean.TRUE);
		TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

			@Override
			public void afterCompletion(int status) {
				TransactionSynchronizationManager.unbindResourceIfPossible(MariaDbRecordTable.this.idleLimitKey);
				try (Statement statement = connection.createStatement()) {
					statement.execute(RESTORE_IDLE);
				}
				catch (SQLException ex) {
					// the connection is gone (closed by the limit itself, say): the
					// pool drops it, and the session with its setting
				}
			}

		});
	}

	@Override
	Write takeOver(Operation operation, Claim claim, UUID seenOwner, boolean atOnce, boolean guarded)
			throws SQLException {
		return write(operation, guarded ? this.takeOverGuarded : this.takeOver, guarded, claim.id(),
				claim.fingerprintBytes(), bytes(claim.owner()), bytes(seenOwner), claim.leaseMillis(),
				claim.ttlMillis(), atOnce);
	}

	@Override
	Write scheduleTakeover(Operation operation, Claim claim, UUID seenOwner, boolean guarded) throws SQLException {
		return write(operation, guarded ? this.scheduleTakeoverGuarded : this.scheduleTakeover, guarded, claim.id(),
				bytes(seenOwner), claim.leaseMillis());
	}

	// In the application's transaction, a write that missed the row it read means the
	// row changed since the transaction's snapshot, which a read in the same transaction
	// may go on showing (REPEATABLE READ): the key is answered as held, as for a row
	// another transaction is writing, rather than read again.
	private Write write(Operation operation, PositionalStatement statement, boolean guarded, Object... values)
			throws SQLException {
		try (PreparedStatement prepared = operation.prepare(statement, values)) {
			if (prepared.executeUpdate() == 1) {
				return Write.DONE;
			}
			return operation.isTransaction() ? Write.LOCKED : Write.MISSED;
		}
		catch (SQLException ex) {
			if (guarded && ex.getErrorCode() == LOCK_WAIT_TIMEOUT) {
				return Write.LOCKED;
			}
			throw ex;
		}
	}

	@Override
	boolean complete(Operation operation, byte[] id, UUID owner, byte[] response, long ttlMillis) throws SQLException {
		response = fitting(operation, response);
		byte[] ownerBytes = bytes(owner);
		if (update(operation, this.complete, id, ownerBytes, response, ttlMillis) == 1) {
			return true;
		}
		return exists(operation, this.completedByOwner, id, ownerBytes);
	}

	// The completed record inserted if the key has no row (the usual case: one
	// statement), else written over an expired row or the owner's own processing row;
	// a row gone between the two is inserted again.
	@Override
	boolean completeUnclaimed(Operation operation, IdempotencyKey key, RequestFingerprint fingerprint, UUID owner,
			byte[] response, long ttlMillis) throws SQLException {
		response = fitting(operation, response);
		byte[] ownerBytes = bytes(owner);
		Object[] values = { key.digest(), key.scope(), key.key(), fingerprint.toByteArray(), ownerBytes, response,
				ttlMillis };
		for (int attempt = 1; attempt <= 2; attempt++) {
			if (update(operation, this.insertCompleted, values) == 1
					|| update(operation, this.overwriteCompleted, values) == 1) {
				return true;
			}
			if (exists(operation, this.completedByOwner, key.digest(), ownerBytes)) {
				return true;
			}
			if (exists(operation, this.find, (Object) key.digest())) {
				// a live row of another owner
				return false;
			}
		}
		return false;
	}

	// A statement larger than max_allowed_packet fails, and a completion that fails
	// leaves the key in progress: its lease lapses and a retry runs the handler again,
	// and again. A response the server cannot take is stored as too large instead: the
	// request did complete, and its retries are answered that it cannot be replayed. The
	// bound is half the packet, less room for the statement: MySQL Connector/J sends
	// binary values escaped, up to twice their size.
	private byte[] fitting(Operation operation, byte[] response) throws SQLException {
		long largest = this.largestResponse;
		if (largest == 0) {
			try (Statement statement = operation.connection().createStatement();
					ResultSet result = statement.executeQuery("SELECT @@max_allowed_packet")) {
				largest = (result.next() ? result.getLong(1) : 16L << 20) / 2 - 64 * 1024;
			}
			this.largestResponse = largest;
		}
		if (response.length <= largest) {
			return response;
		}
		logger.warn("A response of " + response.length + " bytes is larger than " + this.dialect.displayName()
				+ " takes in one statement (half of max_allowed_packet, less 64 KiB: " + largest
				+ " bytes); stored as too large, so its retries are answered that it cannot be replayed."
				+ " Raise max_allowed_packet or lower idempotency.max-response-body");
		return RecordRows.TOO_LARGE_TO_STORE;
	}

	@Override
	boolean release(Operation operation, byte[] id, UUID owner) throws SQLException {
		byte[] ownerBytes = bytes(owner);
		if (update(operation, this.releaseLive, id, ownerBytes) == 1) {
			return true;
		}
		update(operation, this.releaseExpired, id, ownerBytes);
		return false;
	}

	@Override
	boolean extend(Operation operation, byte[] id, UUID owner, long leaseMillis) throws SQLException {
		byte[] ownerBytes = bytes(owner);
		if (update(operation, this.extend, id, ownerBytes, leaseMillis) == 1) {
			return true;
		}
		// a connection counting changed rows reports 0 for a renewal that found the
		// lease already where it set it
		return exists(operation, this.extended, id, ownerBytes);
	}

	@Override
	Optional<IdempotencyRecord> find(Operation operation, byte[] id, IdempotencyKey key, RecordRows rows)
			throws SQLException {
		try (PreparedStatement statement = operation.prepare(this.find, (Object) id);
				ResultSet row = statement.executeQuery()) {
			if (!row.next()) {
				return Optional.empty();
			}
			return Optional.of(rows.record(new IdempotencyKey(row.getString("scope"), row.getString("idem_key")),
					row.getBytes("fingerprint"), row.getString("status"), uuid(row.getBytes("owner_token")),
					utc(row.getObject("created_at", LocalDateTime.class)),
					utc(row.getObject("lease_expires_at", LocalDateTime.class)),
					utc(row.getObject("expires_at", LocalDateTime.class)), row.getBytes("response"),
					row.getLong("ttl_ms"), key));
		}
	}

	@Override
	boolean evict(Operation operation, byte[] id) throws SQLException {
		if (update(operation, this.evictLive, (Object) id) == 1) {
			return true;
		}
		update(operation, this.evictExpired, (Object) id);
		return false;
	}

	@Override
	int scheduleUnscheduled(Operation operation, int batchSize) throws SQLException {
		return readCommitted(operation, this.scheduleUnscheduled, batchSize);
	}

	@Override
	int purgeExpired(Operation operation, int batchSize) throws SQLException {
		return readCommitted(operation, this.deleteExpired, batchSize);
	}

	// At REPEATABLE READ, InnoDB locks the gaps a ranged delete scans, which would
	// hold up (or, for a guarded claim, refuse) claims of new keys that fall into them.
	private int readCommitted(Operation operation, PositionalStatement statement, int batchSize) throws SQLException {
		Connection connection = operation.connection();
		int isolation = connection.getTransactionIsolation();
		if (isolation != Connection.TRANSACTION_READ_COMMITTED) {
			connection.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
		}
		try {
			return update(operation, statement, batchSize);
		}
		finally {
			if (isolation != Connection.TRANSACTION_READ_COMMITTED) {
				if (!connection.getAutoCommit()) {
					// the isolation of a transaction that has begun cannot change
					connection.commit();
				}
				connection.setTransactionIsolation(isolation);
			}
		}
	}

	private static int update(Operation operation, PositionalStatement statement, Object... values)
			throws SQLException {
		try (PreparedStatement prepared = operation.prepare(statement, values)) {
			return prepared.executeUpdate();
		}
	}

	private static boolean exists(Operation operation, PositionalStatement statement, Object... values)
			throws SQLException {
		try (PreparedStatement prepared = operation.prepare(statement, values);
				ResultSet rows = prepared.executeQuery()) {
			return rows.next();
		}
	}

	static byte[] bytes(UUID uuid) {
		return ByteBuffer.allocate(16)
			.putLong(uuid.getMostSignificantBits())
			.putLong(uuid.getLeastSignificantBits())
			.array();
	}

	private static UUID uuid(byte @Nullable [] bytes) {
		if (bytes == null || bytes.length != 16) {
			throw new IdempotencyStoreException("Record has no owner token of 16 bytes");
		}
		ByteBuffer buffer = ByteBuffer.wrap(bytes);
		return new UUID(buffer.getLong(), buffer.getLong());
	}

	private static @Nullable OffsetDateTime utc(@Nullable LocalDateTime time) {
		return (time != null) ? time.atOffset(ZoneOffset.UTC) : null;
	}

}
