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
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyStatus;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.engine.CompletionOutcome;
import dev.idempotency.core.engine.Decision;
import dev.idempotency.core.engine.Execution;
import dev.idempotency.core.engine.IdempotencyEngine;
import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStoreException;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencySchemaInitializer;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spring.store.redis.RedisIdempotencyStore;
import dev.idempotency.test.TcpProxy;
import dev.idempotency.test.servers.TestServers;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.Driver;
import org.postgresql.PGProperty;
import org.postgresql.ds.PGSimpleDataSource;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * {@link TieredIdempotencyStore} over a real Redis and a real PostgreSQL, each behind a
 * {@link TcpProxy} that cuts the network on demand: a PostgreSQL outage fails closed and
 * leaves no Redis claim behind; a Redis outage in the middle of traffic is absorbed by
 * PostgreSQL, opens the circuit breaker, and heals once Redis is back.
 *
 * @author Idempotency contributors
 */
class TieredIdempotencyStoreFaultIT {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration TTL = Duration.ofMinutes(10);

	// what a command waits while Redis is cut: short, so that an outage costs little, yet
	// long enough that a healthy Redis always answers in time on a busy machine (a
	// command
	// that times out there sends the tiered store to PostgreSQL, which some tests hold)
	private static final Duration REDIS_TIMEOUT = Duration.ofSeconds(2);

	private static final Duration OPEN_DURATION = Duration.ofMillis(500);

	private static final int FAILURE_THRESHOLD = 3;

	private static final Duration DEADLINE = Duration.ofSeconds(60);

	private static final RequestFingerprint FINGERPRINT = TieredIdempotencyStoreTests.fingerprint(7);

	private final String prefix = "idem-tiered-fault-it-" + UUID.randomUUID() + ":";

	private final String schema = "idem_tiered_fault_" + UUID.randomUUID().toString().substring(0, 8);

	private TcpProxy redisProxy;

	private TcpProxy postgresProxy;

	private ClientResources clientResources;

	private LettuceConnectionFactory proxiedRedis;

	private LettuceConnectionFactory directRedis;

	private HikariDataSource directDataSource;

	private HikariDataSource proxiedDataSource;

	private FaultInjectingStore fast;

	private FaultInjectingStore durable;

	private RedisIdempotencyStore directRedisStore;

	private TieredIdempotencyStore store;

	private final List<String> transitions = new CopyOnWriteArrayList<>();

	private final AtomicInteger skipped = new AtomicInteger();

	private final AtomicInteger redisFailures = new AtomicInteger();

	private int skippedOperations;

	// Redis failures counted when the breaker was seen open for the first time
	private int openedAfter = -1;

