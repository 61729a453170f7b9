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

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.IdempotencyStatus;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.StoredResponseCodec;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.IdempotencyStoreException;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.SocketOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.RedisStringCommands.SetOption;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.data.redis.core.types.Expiration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.within;

/**
 * What {@link RedisIdempotencyStore} writes to Redis and how it copes with Redis itself:
 * key and value layout, TTLs, a flushed script cache, unreadable records and an
 * unreachable server.
 *
 * @author Idempotency contributors
 */
@Tag("serial")
class RedisIdempotencyStoreStorageIT {

	private static final String PREFIX = RedisTestServer.uniquePrefix("storage");

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration TTL = Duration.ofHours(1);

	private final LettuceConnectionFactory connectionFactory = RedisTestServer.connectionFactory();

	private final RequestFingerprint fingerprint = fingerprint("first request");

	private final StoredResponse response = new StoredResponse(201,
			List.of(new HttpHeader("Content-Type", "application/json"), new HttpHeader("Location", "/payments/7")),
			"{\"id\":7}".getBytes(StandardCharsets.UTF_8));

	private RedisIdempotencyStore store;

	@BeforeEach
	void createStore() {
		this.store = new RedisIdempotencyStore(this.connectionFactory);
		this.store.setKeyPrefix(PREFIX);
	}

	@AfterAll
	static void deleteKeys() {
		RedisTestServer.deleteKeys(RedisTestServer.connectionFactory(), PREFIX);
	}

	@Test
	void keyIsPrefixAndHashTaggedDigestOfScopeAndKey() {
		IdempotencyKey key = new IdempotencyKey("tenant-1", "order-{42}");
		acquire(key, OwnerToken.generate());
		String digest = Base64.getUrlEncoder().withoutPadding().encodeToString(key.digest());
		String expected = PREFIX + "{" + digest + "}";
		assertThat(digest).hasSize(43).doesNotContain("{", "}");
		assertThat(exists(expected)).isTrue();
		assertThat(new String(this.store.redisKey(key), StandardCharsets.UTF_8)).isEqualTo(expected);
	}

	@Test
	void keyHasFixedLengthWhateverTheClientKey() {
		int expectedLength = PREFIX.length() + 45;
		assertThat(this.store.redisKey(IdempotencyKey.global("a"))).hasSize(expectedLength);
		assertThat(this.store.redisKey(IdempotencyKey.global("}".repeat(IdempotencyKey.MAX_KEY_LENGTH))))
			.hasSize(expectedLength);
		assertThat(this.store.redisKey(new IdempotencyKey("x".repeat(IdempotencyKey.MAX_SCOPE_LENGTH), "{b}")))
			.hasSize(expectedLength);
	}

	@Test
	void keyPrefixMustNotContainBraces() {
		assertThatIllegalArgumentException().isThrownBy(() -> this.store.setKeyPrefix("app{1}:"));
		assertThatIllegalArgumentException().isThrownBy(() -> this.store.setKeyPrefix("app}"));
	}

	@Test
	void defaultKeyPrefix() {
		RedisIdempotencyStore defaults = new RedisIdempotencyStore(this.connectionFactory);
		IdempotencyKey key = IdempotencyKey.global("k");
		assertThat(new String(defaults.redisKey(key), StandardCharsets.UTF_8)).startsWith("idempotency:{")
			.hasSize("idempotency:".length() + 45);
	}

	@Test
	void processingRecordIsBinaryHeader() {
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		acquire(key, token);
		byte[] value = get(key);
		assertThat(value).hasSize(97);
		assertThat(value[0]).isEqualTo((byte) 'P');
		// the lease lapses when the key's TTL has run down by the lease
		assertThat(digits(value, 1)).isEqualTo(TTL.toMillis() - LEASE.toMillis());
		// no clock was read for the claim: the creation time is not stamped yet
		assertThat(digits(value, 17)).isZero();
		assertThat(digits(value, 33)).isEqualTo(TTL.toMillis());
		assertThat(Arrays.copyOfRange(value, 49, 81)).isEqualTo(this.fingerprint.toByteArray());
		assertThat(Arrays.copyOfRange(value, 81, 97)).isEqualTo(token.toBytes());
	}

