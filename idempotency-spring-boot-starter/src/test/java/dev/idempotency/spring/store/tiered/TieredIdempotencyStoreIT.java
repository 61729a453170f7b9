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
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyStatus;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencySchemaInitializer;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spring.store.redis.RedisIdempotencyStore;
import dev.idempotency.test.AbstractIdempotencyStoreTests;
import dev.idempotency.test.servers.TestServers;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.SocketOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link TieredIdempotencyStore} over a real Redis and a real PostgreSQL: the store
 * contract, a Redis that loses its data and a Redis that cannot be reached.
 *
 * @author Idempotency contributors
 */
@Tag("contract")
class TieredIdempotencyStoreIT extends AbstractIdempotencyStoreTests {

	// unique per run: two builds may share one server
	private static final String SCHEMA = "idem_tiered_it_" + Long.toHexString(System.nanoTime());

	static final String PREFIX = "idem-tiered-it-" + UUID.randomUUID() + ":";

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration TTL = Duration.ofMinutes(10);

	private static final StoredResponse RESPONSE = new StoredResponse(201,
			List.of(new HttpHeader("Content-Type", "application/json")),
			"{\"payment\":\"p-1\"}".getBytes(StandardCharsets.UTF_8));

	static LettuceConnectionFactory redis;

	static HikariDataSource dataSource;

	// the PostgreSQL pool, which a subclass may replace as dataSource by another
	// database's
	private static HikariDataSource postgres;

	FaultInjectingStore fast;

	FaultInjectingStore durable;

	@BeforeAll
	static void connect() {
		redis = TestServers.redis().connectionFactory();
		postgres = TestServers.postgres().dataSource(SCHEMA);
		dataSource = postgres;
		new JdbcIdempotencySchemaInitializer(dataSource).initialize();
	}

	@AfterAll
	static void cleanUp() {
		try {
			deleteRedisKeys();
			TestServers.Postgres.dropSchema(postgres, SCHEMA);
		}
		finally {
			postgres.close();
			redis.destroy();
		}
	}

	@Override
	protected IdempotencyStore createStore() {
		RedisIdempotencyStore redisStore = new RedisIdempotencyStore(redis);
		redisStore.setKeyPrefix(PREFIX);
		this.fast = new FaultInjectingStore("redis", redisStore, null);
		// the contract's lapse tests take a lapsed lease over
		// at first sight; the confirmed takeover, PostgreSQL's
		// default, is tested in JdbcIdempotencyStorePostgresIT
		JdbcIdempotencyStore postgresql = new JdbcIdempotencyStore(dataSource);
		postgresql.setConfirmTakeover(false);
		this.durable = new FaultInjectingStore("postgresql", postgresql, null);
		return tiered(this.fast, this.durable);
	}

	/**
	 * Return the claim mode of the stores under test.
	 * @return the claim mode
	 */
	protected TieredClaimMode claimMode() {
		return TieredClaimMode.DURABLE;
	}

	/**
	 * Return how the stores under test commit the durable claim.
	 * @return the claim commit
	 */
	protected ClaimCommit claimCommit() {
		return ClaimCommit.SYNCHRONOUS;
	}

	/**
	 * Return the query of a record's remaining lifetime in milliseconds, rounded up, by
	 * the durable tier's clock.
	 * @return the query, with the record's id as its parameter
	 */
	String remainingMillisSql() {
		return "SELECT ceil(extract(epoch FROM expires_at - now()) * 1000)::bigint FROM idempotency_record WHERE id = ?";
	}

	TieredIdempotencyStore tiered(IdempotencyStore fastTier, IdempotencyStore durableTier) {
		TieredIdempotencyStore store = new TieredIdempotencyStore(fastTier, durableTier);
		store.setClaimMode(claimMode());
		store.setClaimCommit(claimCommit());
		return store;
	}

