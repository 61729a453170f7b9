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

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;
import java.util.UUID;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.spring.store.jdbc.JdbcOperationRunner.Operation;
import dev.idempotency.spring.store.jdbc.RecordRows.ClaimRow;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.ResultSetExtractor;

/**
 * The records table in PostgreSQL's SQL. A key is claimed by
 * {@code INSERT ... ON CONFLICT (id) DO NOTHING}, alone or combined in one round trip
 * with a read of the record already there (a CTE); a guarded claim takes the key's
 * transaction-level advisory lock ({@code pg_try_advisory_xact_lock}) in the same
 * statement and inserts only when it got it, so that it never waits on the unique index
 * behind a claim not yet committed. Every instant comes from {@code now()}. The
 * statements share the columns they read and build on one another ({@code ACQUIRE} on
 * {@code INSERT_CLAIM}); each comment says what its statement does for the store.
 * <p>
 * Immutable and thread-safe.
 *
 * @author Idempotency contributors
 */
final class PostgresRecordTable extends RecordTable {

	// the boolean a statement returns, false when it returns no row
	private static final ResultSetExtractor<Boolean> FIRST_ROW_TRUE = (rows) -> rows.next() && rows.getBoolean(1);

	// The record a claim found, classified by the database clock: the columns of both
	// claim statements after their leading flags.
	private static final String EXISTING_RECORD = """
			t.fingerprint, t.status::text, t.owner_token, t.response, t.expires_at,
				t.expires_at <= now(), t.lease_expires_at <= now(),
				ceil(extract(epoch FROM t.lease_expires_at - now()) * 1000)::bigint,
				floor(extract(epoch FROM t.expires_at - now()) * 1000)::bigint,
				t.takeover_at IS NOT NULL, t.takeover_at <= now(),
				ceil(extract(epoch FROM t.takeover_at - now()) * 1000)::bigint""";

	// The claim of an absent key; a key with a row is left as it is. On its own, it is
	// the first statement of acquireFresh: a key the fast tier has just granted is almost
	// always new, and this plain insert costs PostgreSQL less CPU than ACQUIRE, whose CTE
	// and second branch only a key with a row needs.
	private static final String INSERT_CLAIM = """
			INSERT INTO %TABLE% (id, scope, idem_key, fingerprint, status, owner_token,
				created_at, lease_expires_at, expires_at, purge_after)
			VALUES (:id, :scope, :key, :fingerprint, 'P', :owner, now(),
				now() + :leaseMillis * INTERVAL '1 millisecond', now() + :ttlMillis * INTERVAL '1 millisecond',
				now() + (:ttlMillis + :leaseMillis) * INTERVAL '1 millisecond')
			ON CONFLICT (id) DO NOTHING""";

	// Claims an absent key or, when a row is there, returns it classified by the
	// database clock, in one round trip. If the conflicting row was committed after this
	// statement's snapshot, neither branch returns a row and the caller tries again.
	// %RELAXED% and %CLAIMED% tell ACQUIRE and ACQUIRE_UNFLUSHED apart.
	private static final String CLAIM_OR_READ = """
			WITH ins AS (
				%INSERT_CLAIM%
				RETURNING 1
			)%RELAXED%
			SELECT true AS inserted, NULL::bytea AS fingerprint, NULL::text AS status,
				NULL::uuid AS owner_token, NULL::bytea AS response, NULL::timestamptz AS expires_at,
				false AS expired, false AS lapsed, NULL::bigint AS lease_remaining_ms, NULL::bigint AS ttl_ms,
				false AS takeover_marked, false AS takeover_due, NULL::bigint AS takeover_remaining_ms
			FROM %CLAIMED%
			UNION ALL
			SELECT false, %EXISTING_RECORD%
			FROM %TABLE% t
			WHERE t.id = :id AND NOT EXISTS (SELECT 1 FROM ins)
			""".replace("%INSERT_CLAIM%", INSERT_CLAIM).replace("%EXISTING_RECORD%", EXISTING_RECORD);

