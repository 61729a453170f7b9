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
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyStatus;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import io.lettuce.core.MigrateArgs;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RedisIdempotencyStore} on a real Redis Cluster while the slot of its keys moves
 * from one master to another ({@code CLUSTER SETSLOT IMPORTING/MIGRATING},
 * {@code MIGRATE}, {@code CLUSTER SETSLOT NODE}) under concurrent traffic: the client is
 * redirected with {@code ASK} during the move and {@code MOVED} after it, and every key
 * still runs exactly once, every replay carries the bytes of that one run and no record
 * is lost.
 *
 * @author Idempotency contributors
 */
class RedisClusterSlotMigrationIT {

	private static final String PREFIX = RedisTestServer.uniquePrefix("cluster-migration");

	private static final int KEYS = 24;

	private static final int THREADS = 8;

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration TTL = Duration.ofMinutes(10);

	private static RedisClusterServers cluster;

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void startCluster() {
		cluster = RedisClusterServers.start();
		connectionFactory = cluster.connectionFactory();
	}

	@AfterAll
	static void stopCluster() {
		try {
			if (connectionFactory != null) {
				connectionFactory.destroy();
			}
		}
		finally {
			if (cluster != null) {
				cluster.close();
			}
		}
	}

	@Test
	void everyKeyRunsOnceWhileItsSlotMigrates() throws Exception {
		RedisIdempotencyStore store = new RedisIdempotencyStore(connectionFactory);
		store.setKeyPrefix(PREFIX);
		List<IdempotencyKey> keys = keysInOneSlot(store);
		int slot = SlotHash.getSlot(store.redisKey(keys.get(0)));
		int source = cluster.masterOf(slot);
		int target = cluster.ports().subList(0, 3).stream().filter((port) -> port != source).findFirst().orElseThrow();
		String sourceId = cluster.id(source);
		String targetId = cluster.id(target);
		Map<IdempotencyKey, AtomicInteger> executions = new ConcurrentHashMap<>();
		Map<IdempotencyKey, StoredResponse> completed = new ConcurrentHashMap<>();
		List<String> failures = Collections.synchronizedList(new ArrayList<>());
		AtomicLong operations = new AtomicLong();
		AtomicLong replays = new AtomicLong();
		AtomicBoolean stop = new AtomicBoolean();
		// a third of the keys run before the move: their records are on the source
		for (IdempotencyKey key : keys.subList(0, KEYS / 3)) {
			run(store, key, executions, completed, replays, failures);
		}
		ExecutorService executor = Executors.newFixedThreadPool(THREADS);
		try {
			List<Future<?>> workers = new ArrayList<>();
			for (int i = 0; i < THREADS; i++) {
				workers.add(executor.submit(() -> {
					List<IdempotencyKey> order = new ArrayList<>(keys);
					while (!stop.get()) {
						Collections.shuffle(order, ThreadLocalRandom.current());
						for (IdempotencyKey key : order) {
							run(store, key, executions, completed, replays, failures);
							operations.incrementAndGet();
						}
					}
				}));
			}
			// the move, in small steps, each once the clients made progress
			cluster.onNode(target, (redis) -> redis.clusterSetSlotImporting(slot, sourceId));
			cluster.onNode(source, (redis) -> redis.clusterSetSlotMigrating(slot, targetId));
			awaitProgress(operations, 2L * KEYS);
			while (true) {
				List<String> batch = cluster.onNode(source, (redis) -> redis.clusterGetKeysInSlot(slot, 2));
				if (batch.isEmpty()) {
					break;
				}
				cluster.onNode(source, (redis) -> redis.migrate("127.0.0.1", target, 0, 10_000,
						MigrateArgs.Builder.<String>keys(batch)));
				awaitProgress(operations, KEYS);
			}
			for (int port : List.of(target, source)) {
				cluster.onNode(port, (redis) -> redis.clusterSetSlotNode(slot, targetId));
			}
			for (int port : cluster.ports().subList(0, 3)) {
				cluster.onNode(port, (redis) -> redis.clusterSetSlotNode(slot, targetId));
			}
			// traffic after the move: clients still sent to the source are MOVED
			awaitProgress(operations, 4L * KEYS);
			RedisClusterServers.await("every key to have run", () -> completed.size() == KEYS || !failures.isEmpty());
			awaitProgress(operations, 2L * KEYS);
			stop.set(true);
			for (Future<?> worker : workers) {
				worker.get(2, TimeUnit.MINUTES);
			}
		}
		finally {
			stop.set(true);
			executor.shutdownNow();
		}
		assertThat(failures).isEmpty();
		assertThat(executions).hasSize(KEYS);
		assertThat(executions.values()).allSatisfy((count) -> assertThat(count.get()).isOne());
		assertThat(replays.get()).isPositive();
		// nothing lost: every record is completed, on the target only
		for (IdempotencyKey key : keys) {
			assertThat(store.find(key)).get().satisfies((record) -> {
				assertThat(record.status()).isEqualTo(IdempotencyStatus.COMPLETED);
				assertThat(record.response()).isEqualTo(completed.get(key));
			});
			String redisKey = new String(store.redisKey(key), StandardCharsets.US_ASCII);
			assertThat(cluster.onNode(target, (RedisCommands<String, String> redis) -> redis.exists(redisKey))).isOne();
		}
		assertThat(cluster.onNode(source, (RedisCommands<String, String> redis) -> redis.clusterCountKeysInSlot(slot)))
			.isZero();
		// the clients were redirected both ways
		String errors = cluster.onNode(source, (RedisCommands<String, String> redis) -> redis.info("errorstats"));
		assertThat(errorCount(errors, "ASK")).as(errors).isPositive();
		assertThat(errorCount(errors, "MOVED")).as(errors).isPositive();
	}

