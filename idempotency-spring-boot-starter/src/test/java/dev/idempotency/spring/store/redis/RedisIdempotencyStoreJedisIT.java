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

import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.test.AbstractIdempotencyStoreTests;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import redis.clients.jedis.JedisPoolConfig;

import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;

/**
 * The store contract on a real Redis server through Spring Data Redis' other driver,
 * Jedis (a pooled {@link JedisConnectionFactory}, as Spring Boot builds it with
 * {@code spring.data.redis.client-type=jedis}): every command borrows a connection from
 * the pool and waits for its reply on the calling thread.
 *
 * @author Idempotency contributors
 */
@Tag("contract")
class RedisIdempotencyStoreJedisIT extends AbstractIdempotencyStoreTests {

	private static final String PREFIX = RedisTestServer.uniquePrefix("jedis");

	private static JedisConnectionFactory connectionFactory;

	@BeforeAll
	static void connect() {
		JedisPoolConfig pool = new JedisPoolConfig();
		// one connection for each of the race's threads, so that none waits for the pool
		pool.setMaxTotal(64);
		pool.setMaxIdle(64);
		connectionFactory = RedisTestServer.jedisConnectionFactory(pool);
	}

	@AfterAll
	static void deleteKeysAndDisconnect() {
		RedisTestServer.deleteKeys(connectionFactory, PREFIX);
		connectionFactory.destroy();
	}

	@Override
	protected IdempotencyStore createStore() {
		RedisIdempotencyStore store = new RedisIdempotencyStore(connectionFactory);
		store.setKeyPrefix(PREFIX);
		return store;
	}

	@Override
	protected int raceKeys() {
		// a quarter of the kit's keys, each still raced by all its threads: the scripts
		// decide a race whatever the driver, and RedisIdempotencyStoreIT races them with
		// the
		// full number
		return 250;
	}

}
