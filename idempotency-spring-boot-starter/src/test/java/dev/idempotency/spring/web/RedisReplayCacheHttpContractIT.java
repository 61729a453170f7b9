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

import java.net.http.HttpResponse;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.engine.IdempotencyEngine;
import dev.idempotency.core.store.ReplayCachingStore;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP contract over the Redis store on a real Redis server with the replay cache on
 * ({@code idempotency.replay-cache.enabled=true}), and what the cache adds: repeated
 * replays answered from memory, evictions through the application seen at once. Its
 * context is closed after the class.
 *
 * @author Idempotency contributors
 */
@DirtiesContext
@TestPropertySource(properties = { "idempotency.replay-cache.enabled=true",
		"idempotency.redis.key-prefix=it-http-redis-replay-cache:" })
@Tag("variant")
class RedisReplayCacheHttpContractIT extends RedisHttpContractIT {

	@Autowired
	IdempotencyEngine engine;

	@Test
	void engineAsksTheCacheInFrontOfTheStore() {
		assertThat(this.engine.store()).isInstanceOfSatisfying(ReplayCachingStore.class,
				(cache) -> assertThat(cache.getDelegate()).isNotInstanceOf(ReplayCachingStore.class));
	}

	// the record is deleted from Redis behind the application's back (as another
	// instance's eviction would be): the copy in memory still answers, for its time to
	// live at most
	@Test
	void repeatedReplaysAreAnsweredFromMemory() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/payments", key, "{}");
		assertThat(first.statusCode()).isEqualTo(201);
		HttpResponse<byte[]> replay = post("/payments", key, "{}");
		assertThat(replay.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(realStore().evict(IdempotencyKey.global(key))).isTrue();
		HttpResponse<byte[]> fromMemory = post("/payments", key, "{}");
		assertThat(fromMemory.statusCode()).isEqualTo(201);
		assertThat(fromMemory.body()).isEqualTo(first.body());
		assertThat(fromMemory.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(this.counter.count("payments", key)).isOne();
	}

	// a hot key's replays survive an outage of the store; nothing else does
	@Test
	void replayInMemoryIsAnsweredWhileTheStoreIsDown() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/payments", key, "{}");
		post("/payments", key, "{}");
		setStoreDown(true);
		HttpResponse<byte[]> replay = post("/payments", key, "{}");
		assertThat(replay.statusCode()).isEqualTo(201);
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(post("/payments", newKey(), "{}").statusCode()).isEqualTo(503);
		assertThat(this.counter.count("payments", key)).isOne();
	}

	// an eviction made through this application reaches the cache too
	@Test
	void evictionThroughTheEngineIsSeenAtOnce() throws Exception {
		String key = newKey();
		post("/payments", key, "{}");
		post("/payments", key, "{}");
		assertThat(this.engine.store().evict(IdempotencyKey.global(key))).isTrue();
		HttpResponse<byte[]> again = post("/payments", key, "{}");
		assertThat(again.statusCode()).isEqualTo(201);
		assertThat(again.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).isEmpty();
		assertThat(this.counter.count("payments", key)).isEqualTo(2);
	}

}