	private static final String ACQUIRE = CLAIM_OR_READ.replace("%RELAXED%", "").replace("%CLAIMED%", "ins");

	// The claim committed without waiting for its WAL flush. set_config(..., true) lasts
	// until the end of the statement's transaction, its commit; it is evaluated once per
	// inserted row, so a claim that inserts nothing (and the takeover that may follow it
	// on the same connection) keeps the synchronous commit.
	private static final String ACQUIRE_UNFLUSHED = CLAIM_OR_READ.replace("%RELAXED%", """
			, relaxed AS (
				SELECT set_config('synchronous_commit', 'off', true) FROM ins
			)""").replace("%CLAIMED%", "relaxed");

	// The key's advisory lock, taken if free, for the guarded claims below. The claim
	// also bounds how long its transaction may then sit idle (a handler hung outside the
	// database) to the request's time-out (RequestTransactions.timeout): past that,
	// PostgreSQL ends the session, which rolls the claim back and frees the key
	// (set_config(..., true) lasts until the transaction ends).
	private static final String GUARD = """
			WITH guard AS (
				SELECT pg_try_advisory_xact_lock(:lockKey) AS held,
					set_config('idle_in_transaction_session_timeout', (:idleMillis)::text, true) AS idle_limit
			)""";

	// The claim's insert, made only by the holder of the key's lock.
	private static final String GUARDED_INSERT = """
			INSERT INTO %TABLE% (id, scope, idem_key, fingerprint, status, owner_token,
				created_at, lease_expires_at, expires_at, purge_after)
			SELECT :id, :scope, :key, :fingerprint, 'P', :owner, now(),
				now() + :leaseMillis * INTERVAL '1 millisecond', now() + :ttlMillis * INTERVAL '1 millisecond',
				now() + (:ttlMillis + :leaseMillis) * INTERVAL '1 millisecond'
			FROM guard WHERE guard.held
			ON CONFLICT (id) DO NOTHING""";

	// The claim when claims may be held by transactions not yet committed (the
	// transactional mode): an advisory lock on the key guards the insert. A claimant
	// that cannot take it at once does not insert, so it never waits on the unique
	// index behind an uncommitted claim: it reads the record committed before its
	// statement began (a replay, say), or, with none, answers that the key is held.
	// The lock ends with the claimant's transaction: at once for an auto-committed
	// claim, at the commit or rollback of a transactional one.
	private static final String ACQUIRE_GUARDED = GUARD + ", ins AS (\n" + GUARDED_INSERT + """

				RETURNING 1
			)
			SELECT true AS inserted, false AS held_elsewhere, NULL::bytea AS fingerprint, NULL::text AS status,
				NULL::uuid AS owner_token, NULL::bytea AS response, NULL::timestamptz AS expires_at,
				false AS expired, false AS lapsed, NULL::bigint AS lease_remaining_ms, NULL::bigint AS ttl_ms,
				false AS takeover_marked, false AS takeover_due, NULL::bigint AS takeover_remaining_ms
			FROM ins
			UNION ALL
			SELECT false, NOT guard.held, %EXISTING_RECORD%
			FROM %TABLE% t CROSS JOIN guard
			WHERE t.id = :id AND NOT EXISTS (SELECT 1 FROM ins)
			UNION ALL
			SELECT false, true, NULL, NULL, NULL, NULL, NULL, false, false, NULL, NULL, false, false, NULL
			FROM guard
			WHERE NOT guard.held AND NOT EXISTS (SELECT 1 FROM %TABLE% t WHERE t.id = :id)
			""".replace("%EXISTING_RECORD%", EXISTING_RECORD);

	// The guarded claim of a key the fast tier has just granted, as INSERT_CLAIM is the
	// plain one. It inserts nothing when the lock is held elsewhere or the key has a
	// row; the caller then goes on with ACQUIRE_GUARDED, which tells the two apart (a
	// lock that this transaction took here it takes again at once).
	private static final String INSERT_CLAIM_GUARDED = GUARD + "\n" + GUARDED_INSERT;

