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

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP contract over the Redis store on a real Redis server.
 *
 * @author Idempotency contributors
 */
@Import(RedisHttpContractIT.RedisServer.class)
@TestPropertySource(properties = { "idempotency.store.type=redis", "idempotency.redis.key-prefix=it-http-redis:",
		"spring.data.redis.repositories.enabled=false" })
class RedisHttpContractIT extends AbstractHttpContractIT {

	@Test
	void usesTheRedisStore() {
		assertThat(outage().delegate()).isInstanceOf(RedisIdempotencyStore.class);
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class RedisServer {

		@Bean(destroyMethod = "destroy")
		LettuceConnectionFactory redisConnectionFactory() {
			return TestServers.redis().connectionFactory();
		}

	}

}
