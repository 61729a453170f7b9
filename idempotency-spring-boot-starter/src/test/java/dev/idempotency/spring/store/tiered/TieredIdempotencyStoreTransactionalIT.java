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

package dev.idempotency.spring.store.tiered;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyStatus;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.spring.store.TransactionPerOperationStore;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencySchemaInitializer;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencyStore;
import dev.idempotency.spring.store.redis.RedisIdempotencyStore;
import dev.idempotency.spring.transaction.TransactionalClaims;
import dev.idempotency.test.AbstractIdempotencyStoreTests;
import dev.idempotency.test.servers.TestServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store contract for {@link TieredIdempotencyStore} with the durable claim in the
 * transactional mode, on real Redis and PostgreSQL servers.
 * <p>
 * As for the PostgreSQL store alone ({@code JdbcIdempotencyStoreTransactionalIT}), the
 * transactional mode means for the contract: the PostgreSQL tier has transactional claims
 * on, and each operation of the contract runs in a new transaction of the PostgreSQL
 * tier's data source with {@link TransactionalClaims} open, committed once it returns
 * ({@link TransactionPerOperationStore}). So the PostgreSQL statements of every case run
 * on the transaction's connection, claims are guarded by the key's advisory lock, and
 * Redis is completed only after the commit (or released after a rollback).
 *
 * @author Idempotency contributors
 */
@org.junit.jupiter.api.Tag("contract")
class TieredIdempotencyStoreTransactionalIT extends AbstractIdempotencyStoreTests {

	// unique per run: two builds may share one server
	private static final String SCHEMA = "idem_tiered_tx_it_" + Long.toHexString(System.nanoTime());

	private static final String PREFIX = "idem-tiered-tx-it-" + UUID.randomUUID() + ":";

	private static LettuceConnectionFactory redis;

	private static HikariDataSource dataSource;

	private static DataSourceTransactionManager transactionManager;

	private RedisIdempotencyStore fast;

	@BeforeAll
	static void connect() {
		redis = TestServers.redis().connectionFactory();
		dataSource = TestServers.postgres().dataSource(SCHEMA);
		new JdbcIdempotencySchemaInitializer(dataSource).initialize();
		transactionManager = new DataSourceTransactionManager(dataSource);
	}

	@AfterAll
	static void cleanUp() {
		try {
			deleteRedisKeys();
			TestServers.Postgres.dropSchema(dataSource, SCHEMA);
		}
		finally {
			dataSource.close();
			redis.destroy();
		}
	}

	// the contract's lapse tests take a lapsed lease over at first sight; the confirmed
	// takeover, PostgreSQL's default, is tested in JdbcIdempotencyStorePostgresIT
	@Override
	protected IdempotencyStore createStore() {
		this.fast = new RedisIdempotencyStore(redis);
		this.fast.setKeyPrefix(PREFIX);
		JdbcIdempotencyStore durable = new JdbcIdempotencyStore(dataSource);
		durable.setConfirmTakeover(false);
		durable.setTransactionalClaims(true);
		TieredIdempotencyStore tiered = new TieredIdempotencyStore(this.fast, durable);
		tiered.setClaimMode(TieredClaimMode.DURABLE);
		return new TransactionPerOperationStore(tiered, transactionManager);
	}

	@Override
	protected int raceKeys() {
		// a quarter of the kit's keys, each still raced by all its threads:
		// JdbcIdempotencyStoreTransactionalIT races the same advisory-locked claims, and
		// TieredIdempotencyStoreIT the same tiers, with the full number
		return 250;
	}

