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

import dev.idempotency.spring.store.redis.RedisClusterServers;
import dev.idempotency.spring.store.redis.RedisIdempotencyStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP contract over the Redis store on a real Redis Cluster of three masters and
 * three replicas ({@link RedisClusterServers}), connected by Spring Boot's own
 * auto-configuration from {@code spring.data.redis.cluster.nodes}.
 *
 * @author Idempotency contributors
 */
@DirtiesContext
@TestPropertySource(properties = {
		// Spring Boot's Redis auto-configuration on: only the DataSource stays out
		"spring.autoconfigure.exclude=org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration,"
				+ "org.springframework.boot.flyway.autoconfigure.FlywayAutoConfiguration",
		"idempotency.store.type=redis", "idempotency.redis.key-prefix=it-http-redis-cluster:",
		"spring.data.redis.repositories.enabled=false" })
class RedisClusterHttpContractIT extends AbstractHttpContractIT {

	private static RedisClusterServers cluster;

	@Autowired
	RedisConnectionFactory connectionFactory;

	@DynamicPropertySource
	static void clusterNodes(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.cluster.nodes", () -> cluster().nodes());
	}

	private static synchronized RedisClusterServers cluster() {
		if (cluster == null) {
			cluster = RedisClusterServers.start();
		}
		return cluster;
	}

	@AfterAll
	static synchronized void stopCluster() {
		if (cluster != null) {
			cluster.close();
			cluster = null;
		}
	}

	@Test
	void usesTheRedisStoreOnTheCluster() {
		assertThat(outage().delegate()).isInstanceOf(RedisIdempotencyStore.class);
		assertThat(this.connectionFactory).isInstanceOfSatisfying(LettuceConnectionFactory.class,
				(factory) -> assertThat(factory.isClusterAware()).isTrue());
	}

}
