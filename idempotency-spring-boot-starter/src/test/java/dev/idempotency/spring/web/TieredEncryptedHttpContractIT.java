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

import java.io.ByteArrayOutputStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;

import javax.sql.DataSource;

import dev.idempotency.spring.store.jdbc.JdbcIdempotencyStore;
import dev.idempotency.test.servers.TestServers;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP contract over the tiered store with encryption at rest on: both tiers hold
 * ciphertext, and a retry after Redis lost the record replays the same bytes from
 * PostgreSQL without running the handler again.
 *
 * @author Idempotency contributors
 */
@TestPropertySource(properties = { "idempotency.encryption.enabled=true",
		"idempotency.encryption.keys.k1=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
		"idempotency.redis.key-prefix=" + TieredEncryptedHttpContractIT.PREFIX })
@Tag("variant")
class TieredEncryptedHttpContractIT extends TieredHttpContractIT {

	static final String PREFIX = "it-http-tiered-encrypted:";

	@Autowired
	DataSource dataSource;

	@Autowired
	LettuceConnectionFactory connectionFactory;

	@Test
	void bothTiersHoldCiphertextAndARetryAfterRedisLostTheRecordReplaysTheSameBytes() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/payments", key, "{\"amount\":10}");
		assertThat(first.statusCode()).isEqualTo(201);
		String body = text(first);
		assertThat(new String(redisValues(), StandardCharsets.ISO_8859_1)).contains("v1;key=k1").doesNotContain(body);
		assertThat(new String(postgresValue(key), StandardCharsets.ISO_8859_1)).contains("v1;key=k1")
			.doesNotContain(body);
		// Redis loses its data: the retry finds the record in PostgreSQL
		assertThat(deleteRedisKeys()).isPositive();
		HttpResponse<byte[]> replay = post("/payments", key, "{\"amount\":10}");
		assertPaymentReplayed(replay, first, key);
	}

	private byte[] postgresValue(String key) {
		byte[] raw = new JdbcTemplate(this.dataSource).queryForObject(
				"SELECT response FROM " + JdbcIdempotencyStore.DEFAULT_TABLE_NAME + " WHERE idem_key = ?", byte[].class,
				key);
		assertThat(raw).isNotNull();
		return raw;
	}

	// the values of every key under this class's prefix, one after the other
	private byte[] redisValues() {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			List<byte[]> keys = TestServers.Redis.keys(connection, PREFIX);
			assertThat(keys).isNotEmpty();
			ByteArrayOutputStream values = new ByteArrayOutputStream();
			for (byte[] redisKey : keys) {
				byte[] value = connection.stringCommands().get(redisKey);
				if (value != null) {
					values.writeBytes(value);
				}
			}
			return values.toByteArray();
		}
	}

	private long deleteRedisKeys() {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			return TestServers.Redis.deleteKeys(connection, PREFIX);
		}
	}

}