	@Test
	void completedRecordIsHeaderFollowedByEncodedResponse() {
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		acquire(key, token);
		Instant claimedAt = redisTime();
		assertThat(this.store.complete(key, token, this.response, TTL)).isTrue();
		byte[] value = get(key);
		assertThat(value[0]).isEqualTo((byte) 'C');
		assertThat(Instant.ofEpochMilli(digits(value, 1))).isCloseTo(redisTime().plus(TTL),
				within(1, ChronoUnit.MINUTES));
		assertThat(Instant.ofEpochMilli(digits(value, 17))).isCloseTo(claimedAt, within(1, ChronoUnit.MINUTES));
		assertThat(digits(value, 33)).isEqualTo(TTL.toMillis());
		assertThat(Arrays.copyOfRange(value, 49, 81)).isEqualTo(this.fingerprint.toByteArray());
		assertThat(Arrays.copyOfRange(value, 81, 97)).isEqualTo(token.toBytes());
		assertThat(Arrays.copyOfRange(value, 97, value.length))
			.isEqualTo(new StoredResponseCodec().encode(this.response));
	}

	@Test
	void recordTtlIsAcquireTtlThenCompletionTtl() {
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		acquire(key, token);
		assertThat(pttl(key)).isBetween(TTL.toMillis() - 60_000, TTL.toMillis());
		Duration completionTtl = Duration.ofHours(5);
		assertThat(this.store.complete(key, token, this.response, completionTtl)).isTrue();
		assertThat(pttl(key)).isBetween(completionTtl.toMillis() - 60_000, completionTtl.toMillis());
	}

	@Test
	void recordLivesAtLeastAsLongAsItsLease() {
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		Duration longLease = Duration.ofMinutes(10);
		assertThat(this.store.acquire(key, this.fingerprint, token, longLease, Duration.ofSeconds(5)))
			.isInstanceOf(AcquireResult.Acquired.class);
		assertThat(pttl(key)).isBetween(longLease.toMillis() - 60_000, longLease.toMillis());
	}

	@Test
	void extendMovesLeaseAndStretchesTtlOnlyWhenShorterThanLease() {
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		assertThat(this.store.acquire(key, this.fingerprint, token, Duration.ofSeconds(1), Duration.ofSeconds(2)))
			.isInstanceOf(AcquireResult.Acquired.class);
		Duration longLease = Duration.ofMinutes(20);
		assertThat(this.store.extend(key, token, longLease)).isTrue();
		assertThat(pttl(key)).isBetween(longLease.toMillis() - 60_000, longLease.toMillis());
		byte[] value = get(key);
		assertThat(value).hasSize(97);
		// the TTL was stretched to the lease, which now lasts as long as the key
		assertThat(digits(value, 1)).isZero();
		// the TTL changed, so the creation time is stamped now
		assertThat(Instant.ofEpochMilli(digits(value, 17))).isCloseTo(redisTime(), within(1, ChronoUnit.MINUTES));
		assertThat(this.store.extend(key, token, Duration.ofSeconds(1))).isTrue();
		long pttl = pttl(key);
		assertThat(pttl).isGreaterThan(longLease.toMillis() - 60_000);
		assertThat(digits(get(key), 1)).isBetween(pttl - 1_000, pttl + 60_000 - 1_000);
	}

