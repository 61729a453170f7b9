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

import redis.clients.jedis.JedisPoolConfig;

import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * The round-trip budget of the Redis store on Jedis: the same single command per
 * operation as on Lettuce, the claim a plain {@code SET NX GET} included. The pool holds
 * one connection, so that the monitor sees every command on it.
 *
 * @author Idempotency contributors
 */
class RedisIdempotencyStoreJedisRoundTripIT extends RedisIdempotencyStoreRoundTripIT {

	@Override
	protected RedisConnectionFactory createConnectionFactory() {
		JedisPoolConfig pool = new JedisPoolConfig();
		pool.setMaxTotal(1);
		// no PING of idle connections in the background: it would count as a command
		pool.setTestWhileIdle(false);
		return RedisTestServer.jedisConnectionFactory(pool);
	}

}
