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

package dev.idempotency.bench.store;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStringCommands.SetOption;
import org.springframework.data.redis.core.types.Expiration;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * Hand-written twins of the JDBC store's round trips, in the SQL of the application's
 * database (PostgreSQL, or MariaDB when {@code spring.datasource.url} names it), on a
 * three-column table ({@code httpbench_raw_record}: the key as text, the stored value,
 * the expiry), every statement committed on its own (auto-commit), as the store's
 * statements are outside the transactional mode:
 * <ul>
 * <li>{@code /raw/store}: the jdbc mode. A new key: the claim insert ({@code INSERT IGNORE}
 * on MariaDB, {@code INSERT ... ON CONFLICT DO NOTHING} on PostgreSQL), the handler, the
 * completion's {@code UPDATE} of the stored value. A key with a row (a replay): the same
 * insert, which inserts nothing, and a read of the stored value ({@code LOCK IN SHARE MODE}
 * on MariaDB, as the store reads a claimed key outside a transaction; a plain read on
 * PostgreSQL), written as the response body.</li>
 * <li>{@code /raw/store/tiered}: the tiered mode's durable claim: the Redis claim
 * ({@code SET NX PX}), the database claim and completion of {@code /raw/store}, then the
 * Redis write of the stored value.</li>
 * </ul>
 * Each parses the same JSON request and answers 201 with the same body as the benchmark's
 * other endpoints.
 *
 * @author Idempotency contributors
 */
@RestController
class StoreTwinController {

	private static final long TTL_MILLIS = 30_000;

	static final byte[] STORED_VALUE = storedValue();

	private final JdbcTemplate jdbc;

	private final RedisConnectionFactory redis;

	private final String claim;

	private final String complete;

	private final String read;

	StoreTwinController(JdbcTemplate jdbc, RedisConnectionFactory redis, Environment environment) {
		this.jdbc = jdbc;
		this.redis = redis;
		if (isMariaDb(environment)) {
			this.claim = "INSERT IGNORE INTO httpbench_raw_record (id, value, expires_at)"
					+ " VALUES (?, x'00', UTC_TIMESTAMP(6) + INTERVAL 30 SECOND)";
			this.complete = "UPDATE httpbench_raw_record SET value = ?, expires_at = UTC_TIMESTAMP(6) + INTERVAL 30 SECOND"
					+ " WHERE id = ?";
			this.read = "SELECT value FROM httpbench_raw_record WHERE id = ? LOCK IN SHARE MODE";
		}
		else {
			this.claim = "INSERT INTO httpbench_raw_record (id, value, expires_at)"
					+ " VALUES (?, '\\x00'::bytea, now() + interval '30 seconds') ON CONFLICT (id) DO NOTHING";
			this.complete = "UPDATE httpbench_raw_record SET value = ?, expires_at = now() + interval '30 seconds'"
					+ " WHERE id = ?";
			this.read = "SELECT value FROM httpbench_raw_record WHERE id = ?";
		}
	}

	static boolean isMariaDb(Environment environment) {
		String url = environment.getProperty("spring.datasource.url", "");
		return url.startsWith("jdbc:mariadb:") || url.startsWith("jdbc:mysql:");
	}

	@PostMapping("/raw/store")
	ResponseEntity<?> rawStore(@RequestBody PaymentRequest request, @RequestHeader("Idempotency-Key") String key) {
		if (this.jdbc.update(this.claim, key) != 1) {
			List<byte[]> found = this.jdbc.query(this.read, (rs, row) -> rs.getBytes(1), key);
			if (found.isEmpty()) {
				throw new IllegalStateException("Key " + key + " has no row");
			}
			return ResponseEntity.status(HttpStatus.CREATED).contentType(MediaType.APPLICATION_JSON).body(found.get(0));
		}
		Receipt receipt = Receipt.of(request);
		this.jdbc.update(this.complete, STORED_VALUE, key);
		return ResponseEntity.status(HttpStatus.CREATED).body(receipt);
	}

	@PostMapping("/raw/store/tiered")
	ResponseEntity<Receipt> rawStoreTiered(@RequestBody PaymentRequest request,
			@RequestHeader("Idempotency-Key") String key) {
		byte[] redisKey = ("httpbench:twin:{" + key + "}").getBytes(StandardCharsets.UTF_8);
		try (RedisConnection connection = this.redis.getConnection()) {
			Boolean claimed = connection.stringCommands()
				.set(redisKey, STORED_VALUE, Expiration.milliseconds(TTL_MILLIS), SetOption.ifAbsent());
			if (!Boolean.TRUE.equals(claimed) || this.jdbc.update(this.claim, key) != 1) {
				throw new IllegalStateException("Key " + key + " was used before");
			}
			Receipt receipt = Receipt.of(request);
			this.jdbc.update(this.complete, STORED_VALUE, key);
			connection.stringCommands()
				.set(redisKey, STORED_VALUE, Expiration.milliseconds(TTL_MILLIS), SetOption.upsert());
			return ResponseEntity.status(HttpStatus.CREATED).body(receipt);
		}
	}

	// the size of a stored 201 response with a small JSON body, as the benchmark's
	// other hand-written baselines store
	private static byte[] storedValue() {
		byte[] value = new byte[200];
		Arrays.fill(value, (byte) 'x');
		byte[] json = "{\"id\":\"pay-1\",\"status\":\"ACCEPTED\"}".getBytes(StandardCharsets.US_ASCII);
		System.arraycopy(json, 0, value, 0, json.length);
		return value;
	}

	/**
	 * Body of every benchmarked request.
	 *
	 * @param account the account charged
	 * @param amount the amount in minor units
	 * @param currency the ISO currency code
	 * @param reference the client's reference
	 */
	record PaymentRequest(String account, long amount, String currency, String reference) {
	}

	/**
	 * Body of every benchmarked response.
	 *
	 * @param id the payment id
	 * @param status the payment status
	 * @param account the account charged
	 * @param amount the amount in minor units
	 * @param currency the ISO currency code
	 * @param reference the client's reference
	 */
	record Receipt(String id, String status, String account, long amount, String currency, String reference) {

		static Receipt of(PaymentRequest request) {
			return new Receipt("pay-1", "ACCEPTED", request.account(), request.amount(), request.currency(),
					request.reference());
		}

	}

}
