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

package dev.idempotency.sample.bench;

import java.nio.charset.StandardCharsets;
import java.util.List;

import dev.idempotency.spring.Idempotent;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStringCommands.SetOption;
import org.springframework.data.redis.core.types.Expiration;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/**
 * The benchmarked endpoints. Each parses the same JSON request and answers 201 with a
 * small JSON body; they differ only in what happens in between:
 * <ul>
 * <li>{@code /bare}: nothing (1).</li>
 * <li>{@code /raw/redis}: by hand, the two Redis commands a first request needs,
 * {@code SET NX PX} and {@code SET PX} of a 200-byte value (2).</li>
 * <li>{@code /raw/get}: by hand, one Redis {@code GET} of a 200-byte value, returned as
 * the body: what a replay needs at the least (2b).</li>
 * <li>{@code /idem}: {@code @Idempotent}, in the application's store mode (3, 6, 8).</li>
 * <li>{@code /idem/replay}: the same with a policy whose TTL outlasts the benchmark, for
 * the hot replays of one key (4).</li>
 * <li>{@code /raw/tiered}: by hand, the Redis commands of {@code /raw/redis} plus one
 * PostgreSQL primary-key read and one insert (5): the work of the lookup claim.</li>
 * <li>{@code /raw/tiered-durable}: by hand, the work of the durable claim: the Redis
 * claim, a PostgreSQL claim insert ({@code ON CONFLICT DO NOTHING}), the completion's
 * update, each statement committed on its own, then the Redis write (5d).</li>
 * <li>{@code /payment} and {@code /payment/idem}: one PostgreSQL transaction that inserts
 * a payment, without and with {@code @Idempotent} (7).</li>
 * <li>{@code /payment/idem-tx}: the same under the {@code tx} policy, which the tiered
 * and jdbc JVMs may run in the transactional mode (7tx).</li>
 * <li>{@code /raw/tx} and {@code /raw/tx-jdbc}: by hand, the work of (7tx) in the tiered
 * and the jdbc store: the Redis claim (tiered only), then in one transaction a guarded
 * claim insert, the payment's insert and the completion's update, then the Redis write
 * (tiered only) (7txr).</li>
 * </ul>
 *
 * @author Idempotency contributors
 */
@RestController
class BenchController {

	private static final long TTL_MILLIS = 30_000;

	private static final byte[] REPLAY_KEY = "httpbench:raw:replay".getBytes(StandardCharsets.US_ASCII);

	private final RedisConnectionFactory redis;

	private final JdbcTemplate jdbc;

	private final TransactionTemplate transactions;

	BenchController(RedisConnectionFactory redis, JdbcTemplate jdbc, TransactionTemplate transactions) {
		this.redis = redis;
		this.jdbc = jdbc;
		this.transactions = transactions;
		try (RedisConnection connection = redis.getConnection()) {
			connection.stringCommands().set(REPLAY_KEY, HttpBenchApplication.STORED_VALUE);
		}
	}

	@PostMapping("/bare")
	@ResponseStatus(HttpStatus.CREATED)
	Receipt bare(@RequestBody PaymentRequest request) {
		return Receipt.of(request);
	}

	@PostMapping("/raw/redis")
	@ResponseStatus(HttpStatus.CREATED)
	Receipt rawRedis(@RequestBody PaymentRequest request, @RequestHeader("Idempotency-Key") String key) {
		byte[] redisKey = rawKey(key);
		try (RedisConnection connection = this.redis.getConnection()) {
			claim(connection, redisKey);
			Receipt receipt = Receipt.of(request);
			store(connection, redisKey);
			return receipt;
		}
	}

	@PostMapping("/raw/get")
	ResponseEntity<byte[]> rawGet(@RequestBody PaymentRequest request) {
		byte[] value;
		try (RedisConnection connection = this.redis.getConnection()) {
			value = connection.stringCommands().get(REPLAY_KEY);
		}
		return ResponseEntity.status(HttpStatus.CREATED).contentType(MediaType.APPLICATION_JSON).body(value);
	}

	@PostMapping("/raw/tiered")
	@ResponseStatus(HttpStatus.CREATED)
	Receipt rawTiered(@RequestBody PaymentRequest request, @RequestHeader("Idempotency-Key") String key) {
		byte[] redisKey = rawKey(key);
		try (RedisConnection connection = this.redis.getConnection()) {
			claim(connection, redisKey);
			List<byte[]> found = this.jdbc.query("SELECT value FROM httpbench_raw_record WHERE id = ?",
					(rs, row) -> rs.getBytes(1), key);
			if (!found.isEmpty()) {
				throw new IllegalStateException("Key " + key + " was used before");
			}
			Receipt receipt = Receipt.of(request);
			this.jdbc.update("INSERT INTO httpbench_raw_record (id, value, expires_at)"
					+ " VALUES (?, ?, now() + interval '30 seconds')", key, HttpBenchApplication.STORED_VALUE);
			store(connection, redisKey);
			return receipt;
		}
	}

