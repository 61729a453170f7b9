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
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.IdempotencyStoreException;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencySchemaInitializer;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spring.store.redis.RedisClusterServers;
import dev.idempotency.spring.store.redis.RedisIdempotencyStore;
import dev.idempotency.test.servers.TestServers;
import io.lettuce.core.ClientListArgs;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The tiered store (a real Redis Cluster in front of a real PostgreSQL) while the master
 * of a running request's key is replaced by its replica: with {@code CLUSTER FAILOVER},
 * with {@code CLUSTER FAILOVER TAKEOVER}, and after the master crashed before its replica
 * received the claim. The handler never runs twice, retries are refused as in progress
 * while it runs and replay its response once it completed. The last test shows what the
 * Redis store alone risks there: the lost claim lets a retry run the handler again.
 *
 * @author Idempotency contributors
 */
class TieredClusterFailoverIT {

	private static final String SCHEMA = "idem_tiered_cluster_" + Long.toHexString(System.nanoTime());

	private static final String PREFIX = "idem-tiered-cluster-" + UUID.randomUUID() + ":";

	private static final Duration LEASE = Duration.ofMinutes(5);

	private static final Duration TTL = Duration.ofMinutes(10);

	private static final int RETRIES = 8;

	private static RedisClusterServers cluster;

	private static LettuceConnectionFactory redis;

	private static HikariDataSource dataSource;

	@BeforeAll
	static void start() {
		cluster = RedisClusterServers.start();
		// short: a command sent to a crashed master fails soon, and the store falls back
		redis = cluster.connectionFactory(Duration.ofSeconds(2));
		dataSource = TestServers.postgres().dataSource(SCHEMA);
		new JdbcIdempotencySchemaInitializer(dataSource).initialize();
	}

	@AfterAll
	static void stop() {
		try {
			if (dataSource != null) {
				TestServers.Postgres.dropSchema(dataSource, SCHEMA);
				dataSource.close();
			}
			if (redis != null) {
				redis.destroy();
			}
		}
		finally {
			if (cluster != null) {
				cluster.close();
			}
		}
	}

	@Test
	void failoverUnderARunningRequestRunsItOnce() throws Exception {
		RedisIdempotencyStore fast = redisStore();
		TieredIdempotencyStore store = tiered(fast);
		IdempotencyKey key = keyOnMaster(fast, cluster.ports().get(0));
		int slot = slot(fast, key);
		runsOnceAcross(store, key, () -> {
			int replica = cluster.replicaOf(cluster.masterOf(slot));
			failOver(replica, slot, false);
		});
	}

	@Test
	void takeoverUnderARunningRequestRunsItOnce() throws Exception {
		RedisIdempotencyStore fast = redisStore();
		TieredIdempotencyStore store = tiered(fast);
		IdempotencyKey key = keyOnMaster(fast, cluster.ports().get(1));
		int slot = slot(fast, key);
		runsOnceAcross(store, key, () -> {
			int replica = cluster.replicaOf(cluster.masterOf(slot));
			failOver(replica, slot, true);
		});
	}

