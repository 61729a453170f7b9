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

package dev.idempotency.spring.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

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
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStringCommands.SetOption;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.data.redis.core.types.Expiration;

/**
 * {@link IdempotencyStore} on Redis, through any Spring Data Redis
 * {@link RedisConnectionFactory} (standalone, Sentinel or Cluster; tested on Lettuce and
 * on Jedis).
 * <p>
 * <b>Atomic primitives.</b> Every operation is one round trip. A key is claimed with
 * <code>SET key claim NX PX ttl GET</code>: one plain command that either creates the
 * processing record or returns the record that is there, so a first request and the
 * replay of a completed key cost no script at all. Only when the key is held by a
 * processing record with the same fingerprint does a second round trip ask a Lua script
 * whether its lease has lapsed and, if so, take it over atomically. The other operations
 * are Lua scripts, Spring Data Redis {@link RedisScript}s run with {@code EVALSHA}
 * (falling back to {@code EVAL} once when the server's script cache was flushed), because
 * each must check the owner token and write in one step: the fencing of {@code complete},
 * {@code release} and {@code extend}. {@link #evict} is a plain {@code DEL}. A server
 * whose {@code SET} cannot combine {@code NX} with {@code GET} (before Redis 7.0) answers
 * the claim with a syntax error; the store then claims with the script, in one round trip
 * too.
 * <p>
 * <b>Data layout.</b> A record is one Redis string under the key
 * <code>{keyPrefix}{<i>digest</i>}</code>, where <i>digest</i> is the unpadded base64url
 * form of {@link IdempotencyKey#digest()}. The braces are a Redis Cluster hash tag, so a
 * command only ever touches one slot; keys have a fixed length and client-chosen
 * characters never reach Redis. The value is binary: a 97-byte header (state, lease floor
 * or expiry, creation time, claim TTL, request fingerprint and owner token
 * ({@link OwnerToken#toBytes()}), times as 16 ASCII digits) followed, once completed, by
 * the response in the {@link StoredResponseCodec} form. The layout is drawn and named
 * once, in {@code RedisRecordLayout}, which also gives the scripts its positions.
 * <p>
 * <b>Time.</b> The key's Redis TTL is the record's expiry: {@code max(ttl, lease)} of
 * {@link #acquire} while processing (so the record of a crashed owner disappears even if
 * nobody takes it over), the {@code ttl} of {@link #complete} once completed. The lease
 * is measured on the same TTL: a claim stores {@code ttl - lease} as its lease floor, and
 * the lease has lapsed once the key's remaining TTL has run down to the floor, which
 * needs no clock of the application and no {@code TIME} call for the claim;
 * {@link #extend} moves the floor. Creation and expiry times are read from Redis
 * {@code TIME} inside the scripts (a claim's creation time is derived from its TTL until
 * a script stamps it). Requires Redis 5 or later (scripts replicated by effects).
 * <p>
 * <b>Failures.</b> Any error of the connection or the server, and any value that is not a
 * record of this layout (the store fails closed), is thrown as
 * {@link IdempotencyStoreException}. A completed record whose response cannot be decoded
 * (corrupt, or written by a later format version) is not a failure: it is answered with
 * {@link StoredResponse#unreadable()} until it expires, and a warning is logged.
 * <p>
 * Configure the store with its setters before use; afterwards it is thread-safe. No
 * argument may be {@code null}.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public class RedisIdempotencyStore implements IdempotencyStore {

	/**
	 * Default prefix of every Redis key the store writes.
	 */
	public static final String DEFAULT_KEY_PREFIX = "idempotency:";

	private static final Log logger = LogFactory.getLog(RedisIdempotencyStore.class);

	private static final long ACQUIRED = 1;

	private static final long REPLAY = 2;

	private static final long IN_PROGRESS = 3;

	private static final long MISMATCH = 4;

	private static final long UNREADABLE = -1;

	private static final Base64.Encoder BASE64URL = Base64.getUrlEncoder().withoutPadding();

	private final RedisConnectionFactory connectionFactory;

	private final RedisScriptRunner scripts = new RedisScriptRunner();

	// the key prefix and the hash tag's opening brace in UTF-8, built once for every key
	private byte[] keyStart = keyStartOf(DEFAULT_KEY_PREFIX);

	private StoredResponseCodec codec = new StoredResponseCodec();

	// cleared for good when the server refuses SET with both NX and GET
	private volatile boolean claimWithSet = true;

	/**
	 * Create a store.
	 * @param connectionFactory the connection factory, never {@code null}
	 */
	public RedisIdempotencyStore(RedisConnectionFactory connectionFactory) {
		this.connectionFactory = Objects.requireNonNull(connectionFactory, "'connectionFactory' must not be null");
	}

	/**
	 * Set the prefix of every Redis key the store writes, so that several applications
	 * can share a Redis database. Defaults to {@value #DEFAULT_KEY_PREFIX}.
	 * @param keyPrefix the prefix, never {@code null}; may be empty but must not contain
	 * braces, which would change the Redis Cluster hash tag
	 */
	public void setKeyPrefix(String keyPrefix) {
		Objects.requireNonNull(keyPrefix, "'keyPrefix' must not be null");
		if (keyPrefix.indexOf('{') >= 0 || keyPrefix.indexOf('}') >= 0) {
			throw new IllegalArgumentException("'keyPrefix' must not contain braces");
		}
		this.keyStart = keyStartOf(keyPrefix);
	}

	/**
	 * Set the codec of stored responses. Defaults to a {@link StoredResponseCodec} with
	 * its default settings.
	 * @param codec the codec, never {@code null}
	 */
	public void setCodec(StoredResponseCodec codec) {
		this.codec = Objects.requireNonNull(codec, "'codec' must not be null");
	}

	/**
	 * Set whether keys are claimed with the Lua script instead of
	 * <code>SET NX PX GET</code>, as on servers before Redis 7.0. Defaults to
	 * {@code false}; the store switches by itself when the server refuses the command.
	 * @param claimWithScript whether to claim with the script
	 */
	void setClaimWithScript(boolean claimWithScript) {
		this.claimWithSet = !claimWithScript;
	}

	@Override
	public AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token, Duration lease,
			Duration ttl) {
		Objects.requireNonNull(fingerprint, "'fingerprint' must not be null");
		Objects.requireNonNull(token, "'token' must not be null");
		byte[] redisKey = redisKey(key);
		long leaseMillis = StoreDurations.toMillis(lease, "lease");
		// the record must not expire while its lease is live
		long ttlMillis = Math.max(StoreDurations.toMillis(ttl, "ttl"), leaseMillis);
		byte[] claim = RedisRecordLayout.claim(fingerprint, token, ttlMillis - leaseMillis, ttlMillis);
		if (this.claimWithSet) {
			AcquireResult result = claimWithSet(key, redisKey, claim, ttlMillis, fingerprint, token);
			if (result != null) {
				return result;
			}
		}
		List<Object> reply = execute(key, RedisRecordScripts.ACQUIRE, redisKey, claim, ascii(ttlMillis));
		long code = longAt(reply, 0);
		if (code == ACQUIRED) {
			return new AcquireResult.Acquired(token);
		}
		if (code == REPLAY) {
			return replay(bytesAt(reply, 1), key);
		}
		if (code == IN_PROGRESS) {
			return new AcquireResult.InProgress(Duration.ofMillis(Math.max(0, longAt(reply, 1))));
		}
		if (code == MISMATCH) {
			return new AcquireResult.Mismatch();
		}
		throw unreadable(key, code);
	}

	// null: the key is processing with the same fingerprint, or the server cannot combine
	// NX and GET; the script decides
	private @Nullable AcquireResult claimWithSet(IdempotencyKey key, byte[] redisKey, byte[] claim, long ttlMillis,
			RequestFingerprint fingerprint, OwnerToken token) {
		byte[] existing;
		try {
			// SetOption, deprecated in Spring Data Redis
			// 4.1 for SetCondition, which 4.0 lacks
			existing = call(key, (connection) -> connection.stringCommands()
				.setGet(redisKey, claim, Expiration.milliseconds(ttlMillis), SetOption.ifAbsent()));
		}
		catch (IdempotencyStoreException ex) {
			if (!hasMessage(ex, "syntax error")) {
				throw ex;
			}
			this.claimWithSet = false;
			logger.info("Redis cannot combine NX and GET in SET (a server before 7.0): claiming keys with a script");
			return null;
		}
		if (existing == null) {
			return new AcquireResult.Acquired(token);
		}
		if (!RedisRecordLayout.hasHeader(existing)) {
			throw unreadable(key, UNREADABLE);
		}
		if (!RedisRecordLayout.hasFingerprint(existing, fingerprint)) {
			return new AcquireResult.Mismatch();
		}
		return RedisRecordLayout.isCompleted(existing) ? replay(existing, key) : null;
	}

	@Override
	public boolean complete(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
		Objects.requireNonNull(token, "'token' must not be null");
		Objects.requireNonNull(response, "'response' must not be null");
		byte[] ttlMillis = ascii(StoreDurations.toMillis(ttl, "ttl"));
		byte[] encoded = this.codec.encode(response);
		return isDone(key,
				execute(key, RedisRecordScripts.COMPLETE, redisKey(key), token.toBytes(), ttlMillis, encoded));
	}

	@Override
	public boolean release(IdempotencyKey key, OwnerToken token) {
		Objects.requireNonNull(token, "'token' must not be null");
		return isDone(key, execute(key, RedisRecordScripts.RELEASE, redisKey(key), token.toBytes()));
	}

	@Override
	public boolean extend(IdempotencyKey key, OwnerToken token, Duration lease) {
		Objects.requireNonNull(token, "'token' must not be null");
		byte[] leaseMillis = ascii(StoreDurations.toMillis(lease, "lease"));
		return isDone(key, execute(key, RedisRecordScripts.EXTEND, redisKey(key), token.toBytes(), leaseMillis));
	}

	@Override
	public Optional<IdempotencyRecord> find(IdempotencyKey key) {
		List<Object> reply = execute(key, RedisRecordScripts.FIND, redisKey(key));
		if (reply.isEmpty()) {
			return Optional.empty();
		}
		byte[] value = bytesAt(reply, 0);
		long pttl = longAt(reply, 1);
		long now = longAt(reply, 2);
		if (pttl < 0) {
			// every record is written with a TTL: someone changed it by hand
			throw new IdempotencyStoreException("Record of key '" + key + "' has no expiry in Redis");
		}
		if (!RedisRecordLayout.hasHeader(value)
				|| (RedisRecordLayout.isProcessing(value) && value.length != RedisRecordLayout.HEADER_LENGTH)) {
			throw unreadable(key, UNREADABLE);
		}
		boolean completed = RedisRecordLayout.isCompleted(value);
		long created = time(value, RedisRecordLayout.CREATED_OFFSET, key);
		// a completed record carries its expiry, which a replay reports too; TIME and
		// PTTL are each rounded to the millisecond, so their sum may be one off
		long expiresAt = completed ? time(value, RedisRecordLayout.TIME_OFFSET, key) : now + pttl;
		@Nullable Instant leaseExpiresAt = null;
		if (!completed) {
			long floor = time(value, RedisRecordLayout.TIME_OFFSET, key);
			leaseExpiresAt = Instant.ofEpochMilli(now + pttl - floor);
			if (created == 0) {
				created = now - (time(value, RedisRecordLayout.CLAIM_TTL_OFFSET, key) - pttl);
			}
		}
		RequestFingerprint fingerprint = RedisRecordLayout.fingerprint(value);
		OwnerToken owner = RedisRecordLayout.owner(value);
		@Nullable StoredResponse response = completed ? decodeResponse(value, key) : null;
		return Optional.of(new IdempotencyRecord(key, fingerprint,
				completed ? IdempotencyStatus.COMPLETED : IdempotencyStatus.PROCESSING, owner,
				Instant.ofEpochMilli(created), leaseExpiresAt, Instant.ofEpochMilli(expiresAt), response,
				Duration.ofMillis(pttl)));
	}

	@Override
	public boolean evict(IdempotencyKey key) {
		byte[] redisKey = redisKey(key);
		Long deleted = call(key, (connection) -> connection.keyCommands().del(redisKey));
		return deleted != null && deleted > 0;
	}

	@Override
	public String name() {
		return (getClass() == RedisIdempotencyStore.class) ? "redis" : IdempotencyStore.super.name();
	}

	/**
	 * Return the Redis key of a record.
	 * @param key the idempotency key
	 * @return the UTF-8 bytes of <code>{keyPrefix}{<i>digest</i>}</code>
	 */
	byte[] redisKey(IdempotencyKey key) {
		Objects.requireNonNull(key, "'key' must not be null");
		// base64url is ASCII, so its bytes are already UTF-8
		byte[] digest = BASE64URL.encode(key.digest());
		byte[] start = this.keyStart;
		byte[] redisKey = Arrays.copyOf(start, start.length + digest.length + 1);
		System.arraycopy(digest, 0, redisKey, start.length, digest.length);
		redisKey[redisKey.length - 1] = '}';
		return redisKey;
	}

	private static byte[] keyStartOf(String keyPrefix) {
		return (keyPrefix + "{").getBytes(StandardCharsets.UTF_8);
	}

	private <T> T execute(IdempotencyKey key, RedisScript<T> script, byte[]... keyAndArgs) {
		T reply = call(key, (connection) -> this.scripts.run(connection, script, keyAndArgs));
		if (reply == null) {
			throw new IdempotencyStoreException(
					"Redis gave no reply to script " + script.getSha1() + " for key '" + key + "'");
		}
		return reply;
	}

	private <T> @Nullable T call(IdempotencyKey key, RedisCall<T> call) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			return call.apply(connection);
		}
		catch (RuntimeException ex) {
			// Spring's DataAccessException, and whatever else the driver throws unwrapped
			// (for instance on a closed client): the store could not answer either way
			throw new IdempotencyStoreException("Redis could not answer for key '" + key + "': " + ex.getMessage(), ex);
		}
	}

	private boolean isDone(IdempotencyKey key, Long reply) {
		if (reply == UNREADABLE) {
			throw unreadable(key, reply);
		}
		return reply == 1;
	}

	private AcquireResult.Replay replay(byte[] value, IdempotencyKey key) {
		Instant expiresAt = Instant.ofEpochMilli(time(value, RedisRecordLayout.TIME_OFFSET, key));
		return new AcquireResult.Replay(decodeResponse(value, key), expiresAt);
	}

	private StoredResponse decodeResponse(byte[] value, IdempotencyKey key) {
		try {
			return this.codec.decode(value, RedisRecordLayout.HEADER_LENGTH,
					value.length - RedisRecordLayout.HEADER_LENGTH);
		}
		catch (StoredResponseFormatException ex) {
			// the request did complete: it must not run again, nor every retry fail
			// until the record expires
			logger.warn("Stored response of key '" + key + "' in Redis cannot be decoded (" + ex.getMessage()
					+ "): answering that it cannot be replayed until the record expires");
			return StoredResponse.unreadable();
		}
	}

	private static long time(byte[] value, int offset, IdempotencyKey key) {
		long millis = RedisRecordLayout.readTime(value, offset);
		if (millis == RedisRecordLayout.UNREADABLE_TIME) {
			throw unreadable(key, UNREADABLE);
		}
		return millis;
	}

	private static IdempotencyStoreException unreadable(IdempotencyKey key, long code) {
		return new IdempotencyStoreException(
				"Record of key '" + key + "' in Redis is not in the expected format (code " + code + ")");
	}

	/**
	 * Return whether an exception or one of its causes carries a Redis error message
	 * containing the given text.
	 * @param ex the exception
	 * @param text the text, such as an error code
	 * @return {@code true} if a message in the cause chain contains it
	 */
	private static boolean hasMessage(Throwable ex, String text) {
		Throwable candidate = ex;
		// a cause chain could in principle be cyclic: look a few levels deep at most
		for (int depth = 0; candidate != null && depth < 10; depth++) {
			String message = candidate.getMessage();
			if (message != null && message.contains(text)) {
				return true;
			}
			candidate = candidate.getCause();
		}
		return false;
	}

	private static byte[] ascii(long value) {
		return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
	}

	private static long longAt(List<Object> reply, int index) {
		Object element = (index < reply.size()) ? reply.get(index) : null;
		if (element instanceof Long number) {
			return number;
		}
		throw new IdempotencyStoreException("Unexpected Redis reply: integer expected at " + index);
	}

	private static byte[] bytesAt(List<Object> reply, int index) {
		Object element = (index < reply.size()) ? reply.get(index) : null;
		if (element instanceof byte[] bytes) {
			return bytes;
		}
		throw new IdempotencyStoreException("Unexpected Redis reply: bytes expected at " + index);
	}

	@FunctionalInterface
	private interface RedisCall<T> {

		@Nullable T apply(RedisConnection connection);

	}

}
