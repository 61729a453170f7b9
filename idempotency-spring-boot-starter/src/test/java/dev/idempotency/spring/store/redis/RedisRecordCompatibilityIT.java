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
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.IdempotencyStatus;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.spring.store.compat.RecordFixtures;
import dev.idempotency.spring.store.compat.RecordFixtures.Record;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStringCommands.SetOption;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.types.Expiration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Records of every fixture version (see {@link RecordFixtures} and
 * {@code docs/upgrading.md}), written into a real Redis with a raw {@code SET} under the
 * fixture's keys, are read by the current {@link RedisIdempotencyStore}; and the current
 * store writes exactly the records of {@link RecordFixtures#WRITTEN_VERSION}, under
 * exactly its keys. Redis stamps the creation and expiry times of a completed record from
 * its own clock: the comparison checks them and then puts the fixture's in.
 *
 * @author Idempotency contributors
 */
class RedisRecordCompatibilityIT {

	private static final String PREFIX = RedisTestServer.uniquePrefix("compat");

	private static final String KEYS = "redis/keys.txt";

	private final LettuceConnectionFactory connectionFactory = RedisTestServer.connectionFactory();

	// the key prefix of the test's store, in place of the default one
	private String prefix = PREFIX;

	@AfterAll
	static void deleteKeys() {
		RedisTestServer.deleteKeys(RedisTestServer.connectionFactory(), PREFIX);
	}

	static List<String> versions() {
		return RecordFixtures.versions();
	}

	@Test
	void currentStoreWritesTheFixtureKeysAndValues() {
		RedisIdempotencyStore store = newStore();
		Map<String, String> keys = new LinkedHashMap<>();
		Map<String, byte[]> values = new LinkedHashMap<>();
		RedisIdempotencyStore defaults = new RedisIdempotencyStore(this.connectionFactory);
		for (Record record : Record.values()) {
			keys.put(record.fileName(), new String(defaults.redisKey(record.key()), StandardCharsets.UTF_8));
			Instant before = redisTime();
			assertThat(store.acquire(record.key(), RecordFixtures.FINGERPRINT, RecordFixtures.OWNER,
					RecordFixtures.LEASE, RecordFixtures.TTL))
				.isInstanceOf(AcquireResult.Acquired.class);
			if (record.completed()) {
				assertThat(store.complete(record.key(), RecordFixtures.OWNER, record.response(), RecordFixtures.TTL))
					.isTrue();
			}
			Instant after = redisTime();
			values.put(record.fileName(), normalizeTimes(get(store, record.key()), record, before, after));
		}
		if (RecordFixtures.writing()) {
			writeFixtures(keys, values);
			return;
		}
		String version = RecordFixtures.WRITTEN_VERSION;
		assertThat(keys).as(RecordFixtures.FORMAT_CHANGED + " (Redis keys of fixture %s)", version)
			.isEqualTo(readKeys(version));
		for (Record record : Record.values()) {
			assertThat(HexFormat.of().formatHex(values.get(record.fileName())))
				.as(RecordFixtures.FORMAT_CHANGED + " (Redis value of fixture %s/%s)", version, valueFile(record))
				.isEqualTo(HexFormat.of().formatHex(readValue(version, record)));
		}
	}

	@ParameterizedTest
	@MethodSource("versions")
	void completedRecordsAreReplayedWithTheirStatusHeadersBodyAndExpiry(String version) {
		RedisIdempotencyStore store = newStore();
		Duration px = Duration.ofHours(1);
		for (Record record : RecordFixtures.completed()) {
			byte[] value = readValue(version, record);
			rawSet(version, record, value, px);
			AcquireResult result = store.acquire(record.key(), RecordFixtures.FINGERPRINT, OwnerToken.generate(),
					RecordFixtures.LEASE, RecordFixtures.TTL);
			assertThat(result).as(record.fileName()).isInstanceOfSatisfying(AcquireResult.Replay.class, (replay) -> {
				RecordFixtures.assertSameResponse(replay.response(), record);
				assertThat(replay.expiresAt()).isEqualTo(RecordFixtures.completedExpiry());
			});
			IdempotencyRecord found = store.find(record.key()).orElseThrow();
			assertThat(found.status()).isEqualTo(IdempotencyStatus.COMPLETED);
			assertThat(found.key()).isEqualTo(record.key());
			assertThat(found.fingerprint()).isEqualTo(RecordFixtures.FINGERPRINT);
			assertThat(found.owner()).isEqualTo(RecordFixtures.OWNER);
			assertThat(found.createdAt()).isEqualTo(RecordFixtures.CLAIMED_AT);
			assertThat(found.leaseExpiresAt()).isNull();
			assertThat(found.expiresAt()).isEqualTo(RecordFixtures.completedExpiry());
			// the key's own TTL, not the expiry field, decides how long it lives
			assertThat(found.timeToLive()).isBetween(px.minusMinutes(1), px);
			RecordFixtures.assertSameResponse(found.response(), record);
			assertThat(store.acquire(record.key(), RecordFixtures.otherFingerprint(), OwnerToken.generate(),
					RecordFixtures.LEASE, RecordFixtures.TTL))
				.isInstanceOf(AcquireResult.Mismatch.class);
			// a read changes nothing
			assertThat(get(store, record.key())).isEqualTo(value);
		}
	}

	@ParameterizedTest
	@MethodSource("versions")
	void inFlightClaimIsSeenInFlightAndItsOwnerCompletesIt(String version) {
		RedisIdempotencyStore store = newStore();
		IdempotencyKey key = Record.PROCESSING.key();
		byte[] claim = readValue(version, Record.PROCESSING);
		Instant before = redisTime();
		rawSet(version, Record.PROCESSING, claim, RecordFixtures.TTL);
		Instant after = redisTime();
		IdempotencyRecord found = store.find(key).orElseThrow();
		assertThat(found.status()).isEqualTo(IdempotencyStatus.PROCESSING);
		assertThat(found.fingerprint()).isEqualTo(RecordFixtures.FINGERPRINT);
		assertThat(found.owner()).isEqualTo(RecordFixtures.OWNER);
		assertThat(found.response()).isNull();
		// an unstamped claim: its creation time is
		// derived from its claim TTL and the key's
		assertThat(found.createdAt()).isBetween(before.minusSeconds(60), after.plusSeconds(60));
		assertThat(Duration.between(found.createdAt(), found.leaseExpiresAt()))
			.isBetween(RecordFixtures.LEASE.minusMillis(5), RecordFixtures.LEASE.plusMillis(5));
		assertThat(store.acquire(key, RecordFixtures.FINGERPRINT, OwnerToken.generate(), RecordFixtures.LEASE,
				RecordFixtures.TTL))
			.isInstanceOfSatisfying(AcquireResult.InProgress.class,
					(inProgress) -> assertThat(inProgress.retryAfter()).isBetween(Duration.ZERO, RecordFixtures.LEASE));
		assertThat(store.extend(key, RecordFixtures.OWNER, RecordFixtures.LEASE)).isTrue();
		StoredResponse response = Record.COMPLETED_WITH_HEADERS.response();
		assertThat(store.complete(key, OwnerToken.generate(), response, RecordFixtures.TTL)).isFalse();
		assertThat(store.complete(key, RecordFixtures.OWNER, response, RecordFixtures.TTL)).isTrue();
		assertThat(store.acquire(key, RecordFixtures.FINGERPRINT, OwnerToken.generate(), RecordFixtures.LEASE,
				RecordFixtures.TTL))
			.isInstanceOfSatisfying(AcquireResult.Replay.class,
					(replay) -> RecordFixtures.assertSameResponse(replay.response(), Record.COMPLETED_WITH_HEADERS));
	}

	@ParameterizedTest
	@MethodSource("versions")
	void leaseFloorAndClaimTtlAreHonoured(String version) {
		RedisIdempotencyStore store = newStore();
		IdempotencyKey key = Record.PROCESSING.key();
		byte[] claim = readValue(version, Record.PROCESSING);
		long floor = RecordFixtures.TTL.minus(RecordFixtures.LEASE).toMillis();
		// the key's TTL has run down a minute past the lease floor: the lease lapsed
		rawSet(version, Record.PROCESSING, claim, Duration.ofMillis(floor).minusMinutes(1));
		Instant now = redisTime();
		IdempotencyRecord found = store.find(key).orElseThrow();
		assertThat(found.leaseExpiresAt()).isBefore(now);
		assertThat(found.createdAt()).isBetween(now.minus(RecordFixtures.LEASE).minusSeconds(120),
				now.minus(RecordFixtures.LEASE));
		assertThat(store.acquire(key, RecordFixtures.otherFingerprint(), OwnerToken.generate(), RecordFixtures.LEASE,
				RecordFixtures.TTL))
			.isInstanceOf(AcquireResult.Mismatch.class);
		OwnerToken next = OwnerToken.generate();
		assertThat(store.acquire(key, RecordFixtures.FINGERPRINT, next, RecordFixtures.LEASE, RecordFixtures.TTL))
			.isInstanceOf(AcquireResult.Acquired.class);
		// the fixture's owner was fenced by the takeover
		assertThat(store.complete(key, RecordFixtures.OWNER, Record.COMPLETED_WITH_BODY.response(), RecordFixtures.TTL))
			.isFalse();
		assertThat(store.find(key).orElseThrow().owner()).isEqualTo(next);
	}

	private RedisIdempotencyStore newStore() {
		this.prefix = PREFIX + UUID.randomUUID() + ":";
		RedisIdempotencyStore store = new RedisIdempotencyStore(this.connectionFactory);
		store.setKeyPrefix(this.prefix);
		return store;
	}

	// the expiry and creation times of a completed record come from Redis TIME: check
	// them, then replace them with the fixture's
	private static byte[] normalizeTimes(byte[] value, Record record, Instant before, Instant after) {
		if (!record.completed()) {
			return value;
		}
		long created = RedisRecordLayout.readTime(value, RedisRecordLayout.CREATED_OFFSET);
		long expiry = RedisRecordLayout.readTime(value, RedisRecordLayout.TIME_OFFSET);
		assertThat(Instant.ofEpochMilli(created)).isBetween(before.minusSeconds(60), after.plusSeconds(60));
		assertThat(Duration.ofMillis(expiry - created)).isBetween(RecordFixtures.TTL,
				RecordFixtures.TTL.plusSeconds(60));
		byte[] normalized = value.clone();
		RedisRecordLayout.writeTime(normalized, RedisRecordLayout.CREATED_OFFSET,
				RecordFixtures.CLAIMED_AT.toEpochMilli());
		RedisRecordLayout.writeTime(normalized, RedisRecordLayout.TIME_OFFSET,
				RecordFixtures.completedExpiry().toEpochMilli());
		return normalized;
	}

	private static String valueFile(Record record) {
		return "redis/" + record.fileName() + ".hex";
	}

	private static byte[] readValue(String version, Record record) {
		return RecordFixtures.parseHex(RecordFixtures.read(version, valueFile(record)));
	}

	private static Map<String, String> readKeys(String version) {
		Map<String, String> keys = new LinkedHashMap<>();
		for (String line : RecordFixtures.read(version, KEYS).split("\n")) {
			if (!line.isBlank() && !line.startsWith("#")) {
				String[] parts = line.trim().split("\\s+", 2);
				keys.put(parts[0], parts[1]);
			}
		}
		return keys;
	}

	private static void writeFixtures(Map<String, String> keys, Map<String, byte[]> values) {
		StringBuilder keysText = new StringBuilder("# Redis key of each record with the default key prefix "
				+ "'idempotency:': prefix, then the unpadded base64url SHA-256 of scope NUL key in braces\n");
		keys.forEach((name, key) -> keysText.append(name).append(' ').append(key).append('\n'));
		RecordFixtures.write(KEYS, keysText.toString());
		for (Record record : Record.values()) {
			byte[] value = values.get(record.fileName());
			StringBuilder text = new StringBuilder();
			text.append("# Redis value of record '")
				.append(record.fileName())
				.append("' of version ")
				.append(RecordFixtures.WRITTEN_VERSION)
				.append(" (layout: RedisRecordLayout); hex, '#' starts a comment\n");
			text.append(RecordFixtures.hexLine(range(value, 0, 1), "state"));
			text.append(RecordFixtures.hexLine(range(value, 1, 17), record.completed() ? "expiry" : "lease floor"));
			text.append(RecordFixtures.hexLine(range(value, 17, 33), "created at"));
			text.append(RecordFixtures.hexLine(range(value, 33, 49), "claim TTL"));
			text.append(RecordFixtures.hexLine(range(value, 49, 81), "fingerprint"));
			text.append(RecordFixtures.hexLine(range(value, 81, 97), "owner token"));
			for (int at = RedisRecordLayout.HEADER_LENGTH; at < value.length; at += 32) {
				text.append(RecordFixtures.hexLine(range(value, at, Math.min(at + 32, value.length)),
						(at == RedisRecordLayout.HEADER_LENGTH) ? "response (StoredResponseCodec)" : null));
			}
			RecordFixtures.write(valueFile(record), text.toString());
		}
	}

	private static byte[] range(byte[] value, int from, int to) {
		return Arrays.copyOfRange(value, from, to);
	}

	// SET the value under the fixture's key, with
	// the test's prefix in place of the default
	private void rawSet(String version, Record record, byte[] value, Duration px) {
		String key = readKeys(version).get(record.fileName());
		assertThat(key).startsWith(RedisIdempotencyStore.DEFAULT_KEY_PREFIX);
		byte[] redisKey = (this.prefix + key.substring(RedisIdempotencyStore.DEFAULT_KEY_PREFIX.length()))
			.getBytes(StandardCharsets.UTF_8);
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			connection.stringCommands()
				.set(redisKey, value, Expiration.milliseconds(px.toMillis()), SetOption.upsert());
		}
	}

	private byte[] get(RedisIdempotencyStore store, IdempotencyKey key) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			byte[] value = connection.stringCommands().get(store.redisKey(key));
			assertThat(value).isNotNull();
			return value;
		}
	}

	private Instant redisTime() {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			Long millis = connection.serverCommands().time();
			assertThat(millis).isNotNull();
			return Instant.ofEpochMilli(millis);
		}
	}

}