	@Test
	void lapsedLeaseIsAnsweredWithPostgresqlsConfirmationAsAKnownWait() throws InterruptedException {
		RedisIdempotencyStore redisStore = new RedisIdempotencyStore(redis);
		redisStore.setKeyPrefix(PREFIX);
		// the durable claim, and PostgreSQL's default: a lapsed lease is taken over a
		// lease after it is found
		TieredIdempotencyStore store = new TieredIdempotencyStore(redisStore, new JdbcIdempotencyStore(dataSource));
		IdempotencyKey key = IdempotencyKey.global(UUID.randomUUID().toString());
		RequestFingerprint fingerprint = RequestFingerprint.of(new byte[32]);
		store.acquire(key, fingerprint, OwnerToken.generate(), Duration.ofMillis(100), Duration.ofMinutes(5));
		Thread.sleep(300);
		// Redis's claim lapsed with the lease; PostgreSQL knows the owner is gone
		assertThat(store.acquire(key, fingerprint, OwnerToken.generate(), Duration.ofSeconds(4), Duration.ofMinutes(5)))
			.isEqualTo(new AcquireResult.InProgress(Duration.ofSeconds(4), true));
	}

	@Test
	void redisDataLostReplaysFromPostgresqlAndRewarmsRedis() {
		IdempotencyKey key = TieredIdempotencyStoreTests.newKey();
		RequestFingerprint fingerprint = TieredIdempotencyStoreTests.fingerprint(3);
		OwnerToken token = OwnerToken.generate();
		assertThat(store().acquire(key, fingerprint, token, LEASE, TTL)).isEqualTo(new AcquireResult.Acquired(token));
		assertThat(store().complete(key, token, RESPONSE, TTL)).isTrue();
		deleteRedisKeys();
		this.fast.resetCalls();
		this.durable.resetCalls();
		assertThat(store().acquire(key, fingerprint, OwnerToken.generate(), LEASE, TTL)).isInstanceOfSatisfying(
				AcquireResult.Replay.class, (replay) -> assertThat(replay.response()).isEqualTo(RESPONSE));
		assertThat(this.durable.totalCalls()).isOne();
		assertThat(this.fast.calls("complete")).isOne();
		assertThat(this.fast.find(key)).get()
			.satisfies((record) -> assertThat(record.status()).isEqualTo(IdempotencyStatus.COMPLETED));
		this.fast.resetCalls();
		this.durable.resetCalls();
		assertThat(store().acquire(key, fingerprint, OwnerToken.generate(), LEASE, TTL)).isInstanceOfSatisfying(
				AcquireResult.Replay.class, (replay) -> assertThat(replay.response()).isEqualTo(RESPONSE));
		assertThat(this.fast.totalCalls()).isOne();
		assertThat(this.durable.totalCalls()).isZero();
	}