	// Compare-and-set on the owner token that acquire saw: of two takers only the first
	// to lock the row still finds that token. A lapsed lease is taken over once its
	// takeover time has come, or at once without confirmation.
	private static final String TAKE_OVER = """
			UPDATE %TABLE%
			SET fingerprint = :fingerprint, status = 'P', owner_token = :owner, response = NULL,
				created_at = now(), lease_expires_at = now() + :leaseMillis * INTERVAL '1 millisecond',
				expires_at = now() + :ttlMillis * INTERVAL '1 millisecond', takeover_at = NULL,
				purge_after = now() + (:ttlMillis + :leaseMillis) * INTERVAL '1 millisecond'
			WHERE id = :id AND owner_token = :seenOwner
				AND (expires_at <= now() OR (status = 'P' AND lease_expires_at <= now() AND fingerprint = :fingerprint
					AND (:atOnce OR takeover_at <= now())))
			""";

	// The first request to find a lease lapsed sets when it may be taken over; the
	// owner's next renewal clears that again.
	private static final String SCHEDULE_TAKEOVER = """
			UPDATE %TABLE%
			SET takeover_at = now() + :leaseMillis * INTERVAL '1 millisecond'
			WHERE id = :id AND owner_token = :seenOwner AND status = 'P' AND lease_expires_at <= now()
				AND takeover_at IS NULL AND expires_at > now()
			""";

	// A completion within the lease, with the claim's time to live, leaves purge_after
	// as the claim set it (past the new expiry), so that it changes no indexed column and
	// PostgreSQL can make it a heap-only (HOT) update: no new index entries. A shorter
	// time to live brings purge_after forward to the new expiry. A plain UPDATE rather
	// than one that also looks for the row completed (COMPLETED_BY_OWNER) in a CTE: that
	// form cost PostgreSQL a tenth more CPU per first request, for a case (a retry after
	// a lost reply) that almost never happens.
	private static final String COMPLETE = """
			UPDATE %TABLE%
			SET status = 'C', response = :response, lease_expires_at = NULL,
				expires_at = now() + :ttlMillis * INTERVAL '1 millisecond', takeover_at = NULL,
				purge_after = CASE WHEN now() + :ttlMillis * INTERVAL '1 millisecond' < expires_at
					THEN now() + :ttlMillis * INTERVAL '1 millisecond'
					ELSE GREATEST(purge_after, now() + :ttlMillis * INTERVAL '1 millisecond') END
			WHERE id = :id AND owner_token = :owner AND status = 'P' AND expires_at > now()
			""";

	// A completion that changed no row may be the retry of one
	// that committed but whose reply was lost: finding the row
	// completed with its own token is a success, not a fencing.
	private static final String COMPLETED_BY_OWNER = """
			SELECT 1 FROM %TABLE%
			WHERE id = :id AND owner_token = :owner AND status = 'C' AND expires_at > now()
			""";

	// The one write of a lookup-mode first request: insert the completed record, or
	// overwrite an expired row or our own processing row, never a live row of another
	// owner. A completion retried by the same owner finds its own completed row.
	private static final String COMPLETE_UNCLAIMED = """
			WITH ups AS (
				INSERT INTO %TABLE% AS t (id, scope, idem_key, fingerprint, status, owner_token, created_at,
					lease_expires_at, expires_at, response, purge_after)
				VALUES (:id, :scope, :key, :fingerprint, 'C', :owner, now(), NULL,
					now() + :ttlMillis * INTERVAL '1 millisecond', :response, now() + :ttlMillis * INTERVAL '1 millisecond')
				ON CONFLICT (id) DO UPDATE
				SET scope = EXCLUDED.scope, idem_key = EXCLUDED.idem_key, fingerprint = EXCLUDED.fingerprint,
					status = 'C', owner_token = EXCLUDED.owner_token,
					created_at = CASE WHEN t.expires_at <= now() THEN now() ELSE t.created_at END,
					lease_expires_at = NULL, expires_at = EXCLUDED.expires_at, response = EXCLUDED.response,
					takeover_at = NULL, purge_after = CASE WHEN EXCLUDED.expires_at < t.expires_at
						THEN EXCLUDED.purge_after ELSE GREATEST(t.purge_after, EXCLUDED.purge_after) END
				WHERE t.expires_at <= now() OR (t.owner_token = EXCLUDED.owner_token AND t.status = 'P')
				RETURNING 1
			)
			SELECT EXISTS (SELECT 1 FROM ups) OR EXISTS (
				SELECT 1 FROM %TABLE%
				WHERE id = :id AND owner_token = :owner AND status = 'C' AND expires_at > now())
			""";

