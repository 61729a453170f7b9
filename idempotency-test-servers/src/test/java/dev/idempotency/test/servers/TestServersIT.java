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

package dev.idempotency.test.servers;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link TestServers}: whichever way the servers were resolved, they answer.
 *
 * @author Idempotency contributors
 */
class TestServersIT {

	@Test
	void redisAnswers() {
		LettuceConnectionFactory factory = TestServers.redis().connectionFactory();
		try (RedisConnection connection = factory.getConnection()) {
			assertThat(connection.ping()).isEqualTo("PONG");
		}
		finally {
			factory.destroy();
		}
	}

	@Test
	void postgresAnswersInItsOwnSchema() throws Exception {
		String schema = "servers_it_" + Long.toHexString(System.nanoTime());
		try (HikariDataSource dataSource = TestServers.postgres().dataSource(schema)) {
			try (Connection connection = dataSource.getConnection();
					Statement statement = connection.createStatement();
					ResultSet result = statement.executeQuery("SELECT current_schema()")) {
				assertThat(result.next()).isTrue();
				assertThat(result.getString(1)).isEqualTo(schema);
			}
			TestServers.Postgres.dropSchema(dataSource, schema);
		}
	}

}
