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

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyStatus;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.test.AbstractIdempotencyStoreTests;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RedisIdempotencyStore} passes the store contract on a real Redis Cluster of
 * three masters and three replicas ({@link RedisClusterServers}), through a Lettuce
 * {@link LettuceConnectionFactory} on a {@code RedisClusterConfiguration}, and runs its
 * scripts on a node whose script cache never saw them.
 *
 * @author Idempotency contributors
 */
@Tag("contract")
class RedisIdempotencyStoreClusterIT extends AbstractIdempotencyStoreTests {

	private static final String PREFIX = RedisTestServer.uniquePrefix("cluster");

	private static RedisClusterServers cluster;

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void startCluster() {
		cluster = RedisClusterServers.start();
		// waits as long as the standalone kit's client (RedisTestServer): the race's
		// answers are what is tested, not how fast a busy machine gives them
		connectionFactory = cluster.connectionFactory(Duration.ofSeconds(60));
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

	@Override
	protected IdempotencyStore createStore() {
		RedisIdempotencyStore store = new RedisIdempotencyStore(connectionFactory);
		store.setKeyPrefix(PREFIX);
		return store;
	}

	@Override
	protected int raceKeys() {
		// three masters serve the race as one server does: fewer keys keep the test short
		return 250;
	}

	@Test
	void keysOfOneStoreSpreadOverEveryMaster() {
		RedisIdempotencyStore store = (RedisIdempotencyStore) store();
		Map<Integer, IdempotencyKey> keys = keysOnEveryMaster(store);
		assertThat(keys).hasSize(3);
		for (IdempotencyKey key : keys.values()) {
			assertThat(store.acquire(key, fingerprint("a"), OwnerToken.generate(), LONG_LEASE, LONG_TTL))
				.isInstanceOf(AcquireResult.Acquired.class);
		}
		// each record is on the master of its slot, as one key of that node
		keys.forEach((port,
				key) -> assertThat(cluster.onNode(port,
						(RedisCommands<String, String> redis) -> redis.exists(new String(store.redisKey(key)))))
					.isOne());
	}

	@Test
	void scriptsRunOnNodesWhoseScriptCacheIsEmpty() {
		RedisIdempotencyStore store = (RedisIdempotencyStore) store();
		store.setClaimWithScript(true);
		for (IdempotencyKey key : keysOnEveryMaster(store).values()) {
			// every node forgets the scripts: EVALSHA answers NOSCRIPT on the key's node,
			// and the script runs there by its text
			for (int port : cluster.ports()) {
				cluster.onNode(port, RedisCommands::scriptFlush);
			}
			OwnerToken token = OwnerToken.generate();
			RequestFingerprint fingerprint = fingerprint("b");
			assertThat(store.acquire(key, fingerprint, token, LONG_LEASE, LONG_TTL))
				.isEqualTo(new AcquireResult.Acquired(token));
			for (int port : cluster.ports()) {
				cluster.onNode(port, RedisCommands::scriptFlush);
			}
			assertThat(store.extend(key, token, Duration.ofMinutes(1))).isTrue();
			for (int port : cluster.ports()) {
				cluster.onNode(port, RedisCommands::scriptFlush);
			}
			StoredResponse response = response(201, "{\"slot\":" + SlotHash.getSlot(store.redisKey(key)) + "}");
			assertThat(store.complete(key, token, response, LONG_TTL)).isTrue();
			for (int port : cluster.ports()) {
				cluster.onNode(port, RedisCommands::scriptFlush);
			}
			assertThat(store.find(key)).get().satisfies((record) -> {
				assertThat(record.status()).isEqualTo(IdempotencyStatus.COMPLETED);
				assertThat(record.response()).isEqualTo(response);
			});
			assertThat(store.evict(key)).isTrue();
		}
	}

	/**
	 * Return one new key per master, by the port of the master that serves its slot.
	 * @param store the store that names the Redis keys
	 * @return the keys
	 */
	static Map<Integer, IdempotencyKey> keysOnEveryMaster(RedisIdempotencyStore store) {
		Map<Integer, IdempotencyKey> keys = new HashMap<>();
		List<Integer> masters = cluster.ports().subList(0, 3);
		while (keys.size() < masters.size()) {
			IdempotencyKey key = newKey();
			keys.putIfAbsent(cluster.masterOf(SlotHash.getSlot(store.redisKey(key))), key);
		}
		return keys;
	}

}