	// the cases above would pass on auto-committed operations too: this one shows that
	// the completion joins the transaction and reaches Redis only after its commit
	@Test
	void redisIsCompletedOnlyAfterTheCommit() {
		IdempotencyStore tiered = ((TransactionPerOperationStore) store()).delegate();
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		RequestFingerprint fingerprint = fingerprint("a");
		StoredResponse response = response(201, "{\"id\":1}");
		TransactionTemplate transaction = new TransactionTemplate(transactionManager);
		transaction.executeWithoutResult((status) -> {
			try (TransactionalClaims.Scope claims = TransactionalClaims.open(dataSource)) {
				assertThat(tiered.acquire(key, fingerprint, token, LONG_LEASE, LONG_TTL))
					.isEqualTo(new AcquireResult.Acquired(token));
				assertThat(tiered.complete(key, token, response, LONG_TTL)).isTrue();
				assertThat(this.fast.find(key)).get()
					.satisfies((record) -> assertThat(record.status()).isEqualTo(IdempotencyStatus.PROCESSING));
			}
		});
		assertThat(this.fast.find(key)).get().satisfies((record) -> {
			assertThat(record.status()).isEqualTo(IdempotencyStatus.COMPLETED);
			assertThat(record.response()).isEqualTo(response);
		});
		assertThat(store().acquire(key, fingerprint, OwnerToken.generate(), LONG_LEASE, LONG_TTL))
			.isInstanceOfSatisfying(AcquireResult.Replay.class,
					(replay) -> assertThat(replay.response()).isEqualTo(response));
	}

	// and a rollback leaves neither tier holding the key
	@Test
	void rolledBackCompletionLeavesTheKeyFree() {
		IdempotencyStore tiered = ((TransactionPerOperationStore) store()).delegate();
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		RequestFingerprint fingerprint = fingerprint("a");
		TransactionTemplate transaction = new TransactionTemplate(transactionManager);
		transaction.executeWithoutResult((status) -> {
			try (TransactionalClaims.Scope claims = TransactionalClaims.open(dataSource)) {
				assertThat(tiered.acquire(key, fingerprint, token, LONG_LEASE, LONG_TTL))
					.isEqualTo(new AcquireResult.Acquired(token));
				assertThat(tiered.complete(key, token, response(201, "{}"), LONG_TTL)).isTrue();
				status.setRollbackOnly();
			}
		});
		assertThat(this.fast.find(key)).isEmpty();
		assertThat(store().find(key)).isEmpty();
		OwnerToken next = OwnerToken.generate();
		assertThat(store().acquire(key, fingerprint("b"), next, LONG_LEASE, LONG_TTL))
			.isEqualTo(new AcquireResult.Acquired(next));
	}

	// the operations of the store under test join their transactions: a completion
	// rolled back leaves the claim processing in PostgreSQL and nothing in Redis
	@Test
	void completionOfARolledBackTransactionLeavesTheClaimProcessing() {
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		RequestFingerprint fingerprint = fingerprint("a");
		assertThat(store().acquire(key, fingerprint, token, LONG_LEASE, LONG_TTL))
			.isEqualTo(new AcquireResult.Acquired(token));
		TransactionPerOperationStore rollingBack = ((TransactionPerOperationStore) store()).rollingBack();
		assertThat(rollingBack.complete(key, token, response(201, "rolled back"), LONG_TTL)).isTrue();
		assertThat(this.fast.find(key)).isEmpty();
		assertThat(store().find(key)).get().satisfies((record) -> {
			assertThat(record.status()).isEqualTo(IdempotencyStatus.PROCESSING);
			assertThat(record.owner()).isEqualTo(token);
		});
		assertThat(store().acquire(key, fingerprint, OwnerToken.generate(), LONG_LEASE, LONG_TTL))
			.isInstanceOf(AcquireResult.InProgress.class);
		StoredResponse response = response(201, "committed");
		assertThat(store().complete(key, token, response, LONG_TTL)).isTrue();
		assertThat(store().acquire(key, fingerprint, OwnerToken.generate(), LONG_LEASE, LONG_TTL))
			.isInstanceOfSatisfying(AcquireResult.Replay.class,
					(replay) -> assertThat(replay.response()).isEqualTo(response));
	}

	private static void deleteRedisKeys() {
		try (RedisConnection connection = redis.getConnection()) {
			List<byte[]> keys = new ArrayList<>();
			ScanOptions options = ScanOptions.scanOptions().match(PREFIX + "*").count(1000).build();
			try (Cursor<byte[]> cursor = connection.keyCommands().scan(options)) {
				cursor.forEachRemaining(keys::add);
			}
			if (!keys.isEmpty()) {
				connection.keyCommands().del(keys.toArray(new byte[0][]));
			}
		}
	}

}
