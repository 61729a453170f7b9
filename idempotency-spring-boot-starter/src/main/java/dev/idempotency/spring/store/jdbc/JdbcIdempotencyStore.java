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

import java.sql.Connection;
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
import dev.idempotency.spring.store.StoreDurations;
import dev.idempotency.spring.store.tiered.UnclaimedCompletion;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * {@link IdempotencyStore} backed by one PostgreSQL table (see
 * {@link JdbcIdempotencySchemaInitializer} for its schema).
 * <p>
 * <b>Atomicity.</b> A key is claimed by a single statement,
 * {@code INSERT ... ON CONFLICT (id) DO NOTHING RETURNING}, combined in one round trip
 * with a read of the record that was already there. A record that expired, or whose lease
 * lapsed and stayed lapsed for the confirmation period (see
 * {@link #setConfirmTakeover(boolean)}), is taken over by a conditional {@code UPDATE}
 * that compares the owner token it saw, so that of many concurrent takers exactly one
 * wins. Completion, release and lease extension are single statements conditional on the
 * caller's owner token. Every operation runs as one auto-committed statement (two when a
 * takeover is scheduled or made) on a connection taken from the {@link DataSource} for
 * that operation only: no connection is held while a handler runs, and the store never
 * joins a transaction of the application, so a claim is visible to every instance as soon
 * as {@code acquire} returns.
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
 * mode, it also stores completions of keys it never claimed ({@link #completeUnclaimed}).
 * <p>
 * This class is thread-safe once configured; configure it (setters) before first use. No
 * argument may be {@code null}. Failures of the database or of the connection pool are
 * thrown as {@link IdempotencyStoreException}; connection and socket time-outs are those
 * of the {@link DataSource}.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public class JdbcIdempotencyStore implements IdempotencyStore, UnclaimedCompletion {

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

	// Claims an absent key or, when a row is there, returns it classified by the
	// database clock. If the conflicting row was committed after this statement's
	// snapshot, neither branch returns a row and the caller tries again.
	private static final String ACQUIRE = """
			WITH ins AS (
				INSERT INTO %TABLE% (id, scope, idem_key, fingerprint, status, owner_token,
					created_at, lease_expires_at, expires_at)
				VALUES (?, ?, ?, ?, 'P', ?, now(), now() + ? * INTERVAL '1 millisecond',
					now() + ? * INTERVAL '1 millisecond')
				ON CONFLICT (id) DO NOTHING
				RETURNING 1
			)
			SELECT true AS inserted, NULL::bytea AS fingerprint, NULL::text AS status,
				NULL::uuid AS owner_token, NULL::bytea AS response, NULL::timestamptz AS expires_at,
				false AS expired, false AS lapsed, NULL::bigint AS lease_remaining_ms, NULL::bigint AS ttl_ms,
				false AS takeover_marked, false AS takeover_due, NULL::bigint AS takeover_remaining_ms
			FROM ins
			UNION ALL
			SELECT false, t.fingerprint, t.status::text, t.owner_token, t.response, t.expires_at,
				t.expires_at <= now(), t.lease_expires_at <= now(),
				ceil(extract(epoch FROM t.lease_expires_at - now()) * 1000)::bigint,
				floor(extract(epoch FROM t.expires_at - now()) * 1000)::bigint,
				t.takeover_at IS NOT NULL, t.takeover_at <= now(),
				ceil(extract(epoch FROM t.takeover_at - now()) * 1000)::bigint
			FROM %TABLE% t
			WHERE t.id = ? AND NOT EXISTS (SELECT 1 FROM ins)
			""";

	// Compare-and-set on the owner token that acquire saw: of two takers only the first
	// to lock the row still finds that token. A lapsed lease is taken over once its
	// takeover time has come, or at once without confirmation (the last parameter).
	private static final String TAKE_OVER = """
			UPDATE %TABLE%
			SET fingerprint = ?, status = 'P', owner_token = ?, response = NULL, created_at = now(),
				lease_expires_at = now() + ? * INTERVAL '1 millisecond',
				expires_at = now() + ? * INTERVAL '1 millisecond', takeover_at = NULL
			WHERE id = ? AND owner_token = ?
				AND (expires_at <= now() OR (status = 'P' AND lease_expires_at <= now() AND fingerprint = ?
					AND (? OR takeover_at <= now())))
			""";

	// The first request to find a lease lapsed sets when it may be taken over; the
	// owner's
	// next renewal clears that again.
	private static final String SCHEDULE_TAKEOVER = """
			UPDATE %TABLE%
			SET takeover_at = now() + ? * INTERVAL '1 millisecond'
			WHERE id = ? AND owner_token = ? AND status = 'P' AND lease_expires_at <= now()
				AND takeover_at IS NULL AND expires_at > now()
			""";

	// A completion retried by the same owner after a lost reply finds the row already
	// completed with its token: that is a success, not a fencing.
	private static final String COMPLETE = """
			WITH upd AS (
				UPDATE %TABLE%
				SET status = 'C', response = ?, lease_expires_at = NULL,
					expires_at = now() + ? * INTERVAL '1 millisecond', takeover_at = NULL
				WHERE id = ? AND owner_token = ? AND status = 'P' AND expires_at > now()
				RETURNING 1
			)
			SELECT EXISTS (SELECT 1 FROM upd) OR EXISTS (
				SELECT 1 FROM %TABLE%
				WHERE id = ? AND owner_token = ? AND status = 'C' AND expires_at > now())
			""";

	// The one write of a lookup-mode first request: insert the completed record, or
	// overwrite an expired row or our own processing row, never a live row of another
	// owner. A completion retried by the same owner finds its own completed row.
	private static final String COMPLETE_UNCLAIMED = """
			WITH ups AS (
				INSERT INTO %TABLE% AS t (id, scope, idem_key, fingerprint, status, owner_token, created_at,
					lease_expires_at, expires_at, response)
				VALUES (?, ?, ?, ?, 'C', ?, now(), NULL, now() + ? * INTERVAL '1 millisecond', ?)
				ON CONFLICT (id) DO UPDATE
				SET scope = EXCLUDED.scope, idem_key = EXCLUDED.idem_key, fingerprint = EXCLUDED.fingerprint,
					status = 'C', owner_token = EXCLUDED.owner_token,
					created_at = CASE WHEN t.expires_at <= now() THEN now() ELSE t.created_at END,
					lease_expires_at = NULL, expires_at = EXCLUDED.expires_at, response = EXCLUDED.response,
					takeover_at = NULL
				WHERE t.expires_at <= now() OR (t.owner_token = EXCLUDED.owner_token AND t.status = 'P')
				RETURNING 1
			)
			SELECT EXISTS (SELECT 1 FROM ups) OR EXISTS (
				SELECT 1 FROM %TABLE%
				WHERE id = ? AND owner_token = ? AND status = 'C' AND expires_at > now())
			""";

	// An expired row behaves as absent (false) but is deleted all the same.
	private static final String RELEASE = """
			DELETE FROM %TABLE%
			WHERE id = ? AND owner_token = ? AND status = 'P'
			RETURNING expires_at > now()
			""";

	private static final String EXTEND = """
			UPDATE %TABLE%
			SET lease_expires_at = now() + ? * INTERVAL '1 millisecond',
				expires_at = GREATEST(expires_at, now() + ? * INTERVAL '1 millisecond'), takeover_at = NULL
			WHERE id = ? AND owner_token = ? AND status = 'P' AND expires_at > now()
			""";

	// the remaining lifetime is rounded down: no copy made from it may outlive the row
	private static final String FIND = """
			SELECT scope, idem_key, fingerprint, status::text AS status, owner_token, created_at,
				lease_expires_at, expires_at, response,
				floor(extract(epoch FROM expires_at - now()) * 1000)::bigint AS ttl_ms
			FROM %TABLE%
			WHERE id = ? AND expires_at > now()
			""";

	private static final String EVICT = """
			DELETE FROM %TABLE%
			WHERE id = ?
			RETURNING expires_at > now()
			""";

	private final DataSource dataSource;

	private volatile Statements statements = new Statements(TableName.parse(DEFAULT_TABLE_NAME));

	private volatile StoredResponseCodec codec = new StoredResponseCodec();

	private volatile boolean confirmTakeover = true;

	/**
	 * Create a store that takes a connection from the given data source for each
	 * operation.
	 * @param dataSource the data source, never {@code null}; normally a connection pool
	 */
	public JdbcIdempotencyStore(DataSource dataSource) {
		this.dataSource = Objects.requireNonNull(dataSource, "'dataSource' must not be null");
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

	@Override
	public AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token, Duration lease,
			Duration ttl) {
		Objects.requireNonNull(key, "'key' must not be null");
		Objects.requireNonNull(fingerprint, "'fingerprint' must not be null");
		Objects.requireNonNull(token, "'token' must not be null");
		long leaseMillis = StoreDurations.toMillis(lease, "lease");
		// as in the in-memory store, a record never expires before its first lease lapses
		long ttlMillis = Math.max(StoreDurations.toMillis(ttl, "ttl"), leaseMillis);
		byte[] id = key.digest();
		byte[] fingerprintBytes = fingerprint.toByteArray();
		UUID owner = toUuid(token);
		Statements statements = this.statements;
		return JdbcSupport.execute(this.dataSource, "acquire", (connection) -> {
			for (int attempt = 1; attempt <= MAX_ACQUIRE_ATTEMPTS; attempt++) {
				AcquireResult result = attemptAcquire(connection, statements, key, id, fingerprint, fingerprintBytes,
						token, owner, leaseMillis, ttlMillis);
				if (result != null) {
					return result;
				}
			}
			throw new IdempotencyStoreException("Could not acquire key '" + key + "' after " + MAX_ACQUIRE_ATTEMPTS
					+ " attempts: its record kept changing concurrently");
		});
	}

	private @Nullable AcquireResult attemptAcquire(Connection connection, Statements statements, IdempotencyKey key,
			byte[] id, RequestFingerprint fingerprint, byte[] fingerprintBytes, OwnerToken token, UUID owner,
			long leaseMillis, long ttlMillis) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(statements.acquire)) {
			statement.setBytes(1, id);
			statement.setString(2, key.scope());
			statement.setString(3, key.key());
			statement.setBytes(4, fingerprintBytes);
			statement.setObject(5, owner);
			statement.setLong(6, leaseMillis);
			statement.setLong(7, ttlMillis);
			statement.setBytes(8, id);
			try (ResultSet row = statement.executeQuery()) {
				if (!row.next()) {
					// the conflicting row was committed after our snapshot: look again
					return null;
				}
				if (row.getBoolean("inserted")) {
					return new AcquireResult.Acquired(token);
				}
				boolean sameFingerprint = fingerprint.equals(RequestFingerprint.of(row.getBytes("fingerprint")));
				boolean processing = STATUS_PROCESSING.equals(row.getString("status"));
				boolean expired = row.getBoolean("expired");
				if (expired || (processing && sameFingerprint && row.getBoolean("lapsed"))) {
					UUID seen = row.getObject("owner_token", UUID.class);
					if (expired || !this.confirmTakeover || row.getBoolean("takeover_due")) {
						return takeOver(connection, statements, id, fingerprintBytes, token, owner, seen, leaseMillis,
								ttlMillis);
					}
					if (!row.getBoolean("takeover_marked")) {
						return scheduleTakeover(connection, statements, id, seen, leaseMillis);
					}
					long remaining = Math.max(0, row.getLong("takeover_remaining_ms"));
					return new AcquireResult.InProgress(Duration.ofMillis(remaining));
				}
				if (!sameFingerprint) {
					return new AcquireResult.Mismatch();
				}
				if (processing) {
					long remaining = Math.max(0, row.getLong("lease_remaining_ms"));
					return new AcquireResult.InProgress(Duration.ofMillis(remaining));
				}
				return new AcquireResult.Replay(decode(row.getBytes("response"), key),
						toInstant(row.getObject("expires_at", OffsetDateTime.class)), timeToLive(row));
			}
		}
	}

	private @Nullable AcquireResult takeOver(Connection connection, Statements statements, byte[] id,
			byte[] fingerprintBytes, OwnerToken token, UUID owner, UUID seen, long leaseMillis, long ttlMillis)
			throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(statements.takeOver)) {
			statement.setBytes(1, fingerprintBytes);
			statement.setObject(2, owner);
			statement.setLong(3, leaseMillis);
			statement.setLong(4, ttlMillis);
			statement.setBytes(5, id);
			statement.setObject(6, seen);
			statement.setBytes(7, fingerprintBytes);
			statement.setBoolean(8, !this.confirmTakeover);
			// zero rows: someone else took it over, or completed, extended or deleted it
			return (statement.executeUpdate() == 1) ? new AcquireResult.Acquired(token) : null;
		}
	}

	// the lease lapsed and nobody has seen that before: the owner gets one more lease of
	// a working database to renew it
	private @Nullable AcquireResult scheduleTakeover(Connection connection, Statements statements, byte[] id, UUID seen,
			long leaseMillis) throws SQLException {
		try (PreparedStatement statement = connection.prepareStatement(statements.scheduleTakeover)) {
			statement.setLong(1, leaseMillis);
			statement.setBytes(2, id);
			statement.setObject(3, seen);
			// zero rows: another request scheduled it first, or the row changed
			return (statement.executeUpdate() == 1) ? new AcquireResult.InProgress(Duration.ofMillis(leaseMillis))
					: null;
		}
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
		String sql = this.statements.complete;
		return JdbcSupport.execute(this.dataSource, "complete", (connection) -> {
			try (PreparedStatement statement = connection.prepareStatement(sql)) {
				statement.setBytes(1, encoded);
				statement.setLong(2, ttlMillis);
				statement.setBytes(3, id);
				statement.setObject(4, owner);
				statement.setBytes(5, id);
				statement.setObject(6, owner);
				try (ResultSet row = statement.executeQuery()) {
					return row.next() && row.getBoolean(1);
				}
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
		return JdbcSupport.execute(this.dataSource, "complete", (connection) -> {
			try (PreparedStatement statement = connection.prepareStatement(sql)) {
				statement.setBytes(1, id);
				statement.setString(2, key.scope());
				statement.setString(3, key.key());
				statement.setBytes(4, fingerprint.toByteArray());
				statement.setObject(5, owner);
				statement.setLong(6, ttlMillis);
				statement.setBytes(7, encoded);
				statement.setBytes(8, id);
				statement.setObject(9, owner);
				try (ResultSet row = statement.executeQuery()) {
					return row.next() && row.getBoolean(1);
				}
			}
		});
	}

	@Override
	public boolean release(IdempotencyKey key, OwnerToken token) {
		Objects.requireNonNull(key, "'key' must not be null");
		Objects.requireNonNull(token, "'token' must not be null");
		byte[] id = key.digest();
		UUID owner = toUuid(token);
		String sql = this.statements.release;
		return JdbcSupport.execute(this.dataSource, "release", (connection) -> {
			try (PreparedStatement statement = connection.prepareStatement(sql)) {
				statement.setBytes(1, id);
				statement.setObject(2, owner);
				try (ResultSet row = statement.executeQuery()) {
					return row.next() && row.getBoolean(1);
				}
			}
		});
	}

	@Override
	public boolean extend(IdempotencyKey key, OwnerToken token, Duration lease) {
		Objects.requireNonNull(key, "'key' must not be null");
		Objects.requireNonNull(token, "'token' must not be null");
		long leaseMillis = StoreDurations.toMillis(lease, "lease");
		byte[] id = key.digest();
		UUID owner = toUuid(token);
		String sql = this.statements.extend;
		return JdbcSupport.execute(this.dataSource, "extend", (connection) -> {
			try (PreparedStatement statement = connection.prepareStatement(sql)) {
				statement.setLong(1, leaseMillis);
				statement.setLong(2, leaseMillis);
				statement.setBytes(3, id);
				statement.setObject(4, owner);
				return statement.executeUpdate() == 1;
			}
		});
	}

	@Override
	public Optional<IdempotencyRecord> find(IdempotencyKey key) {
		Objects.requireNonNull(key, "'key' must not be null");
		byte[] id = key.digest();
		String sql = this.statements.find;
		return JdbcSupport.execute(this.dataSource, "find", (connection) -> {
			try (PreparedStatement statement = connection.prepareStatement(sql)) {
				statement.setBytes(1, id);
				try (ResultSet row = statement.executeQuery()) {
					return row.next() ? Optional.of(toRecord(row, key)) : Optional.empty();
				}
			}
		});
	}

	@Override
	public boolean evict(IdempotencyKey key) {
		Objects.requireNonNull(key, "'key' must not be null");
		byte[] id = key.digest();
		String sql = this.statements.evict;
		return JdbcSupport.execute(this.dataSource, "evict", (connection) -> {
			try (PreparedStatement statement = connection.prepareStatement(sql)) {
				statement.setBytes(1, id);
				try (ResultSet row = statement.executeQuery()) {
					return row.next() && row.getBoolean(1);
				}
			}
		});
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
				timeToLive(row));
	}

	private static Duration timeToLive(ResultSet row) throws SQLException {
		return Duration.ofMillis(Math.max(0, row.getLong("ttl_ms")));
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
	 * SQL text for one table name.
	 */
	private static final class Statements {

		private final TableName table;

		private final String acquire;

		private final String takeOver;

		private final String scheduleTakeover;

		private final String complete;

		private final String completeUnclaimed;

		private final String release;

		private final String extend;

		private final String find;

		private final String evict;

		Statements(TableName table) {
			this.table = table;
			this.acquire = table.substitute(ACQUIRE);
			this.takeOver = table.substitute(TAKE_OVER);
			this.scheduleTakeover = table.substitute(SCHEDULE_TAKEOVER);
			this.complete = table.substitute(COMPLETE);
			this.completeUnclaimed = table.substitute(COMPLETE_UNCLAIMED);
			this.release = table.substitute(RELEASE);
			this.extend = table.substitute(EXTEND);
			this.find = table.substitute(FIND);
			this.evict = table.substitute(EVICT);
		}

	}

}