	@Test
	void lapsedLeaseIsDecidedByRedisClockNotByKeyExpiry() throws InterruptedException {
		IdempotencyKey key = newKey();
		OwnerToken owner = OwnerToken.generate();
		assertThat(this.store.acquire(key, this.fingerprint, owner, Duration.ofMillis(50), TTL))
			.isInstanceOf(AcquireResult.Acquired.class);
		TimeUnit.MILLISECONDS.sleep(150);
		// the lease lapsed but the record is still there and still owned
		assertThat(pttl(key)).isGreaterThan(TTL.toMillis() - 60_000);
		assertThat(this.store.extend(key, owner, Duration.ofMillis(50))).isTrue();
		TimeUnit.MILLISECONDS.sleep(150);
		OwnerToken next = OwnerToken.generate();
		assertThat(this.store.acquire(key, fingerprint("other request"), next, LEASE, TTL))
			.isInstanceOf(AcquireResult.Mismatch.class);
		assertThat(this.store.acquire(key, this.fingerprint, next, LEASE, TTL))
			.isInstanceOf(AcquireResult.Acquired.class);
		assertThat(Arrays.copyOfRange(get(key), 81, 97)).isEqualTo(next.toBytes());
		assertThat(this.store.complete(key, owner, this.response, TTL)).isFalse();
		assertThat(this.store.complete(key, next, this.response, TTL)).isTrue();
	}

	@Test
	void replayExpiryAndFindTimesComeFromRedis() {
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		Instant before = redisTime();
		acquire(key, token);
		Instant after = redisTime();
		IdempotencyRecord processing = this.store.find(key).orElseThrow();
		assertThat(processing.status()).isEqualTo(IdempotencyStatus.PROCESSING);
		// derived from the claim TTL and the key's remaining TTL, both Redis' own
		assertThat(processing.createdAt()).isBetween(before.minusMillis(5), after.plusMillis(5));
		assertThat(Duration.between(processing.createdAt(), processing.leaseExpiresAt()))
			.isBetween(LEASE.minusMillis(5), LEASE.plusMillis(5));
		assertThat(Duration.between(processing.createdAt(), processing.expiresAt())).isBetween(TTL.minusMillis(5),
				TTL.plusMillis(5));
		assertThat(processing.owner()).isEqualTo(token);
		assertThat(processing.fingerprint()).isEqualTo(this.fingerprint);
		assertThat(processing.response()).isNull();
		assertThat(this.store.complete(key, token, this.response, TTL)).isTrue();
		Instant expectedExpiry = redisTime().plus(TTL);
		AcquireResult replay = this.store.acquire(key, this.fingerprint, OwnerToken.generate(), LEASE, TTL);
		assertThat(replay).isInstanceOfSatisfying(AcquireResult.Replay.class, (result) -> {
			assertThat(result.response()).isEqualTo(this.response);
			assertThat(result.expiresAt()).isCloseTo(expectedExpiry, within(1, ChronoUnit.MINUTES));
			assertThat(result.expiresAt()).isEqualTo(Instant.ofEpochMilli(digits(get(key), 1)));
		});
		IdempotencyRecord completed = this.store.find(key).orElseThrow();
		assertThat(completed.status()).isEqualTo(IdempotencyStatus.COMPLETED);
		assertThat(completed.leaseExpiresAt()).isNull();
		assertThat(completed.createdAt()).isCloseTo(processing.createdAt(), within(5, ChronoUnit.MILLIS));
		assertThat(completed.response()).isEqualTo(this.response);
		assertThat(completed.expiresAt()).isCloseTo(expectedExpiry, within(1, ChronoUnit.MINUTES));
	}

	@Test
	void claimIsTheStoresOnlyWriteWhenTheKeyIsNew() {
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		acquire(key, token);
		byte[] claim = RedisRecordLayout.claim(this.fingerprint, token, TTL.toMillis() - LEASE.toMillis(),
				TTL.toMillis());
		assertThat(get(key)).isEqualTo(claim);
	}

