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

package dev.idempotency.spring.store;

import java.time.Duration;
import java.util.Optional;

import javax.sql.DataSource;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.InMemoryIdempotencyStore;
import dev.idempotency.spring.actuate.IdempotencyHealthIndicator;
import dev.idempotency.spring.metrics.MeteredIdempotencyStore;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spring.store.redis.RedisIdempotencyStore;
import dev.idempotency.spring.store.tiered.TieredIdempotencyStore;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.mock;

/**
 * Tests for {@link IdempotencyStore#name()}: the {@code store} tag of the metrics and the
 * {@code store} detail of the health contributor, which dashboards and alerts select on.
 *
 * @author Idempotency contributors
 */
class IdempotencyStoreNameTests {

	@Test
	void inMemoryStoreIsMemory() {
		assertThat(new InMemoryIdempotencyStore().name()).isEqualTo("memory");
	}

	@Test
	void redisStoreIsRedis() {
		assertThat(new RedisIdempotencyStore(mock(RedisConnectionFactory.class)).name()).isEqualTo("redis");
	}

	@Test
	void jdbcStoreIsJdbc() {
		assertThat(new JdbcIdempotencyStore(mock(DataSource.class)).name()).isEqualTo("jdbc");
	}

	@Test
	void tieredStoreIsTiered() {
		TieredIdempotencyStore tiered = new TieredIdempotencyStore(new InMemoryIdempotencyStore(),
				new InMemoryIdempotencyStore());
		try {
			assertThat(tiered.name()).isEqualTo("tiered");
		}
		finally {
			tiered.destroy();
		}
	}

	@Test
	void otherStoreIsItsSimpleClassNameInLowerCase() {
		assertThat(new CustomStore().name()).isEqualTo("customstore");
	}

	@Test
	void subclassOfAStoreOfTheProjectIsNamedAfterItsOwnClass() {
		assertThat(new LoggingMemoryStore().name()).isEqualTo("loggingmemorystore");
		assertThat(new LoggingRedisStore(mock(RedisConnectionFactory.class)).name()).isEqualTo("loggingredisstore");
		assertThat(new LoggingJdbcStore(mock(DataSource.class)).name()).isEqualTo("loggingjdbcstore");
	}

	@Test
	void meteredStoreIsNamedAfterItsOwnClassAndTagsWithTheNameItIsGiven() {
		IdempotencyStore memory = new InMemoryIdempotencyStore();
		MeteredIdempotencyStore metered = new MeteredIdempotencyStore(memory, new SimpleMeterRegistry(),
				MeteredIdempotencyStore.storeName(memory));
		assertThat(metered.name()).isEqualTo("meteredidempotencystore");
		assertThat(MeteredIdempotencyStore.storeName(memory)).isEqualTo("memory");
	}

	@Test
	void healthDetailIsTheStoreName() {
		assertThat(new IdempotencyHealthIndicator(new CustomStore()).health().getDetails()).containsEntry("store",
				"customstore");
		assertThat(new IdempotencyHealthIndicator(new InMemoryIdempotencyStore()).health().getDetails())
			.containsEntry("store", "memory");
	}

	/**
	 * A store of an application's own, which does not answer.
	 */
	static final class CustomStore implements IdempotencyStore {

		@Override
		public AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
				Duration lease, Duration ttl) {
			throw new UnsupportedOperationException();
		}

		@Override
		public boolean complete(IdempotencyKey key, OwnerToken token, StoredResponse response, Duration ttl) {
			throw new UnsupportedOperationException();
		}

		@Override
		public boolean release(IdempotencyKey key, OwnerToken token) {
			throw new UnsupportedOperationException();
		}

		@Override
		public boolean extend(IdempotencyKey key, OwnerToken token, Duration lease) {
			throw new UnsupportedOperationException();
		}

		@Override
		public Optional<IdempotencyRecord> find(IdempotencyKey key) {
			throw new UnsupportedOperationException();
		}

		@Override
		public boolean evict(IdempotencyKey key) {
			throw new UnsupportedOperationException();
		}

	}

	static final class LoggingMemoryStore extends InMemoryIdempotencyStore {

	}

	static final class LoggingRedisStore extends RedisIdempotencyStore {

		LoggingRedisStore(RedisConnectionFactory connectionFactory) {
			super(connectionFactory);
		}

	}

	static final class LoggingJdbcStore extends JdbcIdempotencyStore {

		LoggingJdbcStore(DataSource dataSource) {
			super(dataSource);
		}

	}

}