	@Test
	void crashedMasterLosesAnUnreplicatedClaimWhichOnlyTheTieredStoreSurvives() throws Exception {
		RedisIdempotencyStore redisOnly = redisStore();
		TieredIdempotencyStore store = tiered(redisStore());
		int master = cluster.ports().get(2);
		int replica = cluster.replicaOf(master);
		IdempotencyKey tieredKey = keyOnMaster(redisOnly, master);
		IdempotencyKey redisOnlyKey = keyOnMaster(redisOnly, master);
		int slot = slot(redisOnly, tieredKey);
		AtomicInteger redisOnlyExecutions = new AtomicInteger();
		String tieredRedisKey = new String(RedisClusterServers.redisKey(redisOnly, tieredKey),
				StandardCharsets.US_ASCII);
		Runnable replicaStopsReading = () -> {
			// what the master acknowledges from now on stays in its buffers: the replica
			// stopped reading and its socket buffers fill up first
			cluster.pause(replica);
			String hashTag = tieredRedisKey.substring(tieredRedisKey.indexOf('{'));
			String filler = "x".repeat(1024 * 1024);
			cluster.onNode(master, (RedisCommands<String, String> commands) -> {
				for (int i = 0; i < 24; i++) {
					commands.set(PREFIX + "filler-" + i + hashTag, filler);
				}
				return null;
			});
		};
		runsOnceAcross(store, tieredKey, replicaStopsReading, () -> {
			assertThat(redisOnly.acquire(redisOnlyKey, fingerprint(), OwnerToken.generate(), LEASE, TTL))
				.isInstanceOf(AcquireResult.Acquired.class);
			redisOnlyExecutions.incrementAndGet();
			assertThat(replicaOutputBuffer(master)).as("bytes the replica has not read").isPositive();
			// the master crashes with both claims unreplicated; the replica takes over
			cluster.kill(master);
			cluster.resume(replica);
			failOver(replica, slot, true);
			assertThat(cluster.onNode(replica,
					(RedisCommands<String, String> commands) -> commands.exists(tieredRedisKey)))
				.as("the tiered store's Redis claim after the crash")
				.isZero();
			// the Redis store alone: the claim is gone, a retry runs the handler again
			AcquireResult retry = answer(
					() -> redisOnly.acquire(redisOnlyKey, fingerprint(), OwnerToken.generate(), LEASE, TTL));
			if (retry instanceof AcquireResult.Acquired) {
				redisOnlyExecutions.incrementAndGet();
			}
		});
		assertThat(redisOnlyExecutions).as("runs of the handler with the Redis store alone").hasValue(2);
	}

	/**
	 * Claim a key, fail its master over while the claim is held, then retry the key
	 * concurrently before and after its completion.
	 * @param store the tiered store
	 * @param key the key
	 * @param failover what replaces the key's master
	 */
	private static void runsOnceAcross(IdempotencyStore store, IdempotencyKey key, Runnable failover) throws Exception {
		runsOnceAcross(store, key, () -> {
		}, failover);
	}

	/**
	 * Prepare the fault, then claim a key, fail its master over while the claim is held,
	 * then retry the key concurrently before and after its completion.
	 * @param store the tiered store
	 * @param key the key
	 * @param beforeClaim what prepares the fault
	 * @param failover what replaces the key's master
	 */
	private static void runsOnceAcross(IdempotencyStore store, IdempotencyKey key, Runnable beforeClaim,
			Runnable failover) throws Exception {
		beforeClaim.run();
		AtomicInteger executions = new AtomicInteger();
		OwnerToken owner = OwnerToken.generate();
		assertThat(store.acquire(key, fingerprint(), owner, LEASE, TTL)).isEqualTo(new AcquireResult.Acquired(owner));
		executions.incrementAndGet();
		failover.run();
		StoredResponse response = new StoredResponse(201, List.of(new HttpHeader("Content-Type", "application/json")),
				("{\"payment\":\"" + UUID.randomUUID() + "\"}").getBytes(StandardCharsets.UTF_8));
		// while the handler runs: every retry is refused as in progress
		for (AcquireResult result : retryConcurrently(store, key, executions)) {
			assertThat(result).isInstanceOf(AcquireResult.InProgress.class);
		}
		// retries racing the completion: in progress, or the one response
		AtomicReference<Boolean> completed = new AtomicReference<>();
		CountDownLatch racing = new CountDownLatch(1);
		Thread handler = new Thread(() -> {
			try {
				racing.await();
				completed.set(answer(() -> store.complete(key, owner, response, TTL)));
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		});
		handler.start();
		racing.countDown();
		List<AcquireResult> racingResults = retryConcurrently(store, key, executions);
		handler.join(TimeUnit.MINUTES.toMillis(2));
		assertThat(completed.get()).isTrue();
		for (AcquireResult result : racingResults) {
			if (!(result instanceof AcquireResult.InProgress)) {
				assertThat(result).isInstanceOfSatisfying(AcquireResult.Replay.class,
						(replay) -> assertThat(replay.response()).isEqualTo(response));
			}
		}
		// after it completed: the retries replay the same bytes. Where Redis lost the
		// claim, it has no copy of the record yet: the first retries race to copy it
		// back from PostgreSQL, and those that meet the winner's claim are told to wait
		for (AcquireResult result : retryConcurrently(store, key, executions)) {
			if (!(result instanceof AcquireResult.InProgress)) {
				assertThat(result).isInstanceOfSatisfying(AcquireResult.Replay.class,
						(replay) -> assertThat(replay.response().body()).isEqualTo(response.body()));
			}
		}
		// once copied, every retry replays
		for (AcquireResult result : retryConcurrently(store, key, executions)) {
			assertThat(result).isInstanceOfSatisfying(AcquireResult.Replay.class,
					(replay) -> assertThat(replay.response().body()).isEqualTo(response.body()));
		}
		assertThat(executions).as("runs of the handler").hasValue(1);
	}

	private static List<AcquireResult> retryConcurrently(IdempotencyStore store, IdempotencyKey key,
			AtomicInteger executions) throws Exception {
		ExecutorService executor = Executors.newFixedThreadPool(RETRIES);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<AcquireResult>> futures = new ArrayList<>();
			for (int i = 0; i < RETRIES; i++) {
				futures.add(executor.submit(() -> {
					start.await();
					AcquireResult result = store.acquire(key, fingerprint(), OwnerToken.generate(), LEASE, TTL);
					if (result instanceof AcquireResult.Acquired) {
						executions.incrementAndGet();
					}
					return result;
				}));
			}
			start.countDown();
			List<AcquireResult> results = new ArrayList<>();
			for (Future<AcquireResult> future : futures) {
				results.add(future.get(2, TimeUnit.MINUTES));
			}
			return results;
		}
		finally {
			executor.shutdownNow();
		}
	}