	// An expired row behaves as absent (false) but is deleted all the same.
	private static final String RELEASE = """
			DELETE FROM %TABLE%
			WHERE id = :id AND owner_token = :owner AND status = 'P'
			RETURNING expires_at > now()
			""";

	private static final String EXTEND = """
			UPDATE %TABLE%
			SET lease_expires_at = now() + :leaseMillis * INTERVAL '1 millisecond',
				expires_at = GREATEST(expires_at, now() + :leaseMillis * INTERVAL '1 millisecond'), takeover_at = NULL,
				purge_after = GREATEST(purge_after, expires_at, now() + :leaseMillis * INTERVAL '1 millisecond')
			WHERE id = :id AND owner_token = :owner AND status = 'P' AND expires_at > now()
			""";

	// the remaining lifetime is rounded down: no copy made from it may outlive the row
	private static final String FIND = """
			SELECT scope, idem_key, fingerprint, status::text AS status, owner_token, created_at,
				lease_expires_at, expires_at, response,
				floor(extract(epoch FROM expires_at - now()) * 1000)::bigint AS ttl_ms
			FROM %TABLE%
			WHERE id = :id AND expires_at > now()
			""";

	private static final String EVICT = """
			DELETE FROM %TABLE%
			WHERE id = :id
			RETURNING expires_at > now()
			""";

	// Rows are found by purge_after, which the store keeps at or past expires_at and
	// which, unlike expires_at, a completion within the lease leaves unchanged. The
	// expiry and the lease are checked again on the row all the same.
	private static final String DELETE_EXPIRED = """
			DELETE FROM %TABLE%
			WHERE id IN (
				SELECT id FROM %TABLE%
				WHERE purge_after <= now() AND expires_at <= now() AND NOT (status = 'P' AND lease_expires_at > now())
				ORDER BY purge_after
				LIMIT :batchSize
				FOR UPDATE SKIP LOCKED)
			""";

	// Rows without purge_after (written before the column existed, or by an older
	// version of the library during a rolling upgrade) get one from their expiry, once,
	// so that the delete finds them.
	private static final String SCHEDULE_UNSCHEDULED = """
			UPDATE %TABLE%
			SET purge_after = GREATEST(expires_at, lease_expires_at)
			WHERE id IN (
				SELECT id FROM %TABLE%
				WHERE purge_after IS NULL
				LIMIT :batchSize
				FOR UPDATE SKIP LOCKED)
			""";

	private final PositionalStatement acquire;

	private final PositionalStatement acquireGuarded;

	private final PositionalStatement acquireUnflushed;

	private final PositionalStatement insertClaim;

	private final PositionalStatement insertClaimGuarded;

	// mixed into a key's advisory lock: one key in two tables takes two locks
	private final long lockSalt;

	private final String takeOver;

	private final String scheduleTakeover;

	private final PositionalStatement complete;

	private final PositionalStatement completedByOwner;

	private final String completeUnclaimed;

	private final String release;

	private final String extend;

	private final String find;

	private final String evict;

	private final String deleteExpired;

	private final String scheduleUnscheduled;

