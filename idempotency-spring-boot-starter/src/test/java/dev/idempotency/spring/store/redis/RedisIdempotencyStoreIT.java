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
import org.junit.jupiter.api.Tag;

/**
 * {@link RedisIdempotencyStore} passes the store contract on a real Redis server.
 *
 * @author Idempotency contributors
 */
@Tag("contract")
class RedisIdempotencyStoreIT extends AbstractIdempotencyStoreTests {

	private static final String PREFIX = RedisTestServer.uniquePrefix("contract");

	@Override
	protected IdempotencyStore createStore() {
		RedisIdempotencyStore store = new RedisIdempotencyStore(RedisTestServer.connectionFactory());
		store.setKeyPrefix(PREFIX);
		return store;
	}

	@AfterAll
	static void deleteKeys() {
		RedisTestServer.deleteKeys(RedisTestServer.connectionFactory(), PREFIX);
	}

}