	@Test
	void scriptsAreSentAgainAfterScriptCacheIsFlushed() {
		IdempotencyKey warm = newKey();
		OwnerToken warmToken = OwnerToken.generate();
		exerciseEveryScript(warm, warmToken);
		String[] shas = RedisRecordScripts.all().stream().map(RedisScript::getSha1).toArray(String[]::new);
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			assertThat(connection.scriptingCommands().scriptExists(shas)).containsOnly(true);
			connection.scriptingCommands().scriptFlush();
			assertThat(connection.scriptingCommands().scriptExists(shas)).containsOnly(false);
		}
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		exerciseEveryScript(key, token);
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			assertThat(connection.scriptingCommands().scriptExists(shas)).containsOnly(true);
		}
	}

	private void exerciseEveryScript(IdempotencyKey key, OwnerToken token) {
		assertThat(this.store.acquire(key, this.fingerprint, token, LEASE, TTL))
			.isInstanceOf(AcquireResult.Acquired.class);
		// a duplicate of a processing key is decided by the acquire script
		assertThat(this.store.acquire(key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.InProgress.class);
		assertThat(this.store.extend(key, token, LEASE)).isTrue();
		assertThat(this.store.find(key)).isPresent();
		assertThat(this.store.release(key, token)).isTrue();
		assertThat(this.store.acquire(key, this.fingerprint, token, LEASE, TTL))
			.isInstanceOf(AcquireResult.Acquired.class);
		assertThat(this.store.complete(key, token, this.response, TTL)).isTrue();
		assertThat(this.store.acquire(key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Replay.class);
	}

	@Test
	void valueThatIsNotARecordFailsClosed() {
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		set(key, "not a record".getBytes(StandardCharsets.US_ASCII));
		assertEveryReadingOperationFails(key, token);
		set(key, record('X', this.fingerprint, token, new byte[0]));
		assertEveryReadingOperationFails(key, token);
	}

	@Test
	void processingRecordWithBadLeaseDigitsFailsClosed() {
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		byte[] value = record('P', this.fingerprint, token, new byte[0]);
		value[5] = 'x';
		set(key, value);
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> this.store.acquire(key, this.fingerprint, OwnerToken.generate(), LEASE, TTL));
		assertThatExceptionOfType(IdempotencyStoreException.class).isThrownBy(() -> this.store.find(key));
	}

	@Test
	void completedRecordWithUndecodableResponseIsAnsweredAsUnreadable() {
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		byte[] encoded = new StoredResponseCodec().encode(this.response);
		for (byte[] corrupt : List.of(new byte[0], Arrays.copyOf(encoded, encoded.length - 1),
				new byte[] { (byte) 0xEE, 1, 2, 3 })) {
			set(key, record('C', this.fingerprint, token, corrupt));
			// the request did complete: it is neither run again nor refused as an outage
			assertThat(this.store.acquire(key, this.fingerprint, OwnerToken.generate(), LEASE, TTL))
				.isInstanceOfSatisfying(AcquireResult.Replay.class,
						(replay) -> assertThat(replay.response()).isEqualTo(StoredResponse.unreadable()));
			assertThat(this.store.find(key))
				.hasValueSatisfying((found) -> assertThat(found.response()).isEqualTo(StoredResponse.unreadable()));
		}
		// the record itself is left for an operator to inspect or evict
		assertThat(this.store.evict(key)).isTrue();
		assertThat(this.store.find(key)).isEmpty();
	}

	@Test
	void recordWithoutRedisExpiryFailsClosed() {
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		acquire(key, token);
		persist(key);
		// only the script can tell whether the lease lapsed, and it needs the TTL
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> this.store.acquire(key, this.fingerprint, OwnerToken.generate(), LEASE, TTL));
		assertThatExceptionOfType(IdempotencyStoreException.class).isThrownBy(() -> this.store.find(key));
		assertThat(this.store.complete(key, token, this.response, TTL)).isTrue();
		persist(key);
		assertThatExceptionOfType(IdempotencyStoreException.class).isThrownBy(() -> this.store.find(key));
	}

	private void persist(IdempotencyKey key) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			connection.keyCommands().persist(this.store.redisKey(key));
		}
	}

	private void assertEveryReadingOperationFails(IdempotencyKey key, OwnerToken token) {
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> this.store.acquire(key, this.fingerprint, OwnerToken.generate(), LEASE, TTL));
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> this.store.complete(key, token, this.response, TTL));
		assertThatExceptionOfType(IdempotencyStoreException.class).isThrownBy(() -> this.store.release(key, token));
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> this.store.extend(key, token, LEASE));
		assertThatExceptionOfType(IdempotencyStoreException.class).isThrownBy(() -> this.store.find(key));
	}

	@Test
	@Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
	void unreachableRedisIsAStoreException() throws IOException {
		int port;
		try (ServerSocket socket = new ServerSocket(0)) {
			port = socket.getLocalPort();
		}
		LettuceClientConfiguration clientConfiguration = LettuceClientConfiguration.builder()
			.commandTimeout(Duration.ofMillis(500))
			.shutdownTimeout(Duration.ZERO)
			.clientOptions(ClientOptions.builder()
				.socketOptions(SocketOptions.builder().connectTimeout(Duration.ofMillis(500)).build())
				.build())
			.build();
		LettuceConnectionFactory unreachable = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", port), clientConfiguration);
		unreachable.afterPropertiesSet();
		unreachable.start();
		try {
			IdempotencyStore down = new RedisIdempotencyStore(unreachable);
			IdempotencyKey key = newKey();
			OwnerToken token = OwnerToken.generate();
			List<Consumer<IdempotencyStore>> operations = List.of(
					(store) -> store.acquire(key, this.fingerprint, token, LEASE, TTL),
					(store) -> store.complete(key, token, this.response, TTL), (store) -> store.release(key, token),
					(store) -> store.extend(key, token, LEASE), (store) -> store.find(key),
					(store) -> store.evict(key));
			for (Consumer<IdempotencyStore> operation : operations) {
				assertThatExceptionOfType(IdempotencyStoreException.class).isThrownBy(() -> operation.accept(down))
					.withMessageContaining("Redis could not answer");
			}
		}
		finally {
			unreachable.destroy();
		}
	}

	private void acquire(IdempotencyKey key, OwnerToken token) {
		assertThat(this.store.acquire(key, this.fingerprint, token, LEASE, TTL))
			.isInstanceOf(AcquireResult.Acquired.class);
	}

	private byte[] record(char state, RequestFingerprint fingerprint, OwnerToken token, byte[] response) {
		String time = String.format("%016d", 1_700_000_000_000L);
		byte[] header = (state + time + time + time).getBytes(StandardCharsets.US_ASCII);
		byte[] value = new byte[97 + response.length];
		System.arraycopy(header, 0, value, 0, 49);
		System.arraycopy(fingerprint.toByteArray(), 0, value, 49, 32);
		System.arraycopy(token.toBytes(), 0, value, 81, 16);
		System.arraycopy(response, 0, value, 97, response.length);
		return value;
	}

	private boolean exists(String redisKey) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			return Boolean.TRUE.equals(connection.keyCommands().exists(RedisTestServer.bytes(redisKey)));
		}
	}

	private byte[] get(IdempotencyKey key) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			byte[] value = connection.stringCommands().get(this.store.redisKey(key));
			assertThat(value).isNotNull();
			return value;
		}
	}

	private void set(IdempotencyKey key, byte[] value) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			connection.stringCommands().set(this.store.redisKey(key), value, Expiration.from(TTL), SetOption.upsert());
		}
	}

	private long pttl(IdempotencyKey key) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			Long pttl = connection.keyCommands().pTtl(this.store.redisKey(key));
			assertThat(pttl).isNotNull();
			return pttl;
		}
	}

	private Instant redisTime() {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			Long millis = connection.serverCommands().time();
			assertThat(millis).isNotNull();
			return Instant.ofEpochMilli(millis);
		}
	}

	private static long digits(byte[] value, int offset) {
		String text = new String(value, offset, 16, StandardCharsets.US_ASCII);
		assertThat(text).matches("[0-9]{16}");
		return Long.parseLong(text);
	}

	private static IdempotencyKey newKey() {
		return new IdempotencyKey("scope", "key-" + UUID.randomUUID());
	}

	private static RequestFingerprint fingerprint(String request) {
		try {
			return RequestFingerprint.of(MessageDigest.getInstance("SHA-256").digest(RedisTestServer.bytes(request)));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
