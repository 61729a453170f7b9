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
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

import javax.sql.DataSource;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.StoredResponseCodec;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.IdempotencyStoreException;
import dev.idempotency.spring.store.AsynchronousClaimCommit;
import dev.idempotency.spring.store.FreshKeyClaim;
import dev.idempotency.spring.store.StoreDurations;
import dev.idempotency.spring.store.UnclaimedCompletion;
import dev.idempotency.spring.store.jdbc.JdbcOperationRunner.Operation;
import dev.idempotency.spring.store.jdbc.RecordRows.ClaimRow;
import dev.idempotency.spring.store.jdbc.RecordRows.ExistingRecord;
import dev.idempotency.spring.store.jdbc.RecordRows.HeldElsewhere;
import dev.idempotency.spring.store.jdbc.RecordTable.Claim;
import dev.idempotency.spring.store.jdbc.RecordTable.ClaimForm;
import dev.idempotency.spring.transaction.RequestTransactions;
import dev.idempotency.spring.transaction.TransactionalStore;
import org.jspecify.annotations.Nullable;

/**
 * {@link IdempotencyStore} backed by one table of PostgreSQL, MariaDB or MySQL (see
 * {@link JdbcIdempotencySchemaInitializer} for its schema). The statements of each
 * database live in a class of their own, picked by the database's {@link JdbcDialect},
 * read from the first connection's metadata unless {@link #setDialect(JdbcDialect)} gave
 * it; this description speaks of PostgreSQL's, and {@code MariaDbRecordTable} says how
 * MariaDB and MySQL differ (an {@code INSERT IGNORE} claim whose row count no driver
 * setting changes, a second statement to read a duplicate's record, claims of the
 * transactional mode that never wait for a row lock, instants from
 * {@code UTC_TIMESTAMP(6)}, synchronous commits only).
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
 * Spring's {@link org.springframework.jdbc.core.simple.JdbcClient}, which sees the
 * operation's own connection only, never one that a transaction manager bound to the
 * thread.
 * <p>
 * <b>Plain JDBC where it pays.</b> The two statements of every first request, the claim
 * and the completion, run on plain JDBC instead ({@link PositionalStatement}, which
 * carries the benchmark figure that justifies it), on the same connection.
 * <p>
 * <b>Transactional mode.</b> While a thread's store operations join its transaction
 * ({@link dev.idempotency.spring.transaction.TransactionalClaims}), they run on the
 * transaction's connection instead, uncommitted until the application's own work commits:
 * the claim, the handler's writes and the stored response commit together or not at all,
 * and a crashed owner's claim vanishes with its rolled-back transaction, so no lease
 * needs renewing. Such a claim is guarded by a transaction-level advisory lock on its
 * key, which every claim takes once {@link #setTransactionalClaims(boolean)} is on: a
 * duplicate learns that the key is held without waiting for the transaction. A guarded
 * claim is made as {@link #acquireFresh} makes one: the guarded {@code INSERT} alone
 * first, and the combined statement only when it inserted nothing.
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

	private final DataSource dataSource;

	private final JdbcOperationRunner jdbc;

	private volatile TableName tableName = TableName.parse(DEFAULT_TABLE_NAME);

	// the table in the database's SQL, made for the table name and the dialect once the
	// first operation knows it
	private volatile @Nullable RecordTable table;

	private volatile RecordRows rows = new RecordRows(new StoredResponseCodec());

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
		this.tableName = TableName.parse(tableName);
		this.table = null;
	}

	/**
	 * Return the name of the records table, in lower case as PostgreSQL folds it.
	 * @return the table name
	 */
	public String getTableName() {
		return this.tableName.qualifiedName();
	}

	/**
	 * Set the dialect of the database, instead of reading it from the metadata of the
	 * first connection an operation takes.
	 * @param dialect the dialect, never {@code null}
	 */
	public void setDialect(JdbcDialect dialect) {
		this.jdbc.setDialect(dialect);
		this.table = null;
	}

	/**
	 * Return the dialect of the database.
	 * @return the dialect, {@code null} until it was set or an operation reached the
	 * database
	 */
	public @Nullable JdbcDialect getDialect() {
		return this.jdbc.getDialect();
	}

	/**
	 * Set the codec that writes and reads stored responses. Defaults to a
	 * {@link StoredResponseCodec} with its default settings.
	 * @param codec the codec, never {@code null}
	 */
	public void setCodec(StoredResponseCodec codec) {
		this.rows = new RecordRows(Objects.requireNonNull(codec, "'codec' must not be null"));
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
		boolean guarded = this.transactionalClaims || this.jdbc.isJoining();
		Claim claim = new Claim(key, key.digest(), fingerprint, fingerprint.toByteArray(), token,
				RecordRows.toUuid(token), leaseMillis, ttlMillis,
				guarded ? RequestTransactions.timeout(Duration.ofMillis(leaseMillis)).toMillis() : 0);
		RecordRows rows = this.rows;
		return this.jdbc.run("acquire", (operation) -> {
			RecordTable table = table(operation);
			for (int attempt = 1; attempt <= MAX_ACQUIRE_ATTEMPTS; attempt++) {
				ClaimRow row = table.claim(operation, claim, form, guarded, attempt);
				// no row: the conflicting row was gone or committed after the
				// statement's snapshot, look again
				AcquireResult decided = (row != null) ? decide(operation, table, rows, claim, row, guarded) : null;
				if (decided != null) {
					return decided;
				}
			}
			throw new IdempotencyStoreException("Could not acquire key '" + key + "' after " + MAX_ACQUIRE_ATTEMPTS
					+ " attempts: its record kept changing concurrently");
		});
	}

	// the table for the operation's database
	private RecordTable table(Operation operation) {
		RecordTable kept = this.table;
		RecordTable table = RecordTable.of(kept, operation, this.tableName);
		if (table != kept) {
			this.table = table;
		}
		return table;
	}

	// what the row a claim statement returned means; null to look again
	private @Nullable AcquireResult decide(Operation operation, RecordTable table, RecordRows rows, Claim claim,
			ClaimRow row, boolean guarded) throws SQLException {
		if (row == HeldElsewhere.ROW) {
			// a claim not yet committed, or one being made: its lease is unknown
			return new AcquireResult.InProgress(Duration.ofMillis(claim.leaseMillis()));
		}
		if (!(row instanceof ExistingRecord existing)) {
			return new AcquireResult.Acquired(claim.token());
		}
		boolean sameFingerprint = claim.fingerprint().equals(existing.fingerprint());
		if (existing.expired() || (existing.processing() && sameFingerprint && existing.lapsed())) {
			if (existing.lockedElsewhere()) {
				// a transaction holds the key's lock, and may be taking the record over
				// itself: writing the row would wait for that transaction to end
				return new AcquireResult.InProgress(Duration.ofMillis(claim.leaseMillis()));
			}
			if (existing.expired() || !this.confirmTakeover || existing.takeoverDue()) {
				return takeOver(operation, table, claim, existing.owner(), guarded);
			}
			if (!existing.takeoverMarked()) {
				return scheduleTakeover(operation, table, claim, existing.owner(), guarded);
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
		return new AcquireResult.Replay(rows.response(existing.response(), claim.key()),
				RecordRows.toInstant(existing.expiresAt()), RecordRows.timeToLive(existing.ttlMillis()));
	}

	private @Nullable AcquireResult takeOver(Operation operation, RecordTable table, Claim claim, UUID seenOwner,
			boolean guarded) throws SQLException {
		// missed: someone else took it over, or completed, extended or deleted it
		return switch (table.takeOver(operation, claim, seenOwner, !this.confirmTakeover, guarded)) {
			case DONE -> new AcquireResult.Acquired(claim.token());
			case MISSED -> null;
			// another transaction is writing the row: it may be taking it over itself
			case LOCKED -> new AcquireResult.InProgress(Duration.ofMillis(claim.leaseMillis()));
		};
	}

	// the lease lapsed and nobody has seen that before: the owner gets one more lease of
	// a working database to renew it
	private @Nullable AcquireResult scheduleTakeover(Operation operation, RecordTable table, Claim claim,
			UUID seenOwner, boolean guarded) throws SQLException {
		// missed: another request scheduled it first, or the row changed
		return switch (table.scheduleTakeover(operation, claim, seenOwner, guarded)) {
			case DONE -> new AcquireResult.InProgress(Duration.ofMillis(claim.leaseMillis()), true);
			case MISSED -> null;
			case LOCKED -> new AcquireResult.InProgress(Duration.ofMillis(claim.leaseMillis()));
		};
	}

	@Override
	public boolean complete(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
		Objects.requireNonNull(key, "'key' must not be null");
		Objects.requireNonNull(token, "'token' must not be null");
		Objects.requireNonNull(response, "'response' must not be null");
		long ttlMillis = StoreDurations.toMillis(ttl, "ttl");
		byte[] id = key.digest();
		UUID owner = RecordRows.toUuid(token);
		byte[] encoded = this.rows.encode(response);
		return this.jdbc.run("complete",
				(operation) -> table(operation).complete(operation, id, owner, encoded, ttlMillis));
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
		UUID owner = RecordRows.toUuid(token);
		byte[] encoded = this.rows.encode(response);
		return this.jdbc.run("complete", (operation) -> table(operation).completeUnclaimed(operation, key, fingerprint,
				owner, encoded, ttlMillis));
	}

	@Override
	public boolean release(IdempotencyKey key, OwnerToken token) {
		Objects.requireNonNull(key, "'key' must not be null");
		Objects.requireNonNull(token, "'token' must not be null");
		byte[] id = key.digest();
		UUID owner = RecordRows.toUuid(token);
		boolean joining = this.jdbc.isJoining();
		try {
			return this.jdbc.run("release", (operation) -> table(operation).release(operation, id, owner));
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
		UUID owner = RecordRows.toUuid(token);
		return this.jdbc.run("extend", (operation) -> table(operation).extend(operation, id, owner, leaseMillis));
	}

	@Override
	public Optional<IdempotencyRecord> find(IdempotencyKey key) {
		Objects.requireNonNull(key, "'key' must not be null");
		byte[] id = key.digest();
		RecordRows rows = this.rows;
		return this.jdbc.run("find", (operation) -> table(operation).find(operation, id, key, rows));
	}

	@Override
	public boolean evict(IdempotencyKey key) {
		Objects.requireNonNull(key, "'key' must not be null");
		byte[] id = key.digest();
		return this.jdbc.run("evict", (operation) -> table(operation).evict(operation, id));
	}

	@Override
	public String name() {
		return (getClass() == JdbcIdempotencyStore.class) ? "jdbc" : IdempotencyStore.super.name();
	}

}
