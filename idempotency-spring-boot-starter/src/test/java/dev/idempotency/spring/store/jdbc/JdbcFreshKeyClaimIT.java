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

package dev.idempotency.spring.store.jdbc;

import java.time.Duration;
import java.util.List;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.test.AbstractIdempotencyStoreTests;
import dev.idempotency.test.ForwardingIdempotencyStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link JdbcIdempotencyStore#acquireFresh}, the claim a tiered store makes for a key its
 * fast tier has just granted, on a real PostgreSQL server: the whole store contract (its
 * races included) with every claim made by {@code acquireFresh}, and the statements it
 * runs for a new key and for a key with a row.
 *
 * @author Idempotency contributors
 */
@Tag("contract")
@Tag("variant")
class JdbcFreshKeyClaimIT extends AbstractIdempotencyStoreTests {

	private static PostgresTestDatabase database;

	private static CountingDataSource counting;

	@BeforeAll
	static void createSchema() {
		database = PostgresTestDatabase.create("idem_jdbc_fresh_claim");
		new JdbcIdempotencySchemaInitializer(database.dataSource()).initialize();
		counting = new CountingDataSource(database.dataSource());
	}

	@AfterAll
	static void dropSchema() {
		database.close();
	}

	// as in JdbcIdempotencyStoreIT, a lapsed lease is taken over at first sight
	@Override
	protected IdempotencyStore createStore() {
		JdbcIdempotencyStore store = new JdbcIdempotencyStore(counting.dataSource());
		store.setConfirmTakeover(false);
		return new FreshClaims(store);
	}

	@Override
	protected int raceKeys() {
		// a quarter of the kit's keys, each still raced by all its threads (16,000
		// claims): the race of each key is what the test proves, and its statements
		// after the first are those JdbcIdempotencyStoreIT races with the full number
		return 250;
	}

	@Test
	void newKeyIsClaimedByOnePlainInsert() {
		JdbcIdempotencyStore store = ((FreshClaims) store()).store;
		counting.takeStatements();
		OwnerToken token = OwnerToken.generate();
		assertThat(store.acquireFresh(newKey(), fingerprint("a"), token, LONG_LEASE, LONG_TTL))
			.isEqualTo(new AcquireResult.Acquired(token));
		List<String> statements = counting.takeStatements();
		assertThat(statements).singleElement()
			.satisfies((sql) -> assertThat(sql.strip()).startsWith("INSERT INTO").doesNotContain("WITH"));
	}

	@Test
	void keyWithRowIsReadBySecondStatement() {
		JdbcIdempotencyStore store = ((FreshClaims) store()).store;
		IdempotencyKey key = newKey();
		OwnerToken first = OwnerToken.generate();
		assertThat(store.acquire(key, fingerprint("a"), first, LONG_LEASE, LONG_TTL))
			.isEqualTo(new AcquireResult.Acquired(first));
		StoredResponse response = response(201, "{\"id\":1}");
		assertThat(store.complete(key, first, response, LONG_TTL)).isTrue();
		counting.takeStatements();
		AcquireResult result = store.acquireFresh(key, fingerprint("a"), OwnerToken.generate(), LONG_LEASE, LONG_TTL);
		assertThat(result).isInstanceOfSatisfying(AcquireResult.Replay.class,
				(replay) -> assertThat(replay.response().bodyBytes()).isEqualTo(response.bodyBytes()));
		List<String> statements = counting.takeStatements();
		assertThat(statements).hasSize(2);
		assertThat(statements.get(0).strip()).startsWith("INSERT INTO");
		assertThat(statements.get(1).strip()).startsWith("WITH ins AS");
	}

	@Test
	void completionIsOnePlainUpdateAndItsRetryFindsTheRowCompleted() {
		JdbcIdempotencyStore store = ((FreshClaims) store()).store;
		IdempotencyKey key = newKey();
		OwnerToken token = OwnerToken.generate();
		store.acquireFresh(key, fingerprint("a"), token, LONG_LEASE, LONG_TTL);
		StoredResponse response = response(201, "{\"id\":2}");
		counting.takeStatements();
		assertThat(store.complete(key, token, response, LONG_TTL)).isTrue();
		assertThat(counting.takeStatements()).singleElement()
			.satisfies((sql) -> assertThat(sql.strip()).startsWith("UPDATE").doesNotContain("WITH"));
		// the retry of a completion whose reply was lost: the update changes nothing,
		// the second statement finds the row completed with the same token
		assertThat(store.complete(key, token, response, LONG_TTL)).isTrue();
		assertThat(counting.takeStatements()).hasSize(2);
		assertThat(store.complete(key, OwnerToken.generate(), response, LONG_TTL)).isFalse();
	}

	/**
	 * The JDBC store with every claim made by {@code acquireFresh}.
	 */
	private static final class FreshClaims extends ForwardingIdempotencyStore {

		private final JdbcIdempotencyStore store;

		FreshClaims(JdbcIdempotencyStore store) {
			super(store);
			this.store = store;
		}

		@Override
		public AcquireResult acquire(IdempotencyKey key, RequestFingerprint fingerprint, OwnerToken token,
				Duration lease, Duration ttl) {
			return this.store.acquireFresh(key, fingerprint, token, lease, ttl);
		}

	}

}
