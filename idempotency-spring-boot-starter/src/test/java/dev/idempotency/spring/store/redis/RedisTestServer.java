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
import java.util.List;
import java.util.UUID;

import dev.idempotency.test.servers.TestServers;
import io.lettuce.core.RedisURI;
import redis.clients.jedis.JedisPoolConfig;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;

/**
 * The Redis server of the integration tests ({@link TestServers#redis()}), shared by the
 * test classes of this package through one connection factory.
 *
 * @author Idempotency contributors
 */
final class RedisTestServer {

	private static LettuceConnectionFactory connectionFactory;

	private RedisTestServer() {
	}

	static RedisURI uri() {
		TestServers.Redis redis = TestServers.redis();
		return RedisURI.create(redis.host(), redis.port());
	}

	/**
	 * Return the started Lettuce connection factory that the classes of this package
	 * share. It waits 60 s for an answer, as Spring Data Redis does by default: the store
	 * contract kit races 64 threads over it, which on a machine whose cores are all taken
	 * (two CI lanes and {@code stress-ng} beside them) took longer than the 10 s of
	 * {@link TestServers.Redis#connectionFactory()}; what the kit tests is what the store
	 * answers, not how fast. The tests of time-outs make clients of their own.
	 * @return the shared connection factory
	 */
	static synchronized LettuceConnectionFactory connectionFactory() {
		if (connectionFactory == null) {
			connectionFactory = TestServers.redis().connectionFactory(Duration.ofSeconds(60));
		}
		return connectionFactory;
	}

	/**
	 * Create a started, pooled Jedis connection factory to the test server.
	 * @param pool the pool's configuration
	 * @return the connection factory, to destroy after use
	 */
	static JedisConnectionFactory jedisConnectionFactory(JedisPoolConfig pool) {
		TestServers.Redis redis = TestServers.redis();
		// Jedis waits 2 s for an answer by default, which the kit's 64 racing threads can
		// exceed on a busy machine: as long as Lettuce waits in Spring Data Redis (60 s)
		JedisConnectionFactory factory = new JedisConnectionFactory(
				new RedisStandaloneConfiguration(redis.host(), redis.port()),
				JedisClientConfiguration.builder()
					.connectTimeout(Duration.ofSeconds(60))
					.readTimeout(Duration.ofSeconds(60))
					.usePooling()
					.poolConfig(pool)
					.build());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	/**
	 * Return a key prefix no other test uses.
	 * @param name a readable part
	 * @return the prefix
	 */
	static String uniquePrefix(String name) {
		return "idempotency-test:" + name + ":" + UUID.randomUUID() + ":";
	}

	/**
	 * Delete every key with the given prefix (test clean-up only: it scans).
	 * @param factory the connection factory
	 * @param prefix a prefix from {@link #uniquePrefix}
	 */
	static void deleteKeys(RedisConnectionFactory factory, String prefix) {
		try (RedisConnection connection = factory.getConnection()) {
			List<byte[]> keys = new ArrayList<>();
			ScanOptions options = ScanOptions.scanOptions().match(prefix + "*").count(1000).build();
			try (Cursor<byte[]> cursor = connection.keyCommands().scan(options)) {
				cursor.forEachRemaining(keys::add);
			}
			if (!keys.isEmpty()) {
				connection.keyCommands().del(keys.toArray(new byte[0][]));
			}
		}
	}

	static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

}
