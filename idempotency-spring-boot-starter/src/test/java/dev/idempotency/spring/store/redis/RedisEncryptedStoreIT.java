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

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.spring.store.AbstractEncryptedStoreIT;
import org.junit.jupiter.api.AfterAll;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStringCommands.SetOption;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.types.Expiration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Encryption at rest over {@link RedisIdempotencyStore} on a real Redis server: the value
 * under the record's key, read with {@code GET}, holds no clear text.
 *
 * @author Idempotency contributors
 */
class RedisEncryptedStoreIT extends AbstractEncryptedStoreIT {

	private static final String PREFIX = RedisTestServer.uniquePrefix("encrypted");

	private final LettuceConnectionFactory connectionFactory = RedisTestServer.connectionFactory();

	private final RedisIdempotencyStore store = createStore();

	private RedisIdempotencyStore createStore() {
		RedisIdempotencyStore store = new RedisIdempotencyStore(this.connectionFactory);
		store.setKeyPrefix(PREFIX);
		return store;
	}

	@AfterAll
	static void deleteKeys() {
		RedisTestServer.deleteKeys(RedisTestServer.connectionFactory(), PREFIX);
	}

	@Override
	protected IdempotencyStore rawStore() {
		return this.store;
	}

	@Override
	protected byte[] rawValue(IdempotencyKey key) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			byte[] value = connection.stringCommands().get(this.store.redisKey(key));
			assertThat(value).isNotNull();
			return value;
		}
	}

	@Override
	protected void replaceRawValue(IdempotencyKey key, byte[] value) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			connection.stringCommands().set(this.store.redisKey(key), value, Expiration.keepTtl(), SetOption.upsert());
		}
	}

}
