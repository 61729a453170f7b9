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

package dev.idempotency.spring.store.tiered;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.spring.store.jdbc.CountingDataSource;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencySchemaInitializer;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spring.store.redis.RedisIdempotencyStore;
import dev.idempotency.spring.store.redis.RedisMonitor;
import dev.idempotency.test.servers.TestServers;
import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The round trips of {@link TieredIdempotencyStore} on the wire: Redis commands sent by
 * the store's own connection (counted with {@link RedisMonitor}, robust against other
 * clients of a shared server) and PostgreSQL statements (counted with
 * {@link CountingDataSource}), for the paths of the table in
 * {@code docs/stores/tiered.md}.
 *
 * @author Idempotency contributors
 */
@Tag("serial")
class TieredRoundTripIT {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration TTL = Duration.ofMinutes(10);

	private static final RequestFingerprint FINGERPRINT = TieredIdempotencyStoreTests.fingerprint(9);

	private static final StoredResponse RESPONSE = new StoredResponse(201,
			List.of(new HttpHeader("Content-Type", "application/json")),
			"{\"payment\":\"p-9\"}".getBytes(StandardCharsets.UTF_8));

	private final String prefix = "idem-tiered-round-trips-" + UUID.randomUUID() + ":";

	private final String schema = "idem_tiered_rt_" + UUID.randomUUID().toString().substring(0, 8);

	private LettuceConnectionFactory connectionFactory;

	private LettuceConnectionFactory otherConnectionFactory;

	private HikariDataSource dataSource;

	private CountingDataSource counting;

	private RedisMonitor monitor;

	private RedisIdempotencyStore otherRedisStore;

	private TieredIdempotencyStore store;

	// the Redis claim: a SET NX GET, or, before Redis 7.0, the claim script
	private String claim;

	@BeforeEach
	void setUp() throws IOException {
		TestServers.Redis redis = TestServers.redis();
		RedisURI uri = RedisURI.create(redis.host(), redis.port());
		// a factory of its own whose commands all travel on one shared native connection
		this.connectionFactory = new LettuceConnectionFactory(LettuceConnectionFactory.createRedisConfiguration(uri));
		this.connectionFactory.setShareNativeConnection(true);
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		this.otherConnectionFactory = redis.connectionFactory();
		this.dataSource = TestServers.postgres().dataSource(this.schema);
		new JdbcIdempotencySchemaInitializer(this.dataSource).initialize();
		this.counting = new CountingDataSource(this.dataSource);
		RedisIdempotencyStore redisStore = new RedisIdempotencyStore(this.connectionFactory);
		redisStore.setKeyPrefix(this.prefix);
		// plays the Redis failover that loses records, on another connection
		this.otherRedisStore = new RedisIdempotencyStore(this.otherConnectionFactory);
		this.otherRedisStore.setKeyPrefix(this.prefix);
		this.store = new TieredIdempotencyStore(redisStore, new JdbcIdempotencyStore(this.counting.dataSource()));
		this.monitor = RedisMonitor.start(uri);
		this.claim = RedisMonitor.claimCommand(this.connectionFactory);
	}

	@AfterEach
	void tearDown() throws IOException {
		try {
			this.monitor.close();
			deleteRedisKeys();
			TestServers.Postgres.dropSchema(this.dataSource, this.schema);
		}
		finally {
			this.dataSource.close();
			this.connectionFactory.destroy();
			this.otherConnectionFactory.destroy();
		}
	}

	@Test
	void roundTripsOfEachPath() throws IOException {
		Paths paths = measurePaths();

		// Redis claim (a plain SET on Redis 7), Redis completion
		// (a script); durable claim, durable completion (both
		// writes: the claim is durable, see docs/architecture.md)
		assertThat(paths.first().redis()).containsExactly(this.claim, "evalsha");
		assertThat(paths.first().postgresql()).hasSize(2).allMatch(CountingDataSource::isWrite);
		assertThat(paths.hotReplay().redis()).containsExactly(this.claim);
		assertThat(paths.hotReplay().postgresql()).isEmpty();
		// Redis claim, durable claim (the plain insert finds a row, the combined claim
		// reads the replay), Redis re-warm over the claim
		assertThat(paths.coldReplay().redis()).containsExactly(this.claim, "evalsha");
		assertThat(paths.coldReplay().postgresql()).hasSize(2)
			.satisfiesExactly((sql) -> assertThat(sql).startsWith("INSERT INTO"),
					(sql) -> assertThat(sql).startsWith("WITH ins AS"));
		assertThat(paths.rewarmedReplay().redis()).containsExactly(this.claim);
		assertThat(paths.rewarmedReplay().postgresql()).isEmpty();
	}