	@PostMapping("/raw/tiered-durable")
	@ResponseStatus(HttpStatus.CREATED)
	Receipt rawTieredDurable(@RequestBody PaymentRequest request, @RequestHeader("Idempotency-Key") String key) {
		byte[] redisKey = rawKey(key);
		try (RedisConnection connection = this.redis.getConnection()) {
			claim(connection, redisKey);
			int claimed = this.jdbc.update(
					"INSERT INTO httpbench_raw_record (id, value, expires_at)"
							+ " VALUES (?, '\\x00'::bytea, now() + interval '30 seconds') ON CONFLICT (id) DO NOTHING",
					key);
			if (claimed != 1) {
				throw new IllegalStateException("Key " + key + " was used before");
			}
			Receipt receipt = Receipt.of(request);
			this.jdbc.update("UPDATE httpbench_raw_record SET value = ?, expires_at = now() + interval '30 seconds'"
					+ " WHERE id = ?", HttpBenchApplication.STORED_VALUE, key);
			store(connection, redisKey);
			return receipt;
		}
	}

	@PostMapping("/idem")
	@ResponseStatus(HttpStatus.CREATED)
	@Idempotent
	Receipt idempotent(@RequestBody PaymentRequest request) {
		return Receipt.of(request);
	}

	@PostMapping("/idem/replay")
	@ResponseStatus(HttpStatus.CREATED)
	@Idempotent("replay")
	Receipt idempotentReplay(@RequestBody PaymentRequest request) {
		return Receipt.of(request);
	}

	@PostMapping("/payment")
	@ResponseStatus(HttpStatus.CREATED)
	Receipt payment(@RequestBody PaymentRequest request) {
		return insertPayment(request);
	}

	@PostMapping("/payment/idem")
	@ResponseStatus(HttpStatus.CREATED)
	@Idempotent
	Receipt idempotentPayment(@RequestBody PaymentRequest request) {
		return insertPayment(request);
	}

	// the transactional mode when the JVM runs with
	// idempotency.policies.tx.transactional=true
	// (tiered or jdbc store only); else the same as /payment/idem
	@PostMapping("/payment/idem-tx")
	@ResponseStatus(HttpStatus.CREATED)
	@Idempotent("tx")
	Receipt transactionalPayment(@RequestBody PaymentRequest request) {
		return insertPayment(request);
	}

	@PostMapping("/raw/tx")
	@ResponseStatus(HttpStatus.CREATED)
	Receipt rawTransactional(@RequestBody PaymentRequest request, @RequestHeader("Idempotency-Key") String key) {
		byte[] redisKey = rawKey(key);
		try (RedisConnection connection = this.redis.getConnection()) {
			claim(connection, redisKey);
			Receipt receipt = handWrittenTransaction(request, key);
			store(connection, redisKey);
			return receipt;
		}
	}

	@PostMapping("/raw/tx-jdbc")
	@ResponseStatus(HttpStatus.CREATED)
	Receipt rawTransactionalJdbc(@RequestBody PaymentRequest request, @RequestHeader("Idempotency-Key") String key) {
		return handWrittenTransaction(request, key);
	}

	// the three statements and the one commit of a transactional first request
	private Receipt handWrittenTransaction(PaymentRequest request, String key) {
		return this.transactions.execute((status) -> {
			int claimed = this.jdbc.update("WITH guard AS (SELECT pg_try_advisory_xact_lock(hashtextextended(?, 0))"
					+ " AS held) INSERT INTO httpbench_raw_record (id, value, expires_at)"
					+ " SELECT ?, '\\x00'::bytea, now() + interval '30 seconds' FROM guard WHERE held"
					+ " ON CONFLICT (id) DO NOTHING", key, key);
			if (claimed != 1) {
				throw new IllegalStateException("Key " + key + " was used before");
			}
			Receipt receipt = insertPayment(request);
			this.jdbc.update("UPDATE httpbench_raw_record SET value = ?, expires_at = now() + interval '30 seconds'"
					+ " WHERE id = ?", HttpBenchApplication.STORED_VALUE, key);
			return receipt;
		});
	}

	private Receipt insertPayment(PaymentRequest request) {
		Long id = this.transactions.execute((status) -> this.jdbc.queryForObject(
				"INSERT INTO httpbench_payment (account, amount, currency, reference) VALUES (?, ?, ?, ?) RETURNING id",
				Long.class, request.account(), request.amount(), request.currency(), request.reference()));
		return new Receipt("pay-" + id, "ACCEPTED", request.account(), request.amount(), request.currency(),
				request.reference());
	}

	private static byte[] rawKey(String key) {
		return ("httpbench:raw:{" + key + "}").getBytes(StandardCharsets.UTF_8);
	}

	private static void claim(RedisConnection connection, byte[] redisKey) {
		Boolean claimed = connection.stringCommands()
			.set(redisKey, HttpBenchApplication.STORED_VALUE, Expiration.milliseconds(TTL_MILLIS),
					SetOption.ifAbsent());
		if (!Boolean.TRUE.equals(claimed)) {
			throw new IllegalStateException("Key was used before");
		}
	}

	private static void store(RedisConnection connection, byte[] redisKey) {
		connection.stringCommands()
			.set(redisKey, HttpBenchApplication.STORED_VALUE, Expiration.milliseconds(TTL_MILLIS), SetOption.upsert());
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