	@BeforeEach
	void setUp() throws IOException {
		TestServers.Redis redis = TestServers.redis();
		this.directRedis = redis.connectionFactory();
		this.redisProxy = TcpProxy.start(redis.host(), redis.port());
		// reconnect quickly once the network is
		// back (Lettuce's default backs off to 30 s)
		this.clientResources = ClientResources.builder().reconnectDelay(Delay.constant(Duration.ofMillis(50))).build();
		this.proxiedRedis = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(this.redisProxy.host(), this.redisProxy.port()),
				LettuceClientConfiguration.builder()
					.clientResources(this.clientResources)
					.commandTimeout(REDIS_TIMEOUT)
					.clientOptions(ClientOptions.builder()
						.socketOptions(SocketOptions.builder().connectTimeout(REDIS_TIMEOUT).build())
						.build())
					.build());
		this.proxiedRedis.afterPropertiesSet();
		this.proxiedRedis.start();
		this.directDataSource = TestServers.postgres().dataSource(this.schema);
		new JdbcIdempotencySchemaInitializer(this.directDataSource).initialize();
		this.proxiedDataSource = proxiedDataSource();
		RedisIdempotencyStore redisStore = new RedisIdempotencyStore(this.proxiedRedis);
		redisStore.setKeyPrefix(this.prefix);
		this.directRedisStore = new RedisIdempotencyStore(this.directRedis);
		this.directRedisStore.setKeyPrefix(this.prefix);
		// counting only: no fault is injected, the proxies make the real ones
		this.fast = new FaultInjectingStore("redis", redisStore, null);
		this.durable = new FaultInjectingStore("postgresql", new JdbcIdempotencyStore(this.proxiedDataSource), null);
		this.store = new TieredIdempotencyStore(this.fast, this.durable);
		this.store.setClaimMode(claimMode());
		this.store.setFailureThreshold(FAILURE_THRESHOLD);
		this.store.setOpenDuration(OPEN_DURATION);
		this.store.setListener(new TieredStoreListener() {

			@Override
			public void onFallback(String operation, @Nullable Exception exception) {
				if (exception != null) {
					TieredIdempotencyStoreFaultIT.this.redisFailures.incrementAndGet();
				}
				else {
					TieredIdempotencyStoreFaultIT.this.skipped.incrementAndGet();
				}
			}

			@Override
			public void onBreakerStateChange(CircuitBreakerState from, CircuitBreakerState to) {
				TieredIdempotencyStoreFaultIT.this.transitions.add(from + "->" + to);
			}

		});
	}

	/**
	 * Return the claim mode of the store under test.
	 * @return the claim mode
	 */
	protected TieredClaimMode claimMode() {
		return TieredClaimMode.DURABLE;
	}

	@AfterEach
	void tearDown() {
		try {
			// clients first, so that closing the proxies resets no live connection
			closeAll(this.proxiedDataSource);
			if (this.proxiedRedis != null) {
				this.proxiedRedis.destroy();
			}
			if (this.clientResources != null) {
				this.clientResources.shutdown();
			}
			closeAll(this.postgresProxy, this.redisProxy);
			if (this.directRedis != null) {
				deleteRedisKeys();
			}
			if (this.directDataSource != null) {
				TestServers.Postgres.dropSchema(this.directDataSource, this.schema);
			}
		}
		finally {
			closeAll(this.directDataSource);
			if (this.directRedis != null) {
				this.directRedis.destroy();
			}
		}
	}

	@Test
	void postgresqlCutFailsClosedAndReleasesTheRedisClaim() {
		IdempotencyKey key = newKey();
		this.postgresProxy.cut();
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> this.store.acquire(key, FINGERPRINT, OwnerToken.generate(), LEASE, TTL));
		// Redis answered the claim: it is healthy, the claim was released
		assertThat(this.fast.calls("acquire")).isOne();
		assertThat(this.fast.calls("release")).isOne();
		assertThat(redisHolds(key)).isFalse();
		assertThat(this.store.getCircuitBreakerState()).isEqualTo(CircuitBreakerState.CLOSED);
		IdempotencyPolicy policy = IdempotencyPolicy.builder().ttl(TTL).lockTimeout(LEASE).build();
		try (IdempotencyEngine engine = new IdempotencyEngine(this.store)) {
			// the engine answers 503: nothing runs
			assertThat(engine.begin(key, FINGERPRINT, policy)).isInstanceOf(Decision.Unavailable.class);
			assertThat(redisHolds(key)).isFalse();
			this.postgresProxy.restore();
			assertThat(redisHolds(key)).isFalse();
			assertThat(new JdbcIdempotencyStore(this.directDataSource).find(key)).isEmpty();
			// the same key is acquired normally once PostgreSQL is
			// back, as soon as the pool has a connection again (on
			// a busy machine the first retry may still get 503)
			Decision decision = await().atMost(Duration.ofSeconds(30))
				.pollInterval(Duration.ofMillis(100))
				.until(() -> engine.begin(key, FINGERPRINT, policy), (next) -> {
					assertThat(next).isInstanceOfAny(Decision.Unavailable.class, Decision.Execute.class);
					return next instanceof Decision.Execute;
				});
			StoredResponse response = response(key);
			try (Execution execution = ((Decision.Execute) decision).execution()) {
				assertThat(execution.complete(response)).isEqualTo(CompletionOutcome.STORED);
			}
			assertThat(engine.begin(key, FINGERPRINT, policy)).isInstanceOfSatisfying(Decision.Replay.class,
					(replay) -> assertThat(replay.response()).isEqualTo(response));
			assertThat(redisHolds(key)).isTrue();
		}
	}

	// PostgreSQL hangs (it neither answers nor refuses) under the completion of a claim
	// committed asynchronously and lost in a crash: the completion fails once the socket
	// times out and keeps the claim, Redis turns every duplicate away meanwhile, and the
	// engine's retry of the completion stores the response once PostgreSQL answers again
	@Test
	void postgresqlHangingUnderTheCompletionOfALostAsynchronousClaimLetsItsRetryStoreTheResponse() {
		TieredIdempotencyStore asynchronous = new TieredIdempotencyStore(this.fast, this.durable);
		asynchronous.setClaimCommit(ClaimCommit.ASYNCHRONOUS);
		IdempotencyKey key = newKey();
		OwnerToken owner = OwnerToken.generate();
		assertThat(asynchronous.acquire(key, FINGERPRINT, owner, LEASE, TTL))
			.isEqualTo(new AcquireResult.Acquired(owner));
		// what a PostgreSQL crash leaves of a claim not yet flushed: no row
		assertThat(new JdbcTemplate(this.directDataSource).update("DELETE FROM idempotency_record WHERE id = ?",
				(Object) key.digest()))
			.isOne();
		StoredResponse response = response(key);
		this.postgresProxy.pause();
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> asynchronous.complete(key, owner, response, TTL));
		for (int i = 0; i < 8; i++) {
			assertThat(asynchronous.acquire(key, FINGERPRINT, OwnerToken.generate(), LEASE, TTL))
				.isInstanceOf(AcquireResult.InProgress.class);
		}
		this.postgresProxy.resume();
		assertThat(asynchronous.complete(key, owner, response, TTL)).isTrue();
		assertThat(new JdbcIdempotencyStore(this.directDataSource).find(key)).get().satisfies((record) -> {
			assertThat(record.status()).isEqualTo(IdempotencyStatus.COMPLETED);
			assertThat(record.owner()).isEqualTo(owner);
		});
		// PostgreSQL alone replays it once Redis forgets
		deleteRedisKeys();
		assertThat(asynchronous.acquire(key, FINGERPRINT, OwnerToken.generate(), LEASE, TTL)).isInstanceOfSatisfying(
				AcquireResult.Replay.class, (replay) -> assertThat(replay.response()).isEqualTo(response));
	}

	@Test
	void redisCutInTheMiddleOfTrafficIsServedByPostgresqlAndHeals() {
		List<IdempotencyKey> beforeCut = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			IdempotencyKey key = newKey();
			request(key);
			assertThat(redisHolds(key)).isTrue();
			beforeCut.add(key);
		}
		assertThat(this.redisFailures).hasValue(0);

		this.redisProxy.cut();
		int fastCallsBeforeCut = this.fast.totalCalls();
		int fastReleasesBeforeCut = this.fast.calls("release");
		List<IdempotencyKey> duringCut = new ArrayList<>();
		long deadline = System.nanoTime() + DEADLINE.toNanos();
		// until the breaker opened, skipped Redis
		// for a while and failed a half-open trial
		while (this.openedAfter < 0 || this.skippedOperations < 20 || !this.transitions.contains("HALF_OPEN->OPEN")) {
			assertThat(System.nanoTime()).as("time left for the breaker to open, skip Redis and fail a trial")
				.isLessThan(deadline);
			IdempotencyKey key = newKey();
			duringCut.add(key);
			request(key);
			assertReplay(beforeCut.get(duringCut.size() % beforeCut.size()));
		}
		assertThat(this.openedAfter).isEqualTo(FAILURE_THRESHOLD);
		assertThat(this.transitions).first().isEqualTo("CLOSED->OPEN");
		// Redis was called only until the breaker opened, then once per half-open trial;
		// besides, each claim that failed while the breaker was closed is released in the
		// background (it may have landed), uncounted
		long trials = this.transitions.stream().filter("OPEN->HALF_OPEN"::equals).count();
		int backgroundReleases = this.fast.calls("release") - fastReleasesBeforeCut;
		assertThat(this.fast.totalCalls() - fastCallsBeforeCut - backgroundReleases).isEqualTo(this.redisFailures.get())
			.isEqualTo(FAILURE_THRESHOLD + trials);
		assertThat(backgroundReleases).isLessThanOrEqualTo(FAILURE_THRESHOLD);
		// Lettuce kept trying to reconnect, and was refused
		assertThat(this.redisProxy.refusedConnections()).isPositive();
		int skippedDuringCut = this.skippedOperations;

		this.redisProxy.restore();
		List<IdempotencyKey> afterRestore = new ArrayList<>();
		while (this.store.getCircuitBreakerState() != CircuitBreakerState.CLOSED) {
			assertThat(System.nanoTime()).as("time left for the breaker to close").isLessThan(deadline);
			IdempotencyKey key = newKey();
			afterRestore.add(key);
			request(key);
		}
		assertThat(this.transitions).last().isEqualTo("HALF_OPEN->CLOSED");
		int failuresWhenClosed = this.redisFailures.get();
		// the fast path is back: completions are written to Redis, replays come from it
		IdempotencyKey fresh = newKey();
		afterRestore.add(fresh);
		request(fresh);
		assertThat(this.directRedisStore.find(fresh)).get()
			.satisfies((record) -> assertThat(record.status()).isEqualTo(IdempotencyStatus.COMPLETED));
		int durableCalls = this.durable.totalCalls();
		int fastCalls = this.fast.totalCalls();
		assertReplay(fresh);
		assertThat(this.durable.totalCalls()).isEqualTo(durableCalls);
		assertThat(this.fast.totalCalls()).isEqualTo(fastCalls + 1);
		// a key completed during the outage is
		// replayed from PostgreSQL and re-warms Redis
		IdempotencyKey completedDuringCut = duringCut.get(duringCut.size() - 1);
		assertThat(redisHolds(completedDuringCut)).isFalse();
		assertReplay(completedDuringCut);
		assertThat(redisHolds(completedDuringCut)).isTrue();
		assertThat(this.redisFailures).hasValue(failuresWhenClosed);
		assertThat(this.store.getCircuitBreakerState()).isEqualTo(CircuitBreakerState.CLOSED);

		// no key can be acquired again:
		// each is completed in PostgreSQL and replays its own response
		List<IdempotencyKey> all = new ArrayList<>(beforeCut);
		all.addAll(duringCut);
		all.addAll(afterRestore);
		JdbcIdempotencyStore postgresql = new JdbcIdempotencyStore(this.directDataSource);
		for (IdempotencyKey key : all) {
			assertThat(postgresql.find(key)).get()
				.satisfies((record) -> assertThat(record.status()).isEqualTo(IdempotencyStatus.COMPLETED));
			assertReplay(key);
		}
		System.out.printf(
				"Redis cut: %d keys before, %d during (%d operations skipped Redis, %d Redis failures), "
						+ "%d after restore; breaker transitions %s%n",
				beforeCut.size(), duringCut.size(), skippedDuringCut, this.redisFailures.get(), afterRestore.size(),
				this.transitions);
	}

	// one request: acquire (must be granted), complete (must be stored), replay
	private void request(IdempotencyKey key) {
		OwnerToken token = OwnerToken.generate();
		AcquireResult result = watched(() -> this.store.acquire(key, FINGERPRINT, token, LEASE, TTL));
		assertThat(result).isEqualTo(new AcquireResult.Acquired(token));
		assertThat(watched(() -> this.store.complete(key, token, response(key), TTL))).isTrue();
		assertReplay(key);
	}

	private void assertReplay(IdempotencyKey key) {
		assertThat(watched(() -> this.store.acquire(key, FINGERPRINT, OwnerToken.generate(), LEASE, TTL)))
			.isInstanceOfSatisfying(AcquireResult.Replay.class,
					(replay) -> assertThat(replay.response()).isEqualTo(response(key)));
	}

	/**
	 * Run one store operation and check that, if it skipped Redis (the breaker was open),
	 * it made no Redis call at all. Also checks that the breaker is open right after the
	 * operation whose Redis failure reached the threshold.
	 */
	private <T> T watched(Supplier<T> operation) {
		int skippedBefore = this.skipped.get();
		int fastCallsBefore = this.fast.totalCalls();
		int failuresBefore = this.redisFailures.get();
		T result = operation.get();
		if (this.skipped.get() > skippedBefore) {
			assertThat(this.fast.totalCalls()).as("Redis calls of an operation that skipped Redis")
				.isEqualTo(fastCallsBefore);
			this.skippedOperations++;
		}
		if (failuresBefore < FAILURE_THRESHOLD && this.redisFailures.get() >= FAILURE_THRESHOLD) {
			// no call in between: the breaker cannot have moved on to a trial yet
			assertThat(this.store.getCircuitBreakerState()).isEqualTo(CircuitBreakerState.OPEN);
			this.openedAfter = this.redisFailures.get();
		}
		return result;
	}

	private boolean redisHolds(IdempotencyKey key) {
		return this.directRedisStore.find(key).isPresent();
	}

	private HikariDataSource proxiedDataSource() throws IOException {
		TestServers.Postgres postgres = TestServers.postgres();
		Properties url = Driver.parseURL(postgres.jdbcUrl(), new Properties());
		if (url == null) {
			throw new IllegalStateException("Not a PostgreSQL JDBC URL: " + postgres.jdbcUrl());
		}
		String host = PGProperty.PG_HOST.getOrDefault(url).split(",")[0];
		int port = Integer.parseInt(PGProperty.PG_PORT.getOrDefault(url).split(",")[0]);
		this.postgresProxy = TcpProxy.start(host, port);
		PGSimpleDataSource target = new PGSimpleDataSource();
		target.setServerNames(new String[] { this.postgresProxy.host() });
		target.setPortNumbers(new int[] { this.postgresProxy.port() });
		target.setDatabaseName(PGProperty.PG_DBNAME.getOrDefault(url));
		target.setUser(postgres.username());
		target.setPassword(postgres.password());
		target.setCurrentSchema(this.schema);
		target.setConnectTimeout(2);
		target.setSocketTimeout(5);
		HikariConfig config = new HikariConfig();
		config.setDataSource(target);
		config.setPoolName("tiered-fault-" + this.schema);
		config.setMaximumPoolSize(4);
		config.setMinimumIdle(1);
		// fail fast while PostgreSQL is cut (the default waits 30 s for a connection),
		// but
		// leave a busy machine time to open a connection once it is back
		config.setConnectionTimeout(3000);
		return new HikariDataSource(config);
	}

	private static StoredResponse response(IdempotencyKey key) {
		return new StoredResponse(201, List.of(new HttpHeader("Content-Type", "text/plain")),
				("done " + key.key()).getBytes(StandardCharsets.UTF_8));
	}

	private static IdempotencyKey newKey() {
		return TieredIdempotencyStoreTests.newKey();
	}

	private void deleteRedisKeys() {
		try (RedisConnection connection = this.directRedis.getConnection()) {
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

	private static void closeAll(@Nullable AutoCloseable... closeables) {
		for (AutoCloseable closeable : closeables) {
			if (closeable != null) {
				try {
					closeable.close();
				}
				catch (Exception ex) {
					throw new IllegalStateException(ex);
				}
			}
		}
	}

}