	@Test
	void retriesRacingAfterRedisLostACompletedRecordAreAllReplayed() throws Exception {
		IdempotencyKey key = TieredIdempotencyStoreTests.newKey();
		RequestFingerprint fingerprint = TieredIdempotencyStoreTests.fingerprint(5);
		OwnerToken token = OwnerToken.generate();
		assertThat(store().acquire(key, fingerprint, token, LEASE, TTL)).isEqualTo(new AcquireResult.Acquired(token));
		assertThat(store().complete(key, token, RESPONSE, TTL)).isTrue();
		deleteRedisKeys();
		// the first retry claims the key in Redis and copies the record back; the others
		// meet its claim meanwhile, and must not be told that the key is in progress
		int retries = 40;
		ExecutorService executor = Executors.newFixedThreadPool(retries);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<AcquireResult>> answers = new ArrayList<>();
			for (int i = 0; i < retries; i++) {
				answers.add(executor.submit(() -> {
					start.await();
					return store().acquire(key, fingerprint, OwnerToken.generate(), LEASE, TTL);
				}));
			}
			start.countDown();
			for (Future<AcquireResult> answer : answers) {
				assertThat(answer.get(1, TimeUnit.MINUTES)).isInstanceOfSatisfying(AcquireResult.Replay.class,
						(replay) -> assertThat(replay.response()).isEqualTo(RESPONSE));
			}
		}
		finally {
			executor.shutdownNow();
		}
	}

	@Test
	void redisDataLostWhileProcessingAnswersInProgressOnlyWithTheDurableClaim() {
		IdempotencyKey key = TieredIdempotencyStoreTests.newKey();
		RequestFingerprint fingerprint = TieredIdempotencyStoreTests.fingerprint(4);
		OwnerToken owner = OwnerToken.generate();
		assertThat(store().acquire(key, fingerprint, owner, LEASE, TTL)).isEqualTo(new AcquireResult.Acquired(owner));
		deleteRedisKeys();
		OwnerToken duplicate = OwnerToken.generate();
		AcquireResult duplicateResult = store().acquire(key, fingerprint, duplicate, LEASE, TTL);
		if (claimMode() == TieredClaimMode.DURABLE) {
			// the durable claim answers for the lost Redis claim
			assertThat(duplicateResult).isInstanceOf(AcquireResult.InProgress.class);
			assertThat(this.fast.find(key)).isEmpty();
			assertThat(store().complete(key, owner, RESPONSE, TTL)).isTrue();
		}
		else {
			// the documented failure window of the lookup claim: PostgreSQL
			// knows nothing of the running handler, so the duplicate runs it
			// again; the first completion stored wins and the other is fenced
			assertThat(duplicateResult).isEqualTo(new AcquireResult.Acquired(duplicate));
			StoredResponse second = new StoredResponse(201, List.of(), "second".getBytes(StandardCharsets.UTF_8));
			assertThat(store().complete(key, duplicate, second, TTL)).isTrue();
			assertThat(store().complete(key, owner, RESPONSE, TTL)).isFalse();
			deleteRedisKeys();
			assertThat(store().acquire(key, fingerprint, OwnerToken.generate(), LEASE, TTL)).isInstanceOfSatisfying(
					AcquireResult.Replay.class, (replay) -> assertThat(replay.response()).isEqualTo(second));
		}
		assertThat(store().acquire(key, fingerprint, OwnerToken.generate(), LEASE, TTL))
			.isInstanceOf(AcquireResult.Replay.class);
	}

	@Test
	void anotherOwnersFastClaimLeftBehindStopsRefusingOnceTheRequestCompletes() {
		IdempotencyKey key = TieredIdempotencyStoreTests.newKey();
		RequestFingerprint fingerprint = TieredIdempotencyStoreTests.fingerprint(5);
		OwnerToken owner = OwnerToken.generate();
		assertThat(store().acquire(key, fingerprint, owner, LEASE, TTL)).isEqualTo(new AcquireResult.Acquired(owner));
		// Redis lost the claim (a failover), then a duplicate's Redis claim stayed
		// behind:
		// PostgreSQL refused it and its undo failed
		deleteRedisKeys();
		OwnerToken duplicate = OwnerToken.generate();
		assertThat(this.fast.acquire(key, fingerprint, duplicate, LEASE, TTL))
			.isEqualTo(new AcquireResult.Acquired(duplicate));
		if (claimMode() == TieredClaimMode.DURABLE) {
			assertThat(store().complete(key, owner, RESPONSE, TTL)).isTrue();
			// the retries get the response, not "in progress" until the stray lease ends
			assertThat(store().acquire(key, fingerprint, OwnerToken.generate(), LEASE, TTL)).isInstanceOfSatisfying(
					AcquireResult.Replay.class, (replay) -> assertThat(replay.response()).isEqualTo(RESPONSE));
		}
		else {
			// the lookup claim: Redis fences the completion
			assertThat(store().complete(key, owner, RESPONSE, TTL)).isFalse();
		}
	}

	@Test
	void rewarmedCopyNeverOutlivesTheDurableRecordWhateverTheApplicationClockSays() {
		IdempotencyKey key = TieredIdempotencyStoreTests.newKey();
		RequestFingerprint fingerprint = TieredIdempotencyStoreTests.fingerprint(6);
		// a record with ten minutes left in PostgreSQL, and none in Redis
		OwnerToken owner = OwnerToken.generate();
		assertThat(this.durable.acquire(key, fingerprint, owner, LEASE, TTL))
			.isEqualTo(new AcquireResult.Acquired(owner));
		assertThat(this.durable.complete(key, owner, RESPONSE, TTL)).isTrue();
		// the application's clock is six hours behind the database's; retries ask for 24h
		MutableClock behind = new MutableClock();
		behind.advance(Duration.ofHours(-6));
		TieredIdempotencyStore skewed = tiered(this.fast, this.durable);
		skewed.setClock(behind);
		assertThat(skewed.acquire(key, fingerprint, OwnerToken.generate(), LEASE, Duration.ofHours(24)))
			.isInstanceOfSatisfying(AcquireResult.Replay.class,
					(replay) -> assertThat(replay.response()).isEqualTo(RESPONSE));
		// PostgreSQL's remaining lifetime first, then the copy's: the copy has no more
		long durableMillis = new JdbcTemplate(dataSource).queryForObject(remainingMillisSql(), Long.class,
				(Object) key.digest());
		long copyMillis;
		try (RedisConnection connection = redis.getConnection()) {
			copyMillis = connection.keyCommands().pTtl(redisKey(key));
		}
		// only the time a command takes to reach Redis may be added to the copy's life
		assertThat(copyMillis).isPositive().isLessThanOrEqualTo(durableMillis + 2_000);
		assertThat(copyMillis).isGreaterThan(TTL.minusMinutes(2).toMillis());
	}

	@Test
	void unreachableRedisFallsBackToPostgresqlAndOpensBreaker() throws IOException {
		LettuceConnectionFactory unreachable = unreachableRedis();
		try {
			RedisIdempotencyStore redisStore = new RedisIdempotencyStore(unreachable);
			redisStore.setKeyPrefix(PREFIX);
			FaultInjectingStore deadFast = new FaultInjectingStore("redis", redisStore, null);
			TieredIdempotencyStore tiered = tiered(deadFast, this.durable);
			List<String> transitions = new ArrayList<>();
			tiered.setListener(new TieredStoreListener() {

				@Override
				public void onBreakerStateChange(CircuitBreakerState from, CircuitBreakerState to) {
					transitions.add(from + "->" + to);
				}

			});
			RequestFingerprint fingerprint = TieredIdempotencyStoreTests.fingerprint(5);
			for (int i = 0; i < 3; i++) {
				IdempotencyKey key = TieredIdempotencyStoreTests.newKey();
				OwnerToken token = OwnerToken.generate();
				assertThat(tiered.acquire(key, fingerprint, token, LEASE, TTL))
					.isEqualTo(new AcquireResult.Acquired(token));
			}
			assertThat(tiered.getCircuitBreakerState()).isEqualTo(CircuitBreakerState.OPEN);
			assertThat(transitions).containsExactly("CLOSED->OPEN");
			deadFast.resetCalls();
			IdempotencyKey key = TieredIdempotencyStoreTests.newKey();
			OwnerToken token = OwnerToken.generate();
			assertThat(tiered.acquire(key, fingerprint, token, LEASE, TTL))
				.isEqualTo(new AcquireResult.Acquired(token));
			assertThat(tiered.complete(key, token, RESPONSE, TTL)).isTrue();
			assertThat(tiered.acquire(key, fingerprint, OwnerToken.generate(), LEASE, TTL)).isInstanceOfSatisfying(
					AcquireResult.Replay.class, (replay) -> assertThat(replay.response()).isEqualTo(RESPONSE));
			assertThat(deadFast.totalCalls()).isZero();
		}
		finally {
			unreachable.destroy();
		}
	}

	static LettuceConnectionFactory unreachableRedis() throws IOException {
		int port;
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			port = socket.getLocalPort();
		}
		LettuceClientConfiguration client = LettuceClientConfiguration.builder()
			.commandTimeout(Duration.ofMillis(500))
			.clientOptions(ClientOptions.builder()
				.socketOptions(SocketOptions.builder().connectTimeout(Duration.ofMillis(500)).build())
				.build())
			.build();
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", port), client);
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	private static byte[] redisKey(IdempotencyKey key) {
		return TestServers.Redis.recordKey(PREFIX, key.digest());
	}

	static void deleteRedisKeys() {
		try (RedisConnection connection = redis.getConnection()) {
			List<byte[]> keys = new ArrayList<>();
			ScanOptions options = ScanOptions.scanOptions().match(PREFIX + "*").count(1000).build();
			try (Cursor<byte[]> cursor = connection.keyCommands().scan(options)) {
				cursor.forEachRemaining(keys::add);
			}
			if (!keys.isEmpty()) {
				connection.keyCommands().del(keys.toArray(new byte[0][]));
			}
		}
	}

}
