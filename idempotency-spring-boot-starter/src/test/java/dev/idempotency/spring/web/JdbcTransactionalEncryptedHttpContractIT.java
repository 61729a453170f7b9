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
import java.nio.charset.StandardCharsets;

import dev.idempotency.core.engine.IdempotencyEngine;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencyStore;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP contract over the PostgreSQL store in the transactional mode with encryption
 * at rest on: the response stored in the request's transaction is ciphertext, and a retry
 * replays the same bytes.
 *
 * @author Idempotency contributors
 */
@TestPropertySource(properties = { "idempotency.encryption.enabled=true",
		"idempotency.encryption.keys.k1=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=" })
@Tag("variant")
class JdbcTransactionalEncryptedHttpContractIT extends JdbcTransactionalHttpContractIT {

	@Autowired
	IdempotencyEngine engine;

	@Test
	void responseIsStoredEncryptedInTheRequestsTransaction() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/payments", key, "{\"amount\":10}");
		assertThat(first.statusCode()).isEqualTo(201);
		HttpResponse<byte[]> replay = post("/payments", key, "{\"amount\":10}");
		assertThat(replay.statusCode()).isEqualTo(201);
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(replay.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		byte[] raw = new JdbcTemplate(this.dataSource).queryForObject(
				"SELECT response FROM " + JdbcIdempotencyStore.DEFAULT_TABLE_NAME + " WHERE idem_key = ?", byte[].class,
				key);
		assertThat(raw).isNotNull();
		assertThat(new String(raw, StandardCharsets.ISO_8859_1)).contains("v1;key=k1").doesNotContain(text(first));
		assertThat(this.counter.count("payments", key)).isOne();
	}

}
