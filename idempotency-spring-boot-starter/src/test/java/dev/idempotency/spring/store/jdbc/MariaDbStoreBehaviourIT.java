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
import java.util.Map;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.RequestFingerprint;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.AcquireResult;
import dev.idempotency.spring.store.jdbc.MariaDbTestDatabase.Driver;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestInstance.Lifecycle;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the MariaDB store does where MariaDB differs from PostgreSQL: a response larger
 * than the server takes in one statement, a table named with its database on a connection
 * that has none, a session in another time zone, and the cleanup.
 *
 * @author Idempotency contributors
 */
@TestInstance(Lifecycle.PER_CLASS)
class MariaDbStoreBehaviourIT {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration TTL = Duration.ofMinutes(10);

	private MariaDbTestDatabase database;

	private JdbcIdempotencyStore store;

	@BeforeAll
	void createDatabase() {
		this.database = MariaDbTestDatabase.create("idem_maria_behaviour");
		new JdbcIdempotencySchemaInitializer(this.database.dataSource()).initialize();
		this.store = new JdbcIdempotencyStore(this.database.dataSource());
	}

	@AfterAll
	void dropDatabase() {
		this.database.close();
	}

	// max_allowed_packet is 16 MiB by default: a completion of a larger response would
	// fail and leave the key to be run again once its lease lapsed
	@Test
	void responseTooLargeForTheServerIsStoredAsNotReplayableAndNeverRunsAgain() {
		long packet = new JdbcTemplate(this.database.dataSource()).queryForObject("SELECT @@max_allowed_packet",
				Long.class);
		IdempotencyKey key = IdempotencyKey.global("too-large-" + System.nanoTime());
		RequestFingerprint fingerprint = RequestFingerprint.of(new byte[32]);
		OwnerToken owner = OwnerToken.generate();
		assertThat(this.store.acquire(key, fingerprint, owner, LEASE, TTL)).isInstanceOf(AcquireResult.Acquired.class);
		StoredResponse large = new StoredResponse(200, List.of(), new byte[(int) Math.min(packet, 60L << 20)]);
		assertThat(this.store.complete(key, owner, large, TTL)).isTrue();
		assertThat(this.store.acquire(key, fingerprint, OwnerToken.generate(), LEASE, TTL)).isInstanceOfSatisfying(
				AcquireResult.Replay.class, (replay) -> assertThat(replay.response().isReadable()).isFalse());
		// one that fits is stored as it is
		IdempotencyKey fits = IdempotencyKey.global("fits-" + System.nanoTime());
		OwnerToken fitsOwner = OwnerToken.generate();
		this.store.acquire(fits, fingerprint, fitsOwner, LEASE, TTL);
		StoredResponse small = new StoredResponse(200, List.of(), new byte[(int) (packet / 4)]);
		assertThat(this.store.complete(fits, fitsOwner, small, TTL)).isTrue();
		assertThat(this.store.acquire(fits, fingerprint, OwnerToken.generate(), LEASE, TTL)).isInstanceOfSatisfying(
				AcquireResult.Replay.class, (replay) -> assertThat(replay.response()).isEqualTo(small));
	}

	// DATABASE() is NULL on such a connection: the migration's lock is named after the
	// table's database instead
	@Test
	void tableNamedWithItsDatabaseIsMigratedOnAConnectionWithoutOne() {
		String url = this.database.url(Driver.MARIADB);
		String serverUrl = url.substring(0, url.lastIndexOf('/') + 1);
		HikariDataSource noDatabase = new HikariDataSource();
		try (noDatabase) {
			noDatabase.setJdbcUrl(serverUrl);
			noDatabase.setUsername(MariaDbTestDatabase.username());
			noDatabase.setPassword(MariaDbTestDatabase.password());
			JdbcIdempotencySchemaInitializer initializer = new JdbcIdempotencySchemaInitializer(noDatabase);
			initializer.setTableName(this.database.database() + ".qualified_records");
			initializer.initialize();
			JdbcIdempotencyStore qualified = new JdbcIdempotencyStore(noDatabase);
			qualified.setTableName(this.database.database() + ".qualified_records");
			IdempotencyKey key = IdempotencyKey.global("qualified-" + System.nanoTime());
			OwnerToken owner = OwnerToken.generate();
			assertThat(qualified.acquire(key, RequestFingerprint.of(new byte[32]), owner, LEASE, TTL))
				.isEqualTo(new AcquireResult.Acquired(owner));
		}
	}

	// instants are UTC_TIMESTAMP(6): neither the session's zone nor the driver's matter
	@Test
	void sessionInAnotherTimeZoneSeesTheSameLifetimes() {
		DataSource shifted = this.database.dataSource(Driver.MYSQL,
				Map.of("connectionTimeZone", "-07:00", "forceConnectionTimeZoneToSession", "true"));
		JdbcIdempotencyStore elsewhere = new JdbcIdempotencyStore(shifted);
		IdempotencyKey key = IdempotencyKey.global("zone-" + System.nanoTime());
		RequestFingerprint fingerprint = RequestFingerprint.of(new byte[32]);
		OwnerToken owner = OwnerToken.generate();
		elsewhere.acquire(key, fingerprint, owner, LEASE, TTL);
		assertThat(elsewhere.complete(key, owner, new StoredResponse(201, List.of(), new byte[] { 1 }), TTL)).isTrue();
		assertThat(this.store.find(key)).get()
			.satisfies((record) -> assertThat(record.timeToLive()).isBetween(TTL.minusSeconds(5), TTL));
		assertThat(elsewhere.find(key)).get()
			.satisfies((record) -> assertThat(record.timeToLive()).isBetween(TTL.minusSeconds(5), TTL));
		assertThat(new JdbcTemplate(shifted).queryForObject("SELECT @@session.time_zone", String.class))
			.isEqualTo("-07:00");
	}

	@Test
	void cleanupDeletesExpiredRecordsAndKeepsLiveOnes() throws InterruptedException {
		IdempotencyKey expiring = IdempotencyKey.global("expiring-" + System.nanoTime());
		IdempotencyKey live = IdempotencyKey.global("live-" + System.nanoTime());
		RequestFingerprint fingerprint = RequestFingerprint.of(new byte[32]);
		OwnerToken first = OwnerToken.generate();
		this.store.acquire(expiring, fingerprint, first, Duration.ofMillis(100), Duration.ofMillis(100));
		this.store.complete(expiring, first, new StoredResponse(200, List.of(), new byte[] { 1 }),
				Duration.ofMillis(100));
		OwnerToken second = OwnerToken.generate();
		this.store.acquire(live, fingerprint, second, LEASE, TTL);
		Thread.sleep(300);
		JdbcIdempotencyCleaner cleaner = new JdbcIdempotencyCleaner(this.database.dataSource());
		assertThat(cleaner.purgeExpired()).isGreaterThanOrEqualTo(1);
		JdbcTemplate jdbc = new JdbcTemplate(this.database.dataSource());
		assertThat(jdbc.queryForObject("SELECT count(*) FROM idempotency_record WHERE idem_key = ?", Integer.class,
				expiring.key()))
			.isZero();
		assertThat(jdbc.queryForObject("SELECT count(*) FROM idempotency_record WHERE idem_key = ?", Integer.class,
				live.key()))
			.isOne();
	}

}
