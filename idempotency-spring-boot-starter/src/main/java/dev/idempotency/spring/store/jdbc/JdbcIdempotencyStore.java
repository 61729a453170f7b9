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

	private volatile JdbcStatements statements = new JdbcStatements(TableName.parse(DEFAULT_TABLE_NAME));

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
		this.statements = new JdbcStatements(TableName.parse(tableName));
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
	 * second round trip on the same connection. A claim that takes the key's advisory
	 * lock (see {@link #setTransactionalClaims(boolean)}) takes it in the same
	 * {@code INSERT}, which inserts only when it got the lock.
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
		JdbcStatements statements = this.statements;
		boolean guarded = this.transactionalClaims || this.jdbc.isJoining();
		PositionalStatement statement = guarded ? statements.acquireGuarded
				: (form == ClaimForm.UNFLUSHED) ? statements.acquireUnflushed : statements.acquire;
		boolean insertFirst = form == ClaimForm.INSERT_FIRST;
		return this.jdbc.run("acquire", (operation) -> {
			if (insertFirst && insertClaim(operation, statements, claim, guarded)) {
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

	private @Nullable AcquireResult attemptAcquire(Operation operation, JdbcStatements statements,
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

	// the insert of a claim alone: true if it inserted, false if the key has a row (or,
	// guarded, if its lock is held elsewhere)
	private static boolean insertClaim(Operation operation, JdbcStatements statements, Claim claim, boolean guarded)
			throws SQLException {
		try (PreparedStatement statement = guarded
				? operation.prepare(statements.insertClaimGuarded, statements.lockKey(claim.id()), claim.id(),
						claim.key().scope(), claim.key().key(), claim.fingerprintBytes(), claim.owner(),
						claim.leaseMillis(), claim.ttlMillis(), idleMillis(claim))
				: operation.prepare(statements.insertClaim, claim.id(), claim.key().scope(), claim.key().key(),
						claim.fingerprintBytes(), claim.owner(), claim.leaseMillis(), claim.ttlMillis())) {
			return statement.executeUpdate() == 1;
		}
	}

	// how long the transaction of a guarded claim may sit idle: its request's time-out
	private static long idleMillis(Claim claim) {
		return RequestTransactions.timeout(Duration.ofMillis(claim.leaseMillis())).toMillis();
	}

	// the claim statement, on plain JDBC (see the class comment): the row it returns, or
	// null when it returned none
	private static @Nullable ClaimRow claim(Operation operation, JdbcStatements statements,
			PositionalStatement claimStatement, Claim claim, boolean guarded) throws SQLException {
		try (PreparedStatement statement = guarded
				? operation.prepare(claimStatement, statements.lockKey(claim.id()), claim.id(), claim.key().scope(),
						claim.key().key(), claim.fingerprintBytes(), claim.owner(), claim.leaseMillis(),
						claim.ttlMillis(), idleMillis(claim))
				: operation.prepare(claimStatement, claim.id(), claim.key().scope(), claim.key().key(),
						claim.fingerprintBytes(), claim.owner(), claim.leaseMillis(), claim.ttlMillis());
				ResultSet rows = statement.executeQuery()) {
			if (!rows.next()) {
				return null;
			}
			return guarded ? GUARDED_CLAIM_ROW.mapRow(rows, 0) : CLAIM_ROW.mapRow(rows, 0);
		}
	}

	private @Nullable AcquireResult takeOver(JdbcClient client, JdbcStatements statements, Claim claim,
			UUID seenOwner) {
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
	private @Nullable AcquireResult scheduleTakeover(JdbcClient client, JdbcStatements statements, Claim claim,
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

}