	// the store's answer once the client reached the new master (until then it fails)
	private static <T> T answer(Supplier<T> call) {
		AtomicReference<T> answer = new AtomicReference<>();
		RedisClusterServers.await("an answer of the store", () -> {
			try {
				answer.set(call.get());
				return true;
			}
			catch (IdempotencyStoreException ex) {
				return false;
			}
		});
		return answer.get();
	}

	// A manual failover is acknowledged at once and may then give up (a graceful one
	// aborts when the replica has not caught up within Redis' manual-failover time-out,
	// which a busy machine can exceed): ask again until the replica serves the slot.
	private static void failOver(int replica, int slot, boolean takeover) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
		while (true) {
			cluster.onNode(replica,
					(RedisCommands<String, String> commands) -> commands.clusterFailover(false, takeover));
			long attemptEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
			while (System.nanoTime() < attemptEnd) {
				if (servesSlot(replica, slot)) {
					awaitMaster(slot, replica);
					return;
				}
				sleep(100);
			}
			assertThat(System.nanoTime()).as("node %d to serve slot %d after a failover", replica, slot)
				.isLessThan(deadline);
		}
	}

	private static boolean servesSlot(int port, int slot) {
		try {
			return cluster.masterOf(slot) == port;
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static void awaitMaster(int slot, int port) {
		RedisClusterServers.await("node " + port + " to serve slot " + slot, () -> cluster.masterOf(slot) == port);
		cluster.awaitHealthy();
	}

	private static long replicaOutputBuffer(int master) {
		String clients = cluster.onNode(master,
				(RedisCommands<String, String> commands) -> commands.clientList(ClientListArgs.Builder.typeReplica()));
		Matcher omem = Pattern.compile(" omem=(\\d+)").matcher(clients);
		return omem.find() ? Long.parseLong(omem.group(1)) : 0;
	}

	private static RedisIdempotencyStore redisStore() {
		RedisIdempotencyStore store = new RedisIdempotencyStore(redis);
		store.setKeyPrefix(PREFIX);
		return store;
	}

	private static TieredIdempotencyStore tiered(RedisIdempotencyStore fast) {
		return new TieredIdempotencyStore(fast, new JdbcIdempotencyStore(dataSource));
	}

	private static IdempotencyKey keyOnMaster(RedisIdempotencyStore store, int master) {
		while (true) {
			IdempotencyKey key = new IdempotencyKey("tenant", UUID.randomUUID().toString());
			if (cluster.masterOf(slot(store, key)) == master) {
				return key;
			}
		}
	}

	private static int slot(RedisIdempotencyStore store, IdempotencyKey key) {
		return SlotHash.getSlot(RedisClusterServers.redisKey(store, key));
	}

	private static RequestFingerprint fingerprint() {
		return RequestFingerprint.of(new byte[RequestFingerprint.LENGTH]);
	}

}