	@Test
	void roundTripsOfEachPathInLookupClaimMode() throws IOException {
		this.store.setClaimMode(TieredClaimMode.LOOKUP);
		Paths paths = measurePaths();

		// the performance budget: at most 2 Redis round trips and 2 PostgreSQL
		// statements, only one of them a write: Redis claim, durable look-up (a read),
		// Redis completion, durable completion (the one write)
		assertThat(paths.first().redis()).containsExactly(this.claim, "evalsha");
		assertThat(paths.first().postgresql()).hasSize(2);
		assertThat(paths.first().postgresql()).filteredOn(CountingDataSource::isWrite).hasSize(1);
		assertThat(paths.first().postgresql().get(0)).satisfies(
				(sql) -> assertThat(CountingDataSource.isWrite(sql)).as("the look-up is read-only: %s", sql).isFalse());
		assertThat(paths.hotReplay().redis()).containsExactly(this.claim);
		assertThat(paths.hotReplay().postgresql()).isEmpty();
		// Redis claim, durable look-up (a read that finds the replay), Redis re-warm
		assertThat(paths.coldReplay().redis()).containsExactly(this.claim, "evalsha");
		assertThat(paths.coldReplay().postgresql()).hasSize(1).noneMatch(CountingDataSource::isWrite);
		assertThat(paths.rewarmedReplay().redis()).containsExactly(this.claim);
		assertThat(paths.rewarmedReplay().postgresql()).isEmpty();
	}

	private Paths measurePaths() throws IOException {
		// the first use of each script may cost an EVAL after the EVALSHA
		warmUp();

		IdempotencyKey key = TieredIdempotencyStoreTests.newKey();
		OwnerToken owner = OwnerToken.generate();
		RoundTrips first = measure(() -> {
			assertThat(this.store.acquire(key, FINGERPRINT, owner, LEASE, TTL))
				.isEqualTo(new AcquireResult.Acquired(owner));
			assertThat(this.store.complete(key, owner, RESPONSE, TTL)).isTrue();
		});
		RoundTrips hotReplay = measure(() -> assertReplay(key));
		assertThat(this.otherRedisStore.evict(key)).isTrue();
		RoundTrips coldReplay = measure(() -> assertReplay(key));
		RoundTrips rewarmedReplay = measure(() -> assertReplay(key));

		System.out.println("Tiered store round trips, " + this.store.getClaimMode()
				+ " claim (Redis commands / PostgreSQL statements):");
		System.out.println("  first request (acquire + complete): " + first);
		System.out.println("  replay of a hot key:                " + hotReplay);
		System.out.println("  replay after Redis lost the record: " + coldReplay);
		System.out.println("  next replay (Redis re-warmed):      " + rewarmedReplay);
		return new Paths(first, hotReplay, coldReplay, rewarmedReplay);
	}

	private void warmUp() {
		IdempotencyKey key = TieredIdempotencyStoreTests.newKey();
		OwnerToken owner = OwnerToken.generate();
		this.store.acquire(key, FINGERPRINT, owner, LEASE, TTL);
		this.store.complete(key, owner, RESPONSE, TTL);
		assertReplay(key);
		this.otherRedisStore.evict(key);
		assertReplay(key);
	}

	private void assertReplay(IdempotencyKey key) {
		assertThat(this.store.acquire(key, FINGERPRINT, OwnerToken.generate(), LEASE, TTL)).isInstanceOfSatisfying(
				AcquireResult.Replay.class, (replay) -> assertThat(replay.response()).isEqualTo(RESPONSE));
	}

	private RoundTrips measure(Runnable action) throws IOException {
		this.counting.takeStatements();
		List<List<String>> statements = new ArrayList<>();
		List<String> commands = this.monitor.commandsOf(this.connectionFactory, () -> {
			action.run();
			statements.add(this.counting.takeStatements());
		});
		return new RoundTrips(commands, statements.get(0));
	}

	private void deleteRedisKeys() {
		try (RedisConnection connection = this.otherConnectionFactory.getConnection()) {
			List<byte[]> keys = new ArrayList<>();
			ScanOptions options = ScanOptions.scanOptions().match(this.prefix + "*").count(1000).build();
			try (Cursor<byte[]> cursor = connection.keyCommands().scan(options)) {
				cursor.forEachRemaining(keys::add);
			}
			if (!keys.isEmpty()) {
				connection.keyCommands().del(keys.toArray(new byte[0][]));
			}
		}
	}

	private record RoundTrips(List<String> redis, List<String> postgresql) {

		@Override
		public String toString() {
			long writes = this.postgresql.stream().filter(CountingDataSource::isWrite).count();
			return this.redis.size() + " Redis " + this.redis + ", " + this.postgresql.size() + " PostgreSQL (" + writes
					+ " writes)";
		}

	}

	private record Paths(RoundTrips first, RoundTrips hotReplay, RoundTrips coldReplay, RoundTrips rewarmedReplay) {

	}

}
