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
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

import javax.sql.DataSource;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.IdempotencyStatus;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.StoredResponseCodec;
import dev.idempotency.core.StoredResponseFormatException;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.IdempotencyStoreException;
import dev.idempotency.spring.store.AsynchronousClaimCommit;
import dev.idempotency.spring.store.FreshKeyClaim;
import dev.idempotency.spring.store.StoreDurations;
import dev.idempotency.spring.store.UnclaimedCompletion;
import dev.idempotency.spring.store.jdbc.JdbcOperationRunner.Operation;
import dev.idempotency.spring.transaction.RequestTransactions;
import dev.idempotency.spring.transaction.TransactionalStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.ResultSetExtractor;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * {@link IdempotencyStore} backed by one PostgreSQL table (see
 * {@link JdbcIdempotencySchemaInitializer} for its schema).
 * <p>
 * <b>Atomicity.</b> A key is claimed by a single statement,
 * {@code INSERT ... ON CONFLICT (id) DO NOTHING RETURNING}, combined in one round trip
 * with a read of the record that was already there ({@link #acquireFresh} tries the
 * {@code INSERT} alone first). A record that expired, or whose lease lapsed and stayed
 * lapsed for the confirmation period (see {@link #setConfirmTakeover(boolean)}), is taken
 * over by a conditional {@code UPDATE} that compares the owner token it saw, so that of
 * many concurrent takers exactly one wins. Completion, release and lease extension are
 * single statements conditional on the caller's owner token. Every operation runs as one
 * auto-committed statement (two when a takeover is scheduled or made, when a completion
 * that changed nothing checks whether the same owner completed the row already, and when
 * {@link #acquireFresh} finds a row) on a connection taken from the {@link DataSource}
 * for that operation only: no connection is held while a handler runs, and the store
 * never joins a transaction of the application, so a claim is visible to every instance
 * as soon as {@code acquire} returns. The statements, with named parameters, run through
 * Spring's {@link JdbcClient}, which sees the operation's own connection only, never one
 * that a transaction manager bound to the thread.
 * <p>
 * <b>Plain JDBC where it pays.</b> The two statements of every first request, the claim
 * and the completion, run on plain JDBC instead ({@link PositionalStatement}: the same
 * named-parameter text, turned into JDBC text once and bound by position on the same
 * connection). Measured with the HTTP benchmark's A/B harness, the {@code JdbcClient}
 * path cost the tiered first request about 5% of its throughput and of the application's
 * CPU time against hand-written JDBC (docs/benchmarks.md, "The restructuring's tiered
 * cost"); on plain JDBC, the application's CPU time per tiered first request fell from
 * 342 to 317 us and its throughput rose by 7% (same harness, "Plain JDBC for the claim
 * and the completion"). The rarer statements (takeover, release, extension, lookups, the
 * cleanup) stay on the client.
 * <p>
 * <b>Transactional mode.</b> While a thread's store operations join its transaction
 * ({@link dev.idempotency.spring.transaction.TransactionalClaims}), they run on the
 * transaction's connection instead, uncommitted until the application's own work commits:
 * the claim, the handler's writes and the stored response commit together or not at all,
 * and a crashed owner's claim vanishes with its rolled-back transaction, so no lease
 * needs renewing. Such a claim is guarded by a transaction-level advisory lock on its
 * key, which every claim takes once {@link #setTransactionalClaims(boolean)} is on: a
 * duplicate learns that the key is held without waiting for the transaction.
 * <p>
 * <b>Time.</b> Every instant is computed by PostgreSQL from {@code now()}; durations are
 * sent as milliseconds. The application's clock is never used. Replays and found records
 * report their remaining lifetime as PostgreSQL measures it
 * ({@link AcquireResult.Replay#timeToLive()}, {@link IdempotencyRecord#timeToLive()}), so
 * that a copy made elsewhere never outlives the record whatever the application's clock
 * says.
 * <p>
 * Records are keyed by {@link IdempotencyKey#digest()}; scope and key are stored too, for
 * operators. Responses are stored in the binary form of {@link StoredResponseCodec}. A
 * completed record whose response cannot be decoded (corrupt, or written by a later
 * format version) is answered with {@link StoredResponse#unreadable()} until it expires,
 * and a warning is logged: the request did complete, so it is neither run again nor
 * refused as if the database were down. Expired rows are not deleted by this class:
 * schedule a {@link JdbcIdempotencyCleaner}.
 * <p>
 * As the durable tier of a
 * {@link dev.idempotency.spring.store.tiered.TieredIdempotencyStore} in lookup claim
 * mode, it also stores completions of keys it never claimed ({@link #completeUnclaimed}),
 * with the asynchronous claim commit it claims keys without waiting for the WAL flush
 * ({@link #acquireCommittingAsynchronously}), and it claims a key that the fast tier has
 * just granted with a plain {@code INSERT} first ({@link #acquireFresh}).
 * <p>
 * This class is thread-safe once configured; configure it (setters) before first use. No
 * argument may be {@code null}. Failures of the database or of the connection pool are
 * thrown as {@link IdempotencyStoreException}, caused by Spring's
 * {@link org.springframework.dao.DataAccessException}, or by the
 * {@link java.sql.SQLException} of the pool or, for the claim and the completion, of the
 * driver; connection and socket time-outs are those of the {@link DataSource}.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public class JdbcIdempotencyStore
		implements IdempotencyStore, UnclaimedCompletion, AsynchronousClaimCommit, FreshKeyClaim, TransactionalStore {

	/**
	 * Default name of the records table.
	 */
	public static final String DEFAULT_TABLE_NAME = TableName.DEFAULT;

	// How often acquire starts over when the record it saw changed under it. Each retry
	// follows a concurrent writer's commit, so a handful is plenty.
	private static final int MAX_ACQUIRE_ATTEMPTS = 5;

	private static final Log logger = LogFactory.getLog(JdbcIdempotencyStore.class);

	private static final String STATUS_PROCESSING = "P";

	private static final String STATUS_COMPLETED = "C";

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
	private static final String ACQUIRE = """
			WITH ins AS (
				%INSERT_CLAIM%
				RETURNING 1
			)
			SELECT true AS inserted, NULL::bytea AS fingerprint, NULL::text AS status,
				NULL::uuid AS owner_token, NULL::bytea AS response, NULL::timestamptz AS expires_at,
				false AS expired, false AS lapsed, NULL::bigint AS lease_remaining_ms, NULL::bigint AS ttl_ms,
				false AS takeover_marked, false AS takeover_due, NULL::bigint AS takeover_remaining_ms
			FROM ins
			UNION ALL
			SELECT false, %EXISTING_RECORD%
			FROM %TABLE% t
			WHERE t.id = :id AND NOT EXISTS (SELECT 1 FROM ins)
			""".replace("%INSERT_CLAIM%", INSERT_CLAIM).replace("%EXISTING_RECORD%", EXISTING_RECORD);

	// The claim committed without waiting for its WAL flush. set_config(..., true) lasts
	// until the end of the statement's transaction, its commit; it is evaluated once per
	// inserted row, so a claim that inserts nothing (and the takeover that may follow it
	// on the same connection) keeps the synchronous commit.
	private static final String ACQUIRE_UNFLUSHED = replaceOnce(replaceOnce(ACQUIRE, "FROM ins\n", "FROM relaxed\n"),
			"RETURNING 1\n)\n", """
					RETURNING 1
					), relaxed AS (
						SELECT set_config('synchronous_commit', 'off', true) FROM ins
					)
					""");

	// The claim when claims may be held by transactions not yet committed (the
	// transactional mode): an advisory lock on the key guards the insert. A claimant
	// that cannot take it at once does not insert, so it never waits on the unique
	// index behind an uncommitted claim: it reads the record committed before its
	// statement began (a replay, say), or, with none, answers that the key is held.
	// The lock ends with the claimant's transaction: at once for an auto-committed
	// claim, at the commit or rollback of a transactional one. The claim also bounds how
	// long its transaction may then sit idle (a handler hung outside the database) to
	// the request's time-out (RequestTransactions.timeout): past that, PostgreSQL ends
	// the session, which rolls the claim back and frees the key (set_config(..., true)
	// lasts until the transaction ends).
	private static final String ACQUIRE_GUARDED = """
			WITH guard AS (
				SELECT pg_try_advisory_xact_lock(:lockKey) AS held,
					set_config('idle_in_transaction_session_timeout', (:idleMillis)::text, true) AS idle_limit
			), ins AS (
				INSERT INTO %TABLE% (id, scope, idem_key, fingerprint, status, owner_token,
					created_at, lease_expires_at, expires_at, purge_after)
				SELECT :id, :scope, :key, :fingerprint, 'P', :owner, now(),
					now() + :leaseMillis * INTERVAL '1 millisecond', now() + :ttlMillis * INTERVAL '1 millisecond',
					now() + (:ttlMillis + :leaseMillis) * INTERVAL '1 millisecond'
				FROM guard WHERE guard.held
				ON CONFLICT (id) DO NOTHING
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

	// the text with its one occurrence of target replaced; a statement built from
	// another must fail loudly, not silently, when that other one changes
	private static String replaceOnce(String text, String target, String replacement) {
		int at = text.indexOf(target);
		if (at < 0 || text.indexOf(target, at + 1) >= 0) {
			throw new IllegalStateException("Expected '" + target + "' once in " + text);
		}
		return text.substring(0, at) + replacement + text.substring(at + target.length());
	}

	private static final RowMapper<ClaimRow> CLAIM_ROW = (row, rowNum) -> row.getBoolean("inserted") ? Inserted.ROW
			: ExistingRecord.of(row, false);

	// held_elsewhere: the key's lock is held by another transaction, which has not
	// committed a record (no status) or may be changing the committed one
	private static final RowMapper<ClaimRow> GUARDED_CLAIM_ROW = (row, rowNum) -> {
		if (row.getBoolean("inserted")) {
			return Inserted.ROW;
		}
		boolean heldElsewhere = row.getBoolean("held_elsewhere");
		return (heldElsewhere && row.getString("status") == null) ? HeldElsewhere.ROW
				: ExistingRecord.of(row, heldElsewhere);
	};

	// the boolean a statement returns, false when it returns no row
	private static final ResultSetExtractor<Boolean> FIRST_ROW_TRUE = (rows) -> rows.next() && rows.getBoolean(1);

	private final DataSource dataSource;

	private final JdbcOperationRunner jdbc;

	private volatile Statements statements = new Statements(TableName.parse(DEFAULT_TABLE_NAME));

	private volatile StoredResponseCodec codec = new StoredResponseCodec();

	private volatile boolean confirmTakeover = true;

	private volatile boolean transactionalClaims;

	/**
	 * Create a store that takes a connection from the given data source for each
	 * operation.
	 * @param dataSource the data source, never {@code null}; normally a connection pool
	 */
	public JdbcIdempotencyStore(DataSource dataSource) {
		this.dataSource = Objects.requireNonNull(dataSource, "'dataSource' must not be null");
		this.jdbc = new JdbcOperationRunner(dataSource);
	}

	/**
	 * Return the data source the store takes its connections from; in the transactional
	 * mode, the one whose transaction it joins.
	 * @return the data source
	 */
	public DataSource getDataSource() {
		return this.dataSource;
	}

	/**
	 * Set the name of the records table, optionally qualified by a schema. Defaults to
	 * {@value #DEFAULT_TABLE_NAME}, in the connection's current schema.
	 * @param tableName an unquoted SQL identifier ({@code [A-Za-z_][A-Za-z0-9_]*}, at
	 * most 63 characters), optionally preceded by a schema and a dot; never {@code null}
	 * @throws IllegalArgumentException if the name is not such an identifier
	 */
	public void setTableName(String tableName) {
		this.statements = new Statements(TableName.parse(tableName));
	}

	/**
	 * Return the name of the records table, in lower case as PostgreSQL folds it.
	 * @return the table name
	 */
	public String getTableName() {
		return this.statements.table.qualifiedName();
	}

	/**
	 * Set the codec that writes and reads stored responses. Defaults to a
	 * {@link StoredResponseCodec} with its default settings.
	 * @param codec the codec, never {@code null}
	 */
	public void setCodec(StoredResponseCodec codec) {
		this.codec = Objects.requireNonNull(codec, "'codec' must not be null");
	}

	/**
	 * Set whether a lapsed lease is taken over only once it has stayed lapsed for one
	 * more lease after a request first found it lapsed. Defaults to {@code true}.
	 * <p>
	 * A lease lapses when its owner stops renewing it: the owner crashed, or the database
	 * stopped answering for longer than the lease (a paused or migrated virtual machine,
	 * a stalled failover, a network that holds connections open). The database cannot
	 * tell the two apart from the row, and after such a hang every running execution's
	 * lease has lapsed although its handler is still running. With confirmation, the
	 * first request that finds a lapsed lease only schedules the takeover, one lease (the
	 * one that request asks for) later by the database's clock, and is answered
	 * {@link AcquireResult.InProgress}; the owner's next renewal cancels it, and the
	 * owner's heartbeat renews within a third of a lease once the database answers again.
	 * A crashed owner's key is taken over by the first request after that. Without
	 * confirmation, the first request that finds a lapsed lease takes it over at once: a
	 * crashed owner's key is free a lease sooner, and a database hang longer than the
	 * lease lets a duplicate run its handler a second time while the first still runs
	 * (its completion is then fenced).
	 * <p>
	 * An expired record (past its TTL) is taken over at once either way.
	 * @param confirmTakeover {@code false} to take a lapsed lease over as soon as it is
	 * found lapsed
	 */
	public void setConfirmTakeover(boolean confirmTakeover) {
		this.confirmTakeover = confirmTakeover;
	}

	/**
	 * Return whether a lapsed lease is taken over only after a confirmation period.
	 * @return {@code true} unless {@link #setConfirmTakeover(boolean)} turned it off
	 */
	public boolean isConfirmTakeover() {
		return this.confirmTakeover;
	}

	/**
	 * Return the data source whose transactions the claims join in the transactional
	 * mode: the one the store takes its connections from.
	 * @return the data source
	 */
	@Override
	public DataSource getTransactionalDataSource() {
		return this.dataSource;
	}

	/**
	 * Turn {@link #setTransactionalClaims(boolean) transactional claims} on.
	 */
	@Override
	public void enableTransactionalClaims() {
		setTransactionalClaims(true);
	}

	/**
	 * Set whether claims may be made in transactions of the application (the
	 * transactional mode, see
	 * {@link dev.idempotency.spring.transaction.TransactionalClaims}), which hold their
	 * claim uncommitted while the handler runs. Defaults to {@code false}.
	 * <p>
	 * With it, every claim takes a transaction-level advisory lock on its key
	 * ({@code pg_try_advisory_xact_lock}) before it inserts: a claim held by a
	 * transaction not yet committed is then answered {@link AcquireResult.InProgress} at
	 * once, by every instance and whether or not the claimant is itself transactional,
	 * instead of waiting on the unique index until that transaction ends. An
	 * auto-committed claim holds the lock for its own statement only. Claims made while a
	 * transaction joins the store take the lock whatever this setting says.
	 * @param transactionalClaims whether claims may be held by uncommitted transactions
	 */
	public void setTransactionalClaims(boolean transactionalClaims) {
		this.transactionalClaims = transactionalClaims;
	}

	/**
	 * Return whether every claim takes the advisory lock of its key.
	 * @return {@code true} if {@link #setTransactionalClaims(boolean)} turned it on
	 */
	public boolean isTransactionalClaims() {
		return this.transactionalClaims;
	}

	@Override
	public AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token, Duration lease,
			Duration ttl) {
		return acquire(key, fingerprint, token, lease, ttl, ClaimForm.COMBINED);
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * A plain {@code INSERT ... ON CONFLICT (id) DO NOTHING} first; only when it inserts
	 * nothing, the statement of {@link #acquire acquire}, which reads the row, in a
	 * second round trip on the same connection. Claims that take the key's advisory lock
	 * (see {@link #setTransactionalClaims(boolean)}) go to that statement at once.
	 */
	@Override
	public AcquireResult acquireFresh(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
			Duration lease, Duration ttl) {
		return acquire(key, fingerprint, token, lease, ttl, ClaimForm.INSERT_FIRST);
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * A claim this writes commits with {@code synchronous_commit = off}: PostgreSQL
	 * answers before the claim's WAL record reaches the disk, and a crash of the server
	 * (not of the application) within three times {@code wal_writer_delay} may lose the
	 * claim. A takeover of an expired or lapsed record is committed synchronously, and so
	 * is every claim that takes the key's advisory lock: claims made while a transaction
	 * of the application joins the store (whose commit is never relaxed) and every claim
	 * once {@link #setTransactionalClaims(boolean)} is on.
	 */
	@Override
	public AcquireResult acquireCommittingAsynchronously(IdempotencyKey key, RequestFingerprint fingerprint,
			OwnerToken token, Duration lease, Duration ttl) {
		return acquire(key, fingerprint, token, lease, ttl, ClaimForm.UNFLUSHED);
	}

	private AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token, Duration lease,
			Duration ttl, ClaimForm form) {
		Objects.requireNonNull(key, "'key' must not be null");
		Objects.requireNonNull(fingerprint, "'fingerprint' must not be null");
		Objects.requireNonNull(token, "'token' must not be null");
		long leaseMillis = StoreDurations.toMillis(lease, "lease");
		// as in the in-memory store, a record never expires before its first lease lapses
		long ttlMillis = Math.max(StoreDurations.toMillis(ttl, "ttl"), leaseMillis);
		Claim claim = Claim.of(key, fingerprint, token, leaseMillis, ttlMillis);
		Statements statements = this.statements;
		boolean guarded = this.transactionalClaims || this.jdbc.isJoining();
		PositionalStatement statement = guarded ? statements.acquireGuarded
				: (form == ClaimForm.UNFLUSHED) ? statements.acquireUnflushed : statements.acquire;
		boolean insertFirst = !guarded && form == ClaimForm.INSERT_FIRST;
		return this.jdbc.run("acquire", (operation) -> {
			if (insertFirst && insertClaim(operation, statements, claim)) {
				return new AcquireResult.Acquired(claim.token());
			}
			for (int attempt = 1; attempt <= MAX_ACQUIRE_ATTEMPTS; attempt++) {
				AcquireResult result = attemptAcquire(operation, statements, statement, claim, guarded);
				if (result != null) {
					return result;
				}
			}
			throw new IdempotencyStoreException("Could not acquire key '" + key + "' after " + MAX_ACQUIRE_ATTEMPTS
					+ " attempts: its record kept changing concurrently");
		});
	}

	private @Nullable AcquireResult attemptAcquire(Operation operation, Statements statements,
			PositionalStatement claimStatement, Claim claim, boolean guarded) throws SQLException {
		ClaimRow row = claim(operation, statements, claimStatement, claim, guarded);
		if (row == null) {
			// the conflicting row was committed after our snapshot: look again
			return null;
		}
		if (row == HeldElsewhere.ROW) {
			// a claim not yet committed, or one being made: its lease is unknown
			return new AcquireResult.InProgress(Duration.ofMillis(claim.leaseMillis()));
		}
		if (!(row instanceof ExistingRecord existing)) {
			return new AcquireResult.Acquired(claim.token());
		}
		JdbcClient client = operation.client();
		boolean sameFingerprint = claim.fingerprint().equals(existing.fingerprint());
		if (existing.expired() || (existing.processing() && sameFingerprint && existing.lapsed())) {
			if (existing.lockedElsewhere()) {
				// a transaction holds the key's lock, and may be taking the record over
				// itself: writing the row would wait for that transaction to end
				return new AcquireResult.InProgress(Duration.ofMillis(claim.leaseMillis()));
			}
			if (existing.expired() || !this.confirmTakeover || existing.takeoverDue()) {
				return takeOver(client, statements, claim, existing.owner());
			}
			if (!existing.takeoverMarked()) {
				return scheduleTakeover(client, statements, claim, existing.owner());
			}
			// the owner is gone: nothing frees the key before the takeover time
			return new AcquireResult.InProgress(Duration.ofMillis(Math.max(0, existing.takeoverRemainingMillis())),
					true);
		}
		if (!sameFingerprint) {
			return new AcquireResult.Mismatch();
		}
		if (existing.processing()) {
			return new AcquireResult.InProgress(Duration.ofMillis(Math.max(0, existing.leaseRemainingMillis())));
		}
		return new AcquireResult.Replay(decode(existing.response(), claim.key()), toInstant(existing.expiresAt()),
				timeToLive(existing.ttlMillis()));
	}

	// the plain insert of a claim: true if it inserted, false if the key has a row
	private static boolean insertClaim(Operation operation, Statements statements, Claim claim) throws SQLException {
		try (PreparedStatement statement = operation.prepare(statements.insertClaim, claim.id(), claim.key().scope(),
				claim.key().key(), claim.fingerprintBytes(), claim.owner(), claim.leaseMillis(), claim.ttlMillis())) {
			return statement.executeUpdate() == 1;
		}
	}

	// the claim statement, on plain JDBC (see the class comment): the row it returns, or
	// null when it returned none
	private static @Nullable ClaimRow claim(Operation operation, Statements statements,
			PositionalStatement claimStatement, Claim claim, boolean guarded) throws SQLException {
		try (PreparedStatement statement = guarded
				? operation.prepare(claimStatement, statements.lockKey(claim.id()), claim.id(), claim.key().scope(),
						claim.key().key(), claim.fingerprintBytes(), claim.owner(), claim.leaseMillis(),
						claim.ttlMillis(),
						RequestTransactions.timeout(Duration.ofMillis(claim.leaseMillis())).toMillis())
				: operation.prepare(claimStatement, claim.id(), claim.key().scope(), claim.key().key(),
						claim.fingerprintBytes(), claim.owner(), claim.leaseMillis(), claim.ttlMillis());
				ResultSet rows = statement.executeQuery()) {
			if (!rows.next()) {
				return null;
			}
			return guarded ? GUARDED_CLAIM_ROW.mapRow(rows, 0) : CLAIM_ROW.mapRow(rows, 0);
		}
	}

	private @Nullable AcquireResult takeOver(JdbcClient client, Statements statements, Claim claim, UUID seenOwner) {
		int updated = client.sql(statements.takeOver)
			.param("id", claim.id())
			.param("fingerprint", claim.fingerprintBytes())
			.param("owner", claim.owner())
			.param("seenOwner", seenOwner)
			.param("leaseMillis", claim.leaseMillis())
			.param("ttlMillis", claim.ttlMillis())
			.param("atOnce", !this.confirmTakeover)
			.update();
		// zero rows: someone else took it over, or completed, extended or deleted it
		return (updated == 1) ? new AcquireResult.Acquired(claim.token()) : null;
	}

	// the lease lapsed and nobody has seen that before: the owner gets one more lease of
	// a working database to renew it
	private @Nullable AcquireResult scheduleTakeover(JdbcClient client, Statements statements, Claim claim,
			UUID seenOwner) {
		int updated = client.sql(statements.scheduleTakeover)
			.param("id", claim.id())
			.param("seenOwner", seenOwner)
			.param("leaseMillis", claim.leaseMillis())
			.update();
		// zero rows: another request scheduled it first, or the row changed
		return (updated == 1) ? new AcquireResult.InProgress(Duration.ofMillis(claim.leaseMillis()), true) : null;
	}

	@Override
	public boolean complete(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
		Objects.requireNonNull(key, "'key' must not be null");
		Objects.requireNonNull(token, "'token' must not be null");
		Objects.requireNonNull(response, "'response' must not be null");
		long ttlMillis = StoreDurations.toMillis(ttl, "ttl");
		byte[] id = key.digest();
		UUID owner = toUuid(token);
		byte[] encoded = this.codec.encode(response);
		PositionalStatement complete = this.statements.complete;
		PositionalStatement completedByOwner = this.statements.completedByOwner;
		return this.jdbc.run("complete", (operation) -> {
			try (PreparedStatement statement = operation.prepare(complete, id, owner, encoded, ttlMillis)) {
				if (statement.executeUpdate() == 1) {
					return true;
				}
			}
			try (PreparedStatement statement = operation.prepare(completedByOwner, id, owner);
					ResultSet rows = statement.executeQuery()) {
				return rows.next();
			}
		});
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * One statement, {@code INSERT ... ON CONFLICT (id) DO UPDATE} conditional on the
	 * existing row having expired or being processed by {@code token}.
	 */
	@Override
	public boolean completeUnclaimed(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
			StoredResponse response, Duration ttl) {
		Objects.requireNonNull(key, "'key' must not be null");
		Objects.requireNonNull(fingerprint, "'fingerprint' must not be null");
		Objects.requireNonNull(token, "'token' must not be null");
		Objects.requireNonNull(response, "'response' must not be null");
		long ttlMillis = StoreDurations.toMillis(ttl, "ttl");
		byte[] id = key.digest();
		UUID owner = toUuid(token);
		byte[] encoded = this.codec.encode(response);
		String sql = this.statements.completeUnclaimed;
		return this.jdbc.execute("complete",
				(client) -> client.sql(sql)
					.param("id", id)
					.param("scope", key.scope())
					.param("key", key.key())
					.param("fingerprint", fingerprint.toByteArray())
					.param("owner", owner)
					.param("response", encoded)
					.param("ttlMillis", ttlMillis)
					.query(FIRST_ROW_TRUE));
	}

	@Override
	public boolean release(IdempotencyKey key, OwnerToken token) {
		Objects.requireNonNull(key, "'key' must not be null");
		Objects.requireNonNull(token, "'token' must not be null");
		byte[] id = key.digest();
		UUID owner = toUuid(token);
		String sql = this.statements.release;
		boolean joining = this.jdbc.isJoining();
		try {
			return this.jdbc.execute("release",
					(client) -> client.sql(sql).param("id", id).param("owner", owner).query(FIRST_ROW_TRUE));
		}
		catch (IdempotencyStoreException ex) {
			if (joining && JdbcOperationRunner.leavesOnlyRollback(ex)) {
				// a claim of the transactional mode, in a transaction that a failed
				// statement aborted or whose connection is gone: it can only roll back,
				// and the claim vanishes with it
				return true;
			}
			throw ex;
		}
	}

	@Override
	public boolean extend(IdempotencyKey key, OwnerToken token, Duration lease) {
		Objects.requireNonNull(key, "'key' must not be null");
		Objects.requireNonNull(token, "'token' must not be null");
		long leaseMillis = StoreDurations.toMillis(lease, "lease");
		byte[] id = key.digest();
		UUID owner = toUuid(token);
		String sql = this.statements.extend;
		return this.jdbc.execute("extend",
				(client) -> client.sql(sql)
					.param("id", id)
					.param("owner", owner)
					.param("leaseMillis", leaseMillis)
					.update() == 1);
	}

	@Override
	public Optional<IdempotencyRecord> find(IdempotencyKey key) {
		Objects.requireNonNull(key, "'key' must not be null");
		byte[] id = key.digest();
		String sql = this.statements.find;
		return this.jdbc.execute("find",
				(client) -> client.sql(sql).param("id", id).query((row, rowNum) -> toRecord(row, key)).optional());
	}

	@Override
	public boolean evict(IdempotencyKey key) {
		Objects.requireNonNull(key, "'key' must not be null");
		byte[] id = key.digest();
		String sql = this.statements.evict;
		return this.jdbc.execute("evict", (client) -> client.sql(sql).param("id", id).query(FIRST_ROW_TRUE));
	}

	@Override
	public String name() {
		return (getClass() == JdbcIdempotencyStore.class) ? "jdbc" : IdempotencyStore.super.name();
	}

	private IdempotencyRecord toRecord(ResultSet row, IdempotencyKey key) throws SQLException {
		IdempotencyKey storedKey = new IdempotencyKey(row.getString("scope"), row.getString("idem_key"));
		boolean completed = STATUS_COMPLETED.equals(row.getString("status"));
		byte[] response = row.getBytes("response");
		return new IdempotencyRecord(storedKey, RequestFingerprint.of(row.getBytes("fingerprint")),
				completed ? IdempotencyStatus.COMPLETED : IdempotencyStatus.PROCESSING,
				toOwnerToken(row.getObject("owner_token", UUID.class)),
				toNullableInstant(row.getObject("created_at", OffsetDateTime.class)),
				toNullableInstant(row.getObject("lease_expires_at", OffsetDateTime.class)),
				toInstant(row.getObject("expires_at", OffsetDateTime.class)), completed ? decode(response, key) : null,
				timeToLive(row.getLong("ttl_ms")));
	}

	private static Duration timeToLive(long ttlMillis) {
		return Duration.ofMillis(Math.max(0, ttlMillis));
	}

	// the request did complete: an unreadable response must neither run it again nor fail
	// every retry until the record expires
	private StoredResponse decode(byte @Nullable [] data, IdempotencyKey key) {
		if (data == null) {
			logger.warn("Completed record of key '" + key
					+ "' has no response: answering that it cannot be replayed until the record expires");
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

	private static UUID toUuid(OwnerToken token) {
		return new UUID(token.high(), token.low());
	}

	private static OwnerToken toOwnerToken(UUID uuid) {
		return new OwnerToken(uuid.getMostSignificantBits(), uuid.getLeastSignificantBits());
	}

	private static Instant toInstant(@Nullable OffsetDateTime time) {
		if (time == null) {
			throw new IdempotencyStoreException("Record has no expiry");
		}
		return time.toInstant();
	}

	private static @Nullable Instant toNullableInstant(@Nullable OffsetDateTime time) {
		return (time != null) ? time.toInstant() : null;
	}

	/**
	 * The values of one {@code acquire} call, as its statements bind them.
	 *
	 * @param key the key
	 * @param id the digest of the key, the primary key of its row
	 * @param fingerprint the request's fingerprint
	 * @param fingerprintBytes the fingerprint as stored
	 * @param token the claiming owner
	 * @param owner the owner token as stored
	 * @param leaseMillis the lease
	 * @param ttlMillis the time to live of a new record
	 */
	private record Claim(IdempotencyKey key, byte[] id, RequestFingerprint fingerprint, byte[] fingerprintBytes,
			OwnerToken token, UUID owner, long leaseMillis, long ttlMillis) {

		static Claim of(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token, long leaseMillis,
				long ttlMillis) {
			return new Claim(key, key.digest(), fingerprint, fingerprint.toByteArray(), token, toUuid(token),
					leaseMillis, ttlMillis);
		}

	}

	/**
	 * A row of the claim statement: the claim's own insert, or the record that was
	 * already there.
	 */
	private sealed interface ClaimRow permits Inserted, HeldElsewhere, ExistingRecord {

	}

	/**
	 * The guarded claim statement found the key's lock held and no committed record: a
	 * transaction not yet committed holds the claim, or another claim is being made.
	 */
	private enum HeldElsewhere implements ClaimRow {

		ROW

	}

	/**
	 * The claim statement inserted the record: the key was free.
	 */
	private enum Inserted implements ClaimRow {

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
	private record ExistingRecord(RequestFingerprint fingerprint, boolean processing, UUID owner,
			byte @Nullable [] response, @Nullable OffsetDateTime expiresAt, boolean expired, boolean lapsed,
			long leaseRemainingMillis, long ttlMillis, boolean takeoverMarked, boolean takeoverDue,
			long takeoverRemainingMillis, boolean lockedElsewhere) implements ClaimRow {

		static ExistingRecord of(ResultSet row, boolean lockedElsewhere) throws SQLException {
			return new ExistingRecord(RequestFingerprint.of(row.getBytes("fingerprint")),
					STATUS_PROCESSING.equals(row.getString("status")), row.getObject("owner_token", UUID.class),
					row.getBytes("response"), row.getObject("expires_at", OffsetDateTime.class),
					row.getBoolean("expired"), row.getBoolean("lapsed"), row.getLong("lease_remaining_ms"),
					row.getLong("ttl_ms"), row.getBoolean("takeover_marked"), row.getBoolean("takeover_due"),
					row.getLong("takeover_remaining_ms"), lockedElsewhere);
		}

	}

	// the statements a claim starts with
	private enum ClaimForm {

		// ACQUIRE: the insert, or the row found, in one round trip
		COMBINED,

		// ACQUIRE_UNFLUSHED: the same, an inserted claim committed without the WAL flush
		UNFLUSHED,

		// INSERT_CLAIM, then ACQUIRE only if the key has a row
		INSERT_FIRST

	}

	/**
	 * SQL text for one table name.
	 */
	private static final class Statements {

		private final TableName table;

		private final PositionalStatement acquire;

		private final PositionalStatement acquireGuarded;

		private final PositionalStatement acquireUnflushed;

		private final PositionalStatement insertClaim;

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

		Statements(TableName table) {
			this.table = table;
			this.acquire = new PositionalStatement(table.substitute(ACQUIRE), "id", "scope", "key", "fingerprint",
					"owner", "leaseMillis", "ttlMillis");
			this.acquireGuarded = new PositionalStatement(table.substitute(ACQUIRE_GUARDED), "lockKey", "id", "scope",
					"key", "fingerprint", "owner", "leaseMillis", "ttlMillis", "idleMillis");
			this.acquireUnflushed = new PositionalStatement(table.substitute(ACQUIRE_UNFLUSHED), "id", "scope", "key",
					"fingerprint", "owner", "leaseMillis", "ttlMillis");
			this.insertClaim = new PositionalStatement(table.substitute(INSERT_CLAIM), "id", "scope", "key",
					"fingerprint", "owner", "leaseMillis", "ttlMillis");
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

}