	PostgresRecordTable(TableName table) {
		super(table, JdbcDialect.POSTGRESQL);
		this.acquire = new PositionalStatement(table.substitute(ACQUIRE), "id", "scope", "key", "fingerprint", "owner",
				"leaseMillis", "ttlMillis");
		this.acquireGuarded = new PositionalStatement(table.substitute(ACQUIRE_GUARDED), "lockKey", "id", "scope",
				"key", "fingerprint", "owner", "leaseMillis", "ttlMillis", "idleMillis");
		this.acquireUnflushed = new PositionalStatement(table.substitute(ACQUIRE_UNFLUSHED), "id", "scope", "key",
				"fingerprint", "owner", "leaseMillis", "ttlMillis");
		this.insertClaim = new PositionalStatement(table.substitute(INSERT_CLAIM), "id", "scope", "key", "fingerprint",
				"owner", "leaseMillis", "ttlMillis");
		this.insertClaimGuarded = new PositionalStatement(table.substitute(INSERT_CLAIM_GUARDED), "lockKey", "id",
				"scope", "key", "fingerprint", "owner", "leaseMillis", "ttlMillis", "idleMillis");
		this.lockSalt = fnv1a(table.qualifiedName());
		this.takeOver = table.substitute(TAKE_OVER);
		this.scheduleTakeover = table.substitute(SCHEDULE_TAKEOVER);
		this.complete = new PositionalStatement(table.substitute(COMPLETE), "id", "owner", "response", "ttlMillis");
		this.completedByOwner = new PositionalStatement(table.substitute(COMPLETED_BY_OWNER), "id", "owner");
		this.completeUnclaimed = table.substitute(COMPLETE_UNCLAIMED);
		this.release = table.substitute(RELEASE);
		this.extend = table.substitute(EXTEND);
		this.find = table.substitute(FIND);
		this.evict = table.substitute(EVICT);
		this.deleteExpired = table.substitute(DELETE_EXPIRED);
		this.scheduleUnscheduled = table.substitute(SCHEDULE_UNSCHEDULED);
	}

	// The insert alone on the first attempt of a claim that asked for it (and of every
	// guarded claim: the combined guarded statement plans three branches for a key that
	// is almost always new, docs/benchmarks/transactional.md); then the combined
	// statement, which reads
	// the row, on the same connection. No row from it: the conflicting row was committed
	// after its snapshot.
	@Override
	@Nullable ClaimRow claim(Operation operation, Claim claim, ClaimForm form, boolean guarded, int attempt) throws SQLException {
		Object[] values = values(claim, guarded);
		if (attempt == 1 && (guarded || form == ClaimForm.INSERT_FIRST)) {
			try (PreparedStatement statement = operation.prepare(guarded ? this.insertClaimGuarded : this.insertClaim,
					values)) {
				if (statement.executeUpdate() == 1) {
					return RecordRows.Inserted.ROW;
				}
			}
		}
		PositionalStatement select = guarded ? this.acquireGuarded
				: (form == ClaimForm.UNFLUSHED) ? this.acquireUnflushed : this.acquire;
		try (PreparedStatement statement = operation.prepare(select, values);
				ResultSet result = statement.executeQuery()) {
			return result.next() ? RecordRows.claimRow(result, guarded) : null;
		}
	}

	// the values of the claim statements, in their declared order; a guarded claim also
	// binds the key's lock and how long its transaction may sit idle
	private Object[] values(Claim claim, boolean guarded) {
		if (!guarded) {
			return new Object[] { claim.id(), claim.key().scope(), claim.key().key(), claim.fingerprintBytes(),
					claim.owner(), claim.leaseMillis(), claim.ttlMillis() };
		}
		return new Object[] { lockKey(claim.id()), claim.id(), claim.key().scope(), claim.key().key(),
				claim.fingerprintBytes(), claim.owner(), claim.leaseMillis(), claim.ttlMillis(), claim.idleMillis() };
	}

