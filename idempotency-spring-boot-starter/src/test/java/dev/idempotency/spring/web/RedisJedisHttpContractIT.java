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

package dev.idempotency.spring.web;

import dev.idempotency.spring.store.redis.RedisIdempotencyStore;
import dev.idempotency.test.servers.TestServers;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.JedisPoolConfig;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisClientConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP contract with the Redis store on Jedis: a pooled
 * {@link JedisConnectionFactory}, as Spring Boot builds it with
 * {@code spring.data.redis.client-type=jedis}.
 *
 * @author Idempotency contributors
 */
@Import(RedisJedisHttpContractIT.JedisServer.class)
@TestPropertySource(properties = { "idempotency.store.type=redis", "idempotency.redis.key-prefix=it-http-jedis:",
		"spring.data.redis.repositories.enabled=false" })
class RedisJedisHttpContractIT extends AbstractHttpContractIT {

	@Autowired
	private RedisConnectionFactory connectionFactory;

	@Test
	void usesTheRedisStoreOnJedis() {
		assertThat(outage().delegate()).isInstanceOf(RedisIdempotencyStore.class);
		assertThat(this.connectionFactory).isInstanceOf(JedisConnectionFactory.class);
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class JedisServer {

		@Bean(destroyMethod = "destroy")
		JedisConnectionFactory redisConnectionFactory() {
			TestServers.Redis redis = TestServers.redis();
			JedisPoolConfig pool = new JedisPoolConfig();
			pool.setMaxTotal(32);
			return new JedisConnectionFactory(new RedisStandaloneConfiguration(redis.host(), redis.port()),
					JedisClientConfiguration.builder().usePooling().poolConfig(pool).build());
		}

	}

}
