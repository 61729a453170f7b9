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

package dev.idempotency.spring.actuate;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.spring.metrics.IdempotencyMetrics;
import dev.idempotency.test.servers.TestServers;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code idempotency} health indicator over HTTP during a Redis outage under the
 * tiered store: the circuit breaker opens and the store is reported as degraded (still
 * {@code UP}), and the tier metrics count the fallbacks and the transition.
 *
 * @author Idempotency contributors
 */
@Import(IdempotencyHealthIT.Servers.class)
@TestPropertySource(properties = { "idempotency.tiered.failure-threshold=1", "idempotency.tiered.open-duration=1h",
		"management.health.redis.enabled=false" })
class IdempotencyHealthIT extends AbstractOpsIT {

	@Autowired
	MeterRegistry registry;

	@Test
	void openBreakerIsDegradedNotDown() throws Exception {
		assertThat(post("/ops/pay", newKey(), "a").statusCode()).isEqualTo(201);
		assertThat(post("/ops/pay", newKey(), "b").statusCode()).isEqualTo(201);
		var response = get("/actuator/health");
		assertThat(response.statusCode()).isEqualTo(200);
		JsonNode health = parse(response).at("/components/idempotency");
		assertThat(health.get("status").asString()).isEqualTo("UP");
		assertThat(health.at("/details/store").asString()).isEqualTo("tiered");
		assertThat(health.at("/details/circuitBreaker").asString()).isEqualTo("OPEN");
		assertThat(health.at("/details/degraded").asBoolean()).isTrue();
		assertThat(this.registry.get(IdempotencyMetrics.TIER_BREAKER_STATE).tag("state", "open").gauge().value())
			.isEqualTo(1.0);
		assertThat(this.registry.get(IdempotencyMetrics.TIER_BREAKER_TRANSITIONS)
			.tags("from", "closed", "to", "open")
			.counter()
			.count()).isEqualTo(1);
		assertThat(this.registry.get(IdempotencyMetrics.TIER_FALLBACKS)
			.tags("operation", "acquire", "reason", "error")
			.counter()
			.count()).isEqualTo(1);
		assertThat(this.registry.get(IdempotencyMetrics.TIER_FALLBACKS)
			.tags("operation", "acquire", "reason", "breaker_open")
			.counter()
			.count()).isEqualTo(1);
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Servers {

		@Bean(destroyMethod = "destroy")
		LettuceConnectionFactory redisConnectionFactory() {
			LettuceConnectionFactory factory = new LettuceConnectionFactory(
					new RedisStandaloneConfiguration("127.0.0.1", AbstractOpsIT.closedPort()));
			factory.start();
			return factory;
		}

		@Bean(destroyMethod = "")
		HikariDataSource dataSource() {
			return TestServers.postgres().dataSource("it_ops_" + Long.toHexString(System.nanoTime()));
		}

		@Bean
		SchemaDropper schemaDropper(HikariDataSource dataSource) {
			return new SchemaDropper(dataSource);
		}

	}

}