	// a guarded claim writes only after its own statement took the key's lock, so no
	// write here waits for another transaction
	@Override
	Write takeOver(Operation operation, Claim claim, UUID seenOwner, boolean atOnce, boolean guarded) {
		int updated = operation.client()
			.sql(this.takeOver)
			.param("id", claim.id())
			.param("fingerprint", claim.fingerprintBytes())
			.param("owner", claim.owner())
			.param("seenOwner", seenOwner)
			.param("leaseMillis", claim.leaseMillis())
			.param("ttlMillis", claim.ttlMillis())
			.param("atOnce", atOnce)
			.update();
		return (updated == 1) ? Write.DONE : Write.MISSED;
	}

	@Override
	Write scheduleTakeover(Operation operation, Claim claim, UUID seenOwner, boolean guarded) {
		int updated = operation.client()
			.sql(this.scheduleTakeover)
			.param("id", claim.id())
			.param("seenOwner", seenOwner)
			.param("leaseMillis", claim.leaseMillis())
			.update();
		return (updated == 1) ? Write.DONE : Write.MISSED;
	}

	@Override
	boolean complete(Operation operation, byte[] id, UUID owner, byte[] response, long ttlMillis) throws SQLException {
		try (PreparedStatement statement = operation.prepare(this.complete, id, owner, response, ttlMillis)) {
			if (statement.executeUpdate() == 1) {
				return true;
			}
		}
		try (PreparedStatement statement = operation.prepare(this.completedByOwner, id, owner);
				ResultSet rows = statement.executeQuery()) {
			return rows.next();
		}
	}

	@Override
	boolean completeUnclaimed(Operation operation, IdempotencyKey key, RequestFingerprint fingerprint, UUID owner,
			byte[] response, long ttlMillis) {
		return operation.client()
			.sql(this.completeUnclaimed)
			.param("id", key.digest())
			.param("scope", key.scope())
			.param("key", key.key())
			.param("fingerprint", fingerprint.toByteArray())
			.param("owner", owner)
			.param("response", response)
			.param("ttlMillis", ttlMillis)
			.query(FIRST_ROW_TRUE);
	}

	@Override
	boolean release(Operation operation, byte[] id, UUID owner) {
		return operation.client().sql(this.release).param("id", id).param("owner", owner).query(FIRST_ROW_TRUE);
	}

	@Override
	boolean extend(Operation operation, byte[] id, UUID owner, long leaseMillis) {
		return operation.client()
			.sql(this.extend)
			.param("id", id)
			.param("owner", owner)
			.param("leaseMillis", leaseMillis)
			.update() == 1;
	}

	@Override
	Optional<IdempotencyRecord> find(Operation operation, byte[] id, IdempotencyKey key, RecordRows rows) {
		return operation.client()
			.sql(this.find)
			.param("id", id)
			.query((row, rowNum) -> rows.record(row, key))
			.optional();
	}

	@Override
	boolean evict(Operation operation, byte[] id) {
		return operation.client().sql(this.evict).param("id", id).query(FIRST_ROW_TRUE);
	}

	@Override
	int scheduleUnscheduled(Operation operation, int batchSize) {
		return operation.client().sql(this.scheduleUnscheduled).param("batchSize", batchSize).update();
	}

	@Override
	int purgeExpired(Operation operation, int batchSize) {
		return operation.client().sql(this.deleteExpired).param("batchSize", batchSize).update();
	}

	// the key's advisory lock: its digest's first eight bytes, salted with the table
	long lockKey(byte[] id) {
		long digest = 0;
		for (int i = 0; i < Long.BYTES; i++) {
			digest = (digest << 8) | (id[i] & 0xFF);
		}
		return digest ^ this.lockSalt;
	}

	private static long fnv1a(String text) {
		long hash = 0xcbf29ce484222325L;
		for (int i = 0; i < text.length(); i++) {
			hash = (hash ^ text.charAt(i)) * 0x100000001b3L;
		}
		return hash;
	}

}
