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

import java.time.Duration;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.spring.observation.DefaultIdempotencyObservationConvention;
import dev.idempotency.test.servers.TestServers;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The {@code idempotency} health indicator over HTTP during a PostgreSQL outage under the
 * tiered store: the store is {@code DOWN} and requests fail closed (and are counted).
 *
 * @author Idempotency contributors
 */
@Import(IdempotencyHealthDownIT.Servers.class)
@TestPropertySource(properties = { "idempotency.jdbc.initialize-schema=never", "idempotency.jdbc.cleanup.enabled=false",
		"management.health.db.enabled=false" })
class IdempotencyHealthDownIT extends AbstractOpsIT {

	@Autowired
	MeterRegistry registry;

	@Test
	void unreachableDurableTierIsDown() throws Exception {
		var response = get("/actuator/health");
		assertThat(response.statusCode()).isEqualTo(503);
		JsonNode health = parse(response).at("/components/idempotency");
		assertThat(health.get("status").asString()).isEqualTo("DOWN");
		assertThat(health.at("/details/store").asString()).isEqualTo("tiered");
		assertThat(post("/ops/pay", newKey(), "a").statusCode()).isEqualTo(503);
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(this.registry.get(DefaultIdempotencyObservationConvention.DEFAULT_NAME)
				.tags("outcome", "store_unavailable", "policy", "metered")
				.timer()
				.count()).isEqualTo(1));
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class Servers {

		@Bean(destroyMethod = "destroy")
		LettuceConnectionFactory redisConnectionFactory() {
			return TestServers.redis().connectionFactory();
		}

		@Bean(destroyMethod = "close")
		HikariDataSource dataSource() {
			HikariConfig config = new HikariConfig();
			config.setJdbcUrl("jdbc:postgresql://127.0.0.1:" + AbstractOpsIT.closedPort() + "/test");
			config.setUsername("postgres");
			config.setConnectionTimeout(250);
			config.setInitializationFailTimeout(-1);
			return new HikariDataSource(config);
		}

	}

}
