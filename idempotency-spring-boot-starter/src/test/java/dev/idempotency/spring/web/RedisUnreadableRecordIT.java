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

import java.util.Arrays;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.test.servers.TestServers;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStringCommands.SetOption;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.types.Expiration;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link AbstractUnreadableRecordIT} on a real Redis server.
 *
 * @author Idempotency contributors
 */
@Import(RedisUnreadableRecordIT.RedisServer.class)
@TestPropertySource(
		properties = { "idempotency.store.type=redis", "idempotency.redis.key-prefix=" + RedisUnreadableRecordIT.PREFIX,
				"spring.data.redis.repositories.enabled=false" })
class RedisUnreadableRecordIT extends AbstractUnreadableRecordIT {

	static final String PREFIX = "it-unreadable-redis:";

	// state, times and fingerprint and owner token: the response follows
	private static final int RECORD_HEADER_LENGTH = 97;

	@Autowired
	LettuceConnectionFactory connectionFactory;

	@Override
	void replaceStoredResponse(IdempotencyKey key, byte[] response) {
		byte[] redisKey = TestServers.Redis.recordKey(PREFIX, key.digest());
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			byte[] value = connection.stringCommands().get(redisKey);
			assertThat(value).isNotNull();
			assertThat(value[0]).isEqualTo((byte) 'C');
			byte[] damaged = Arrays.copyOf(value, RECORD_HEADER_LENGTH + response.length);
			System.arraycopy(response, 0, damaged, RECORD_HEADER_LENGTH, response.length);
			assertThat(connection.stringCommands().set(redisKey, damaged, Expiration.keepTtl(), SetOption.upsert()))
				.isTrue();
		}
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class RedisServer {

		@Bean(destroyMethod = "destroy")
		LettuceConnectionFactory redisConnectionFactory() {
			return TestServers.redis().connectionFactory();
		}

	}

}