	private static void run(RedisIdempotencyStore store, IdempotencyKey key,
			Map<IdempotencyKey, AtomicInteger> executions, Map<IdempotencyKey, StoredResponse> completed,
			AtomicLong replays, List<String> failures) {
		RequestFingerprint fingerprint = fingerprint(key);
		OwnerToken token = OwnerToken.generate();
		try {
			AcquireResult result = store.acquire(key, fingerprint, token, LEASE, TTL);
			if (result instanceof AcquireResult.Acquired) {
				executions.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
				// the handler takes a moment: its record may move while it runs
				Thread.sleep(ThreadLocalRandom.current().nextInt(20));
				StoredResponse response = new StoredResponse(201,
						List.of(new HttpHeader("Content-Type", "application/json")),
						("{\"run\":\"" + UUID.randomUUID() + "\"}").getBytes(StandardCharsets.UTF_8));
				// known before it is stored: a replay may come at once
				completed.put(key, response);
				if (!store.complete(key, token, response, TTL)) {
					failures.add("complete refused for " + key);
				}
			}
			else if (result instanceof AcquireResult.Replay replay) {
				replays.incrementAndGet();
				StoredResponse expected = completed.get(key);
				if (expected == null || !expected.equals(replay.response())) {
					failures.add("replay of " + key + " differs from its run");
				}
				if (ThreadLocalRandom.current().nextInt(4) == 0) {
					boolean found = store.find(key)
						.filter((record) -> record.status() == IdempotencyStatus.COMPLETED && expected != null
								&& expected.equals(record.response()))
						.isPresent();
					if (!found) {
						failures.add("find of " + key + " did not return its run");
					}
				}
			}
			else if (!(result instanceof AcquireResult.InProgress)) {
				failures.add("unexpected " + result + " for " + key);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		catch (RuntimeException ex) {
			failures.add(key + ": " + ex);
		}
	}

	private static void awaitProgress(AtomicLong operations, long count) {
		long goal = operations.get() + count;
		RedisClusterServers.await(count + " more operations", () -> operations.get() >= goal);
	}

	private static long errorCount(String errorStats, String prefix) {
		Matcher matcher = Pattern.compile("errorstat_" + prefix + ":count=(\\d+)").matcher(errorStats);
		return matcher.find() ? Long.parseLong(matcher.group(1)) : 0;
	}

	private static List<IdempotencyKey> keysInOneSlot(RedisIdempotencyStore store) {
		List<IdempotencyKey> keys = new ArrayList<>();
		IdempotencyKey first = new IdempotencyKey("tenant", UUID.randomUUID().toString());
		int slot = SlotHash.getSlot(store.redisKey(first));
		keys.add(first);
		long counter = 0;
		while (keys.size() < KEYS) {
			IdempotencyKey key = new IdempotencyKey("tenant", "k-" + counter++);
			if (SlotHash.getSlot(store.redisKey(key)) == slot) {
				keys.add(key);
			}
		}
		return keys;
	}

	private static RequestFingerprint fingerprint(IdempotencyKey key) {
		byte[] bytes = new byte[RequestFingerprint.LENGTH];
		byte[] source = key.key().getBytes(StandardCharsets.UTF_8);
		System.arraycopy(source, 0, bytes, 0, Math.min(source.length, bytes.length));
		return RequestFingerprint.of(bytes);
	}

}
