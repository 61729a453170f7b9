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

package dev.idempotency.sample.payments;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import dev.idempotency.test.servers.TestServers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The account openings of {@link AccountOpeningCrash}, killed with {@code SIGKILL} before
 * the handler, before the commit and after the commit of their request transaction, with
 * the PostgreSQL store alone: two child JVMs from the packaged jar, one of them killed
 * once PostgreSQL shows the three states.
 * <p>
 * The lock timeout is ten minutes, far beyond the retries' patience (a minute): a
 * transactional claim has no lease, so the retries on the survivor must not wait for one.
 * As soon as PostgreSQL has ended the dead owner's sessions (rolling back their
 * transactions and their claims' advisory locks), the raced retries open each rolled-back
 * account exactly once, or replay the committed one, and the database holds exactly one
 * account per key.
 *
 * @author Idempotency contributors
 * @see CrashRecoveryIT
 */
@Tag("reliability")
class TransactionalCrashJdbcIT {

	private static final String SCHEMA = "tx_crash_it_" + Long.toHexString(System.nanoTime());

	private static final Duration START_TIMEOUT = Duration.ofMinutes(3);

	private static final List<SampleInstance> instances = new ArrayList<>();

	private static DataSource dataSource;

	private static SampleClient survivorClient;

	private static AccountOpeningCrash openings;

	@BeforeAll
	static void startInstancesAndKillOne() {
		dataSource = SampleInstance.schemaDataSource(SCHEMA);
		Path logs = SampleInstance.jar().getParent().resolve("tx-crash-jdbc-it");
		// both start at once: the second one's start-up overlaps the first one's
		SampleInstance victim = launch("victim", logs);
		SampleInstance survivor = launch("survivor", logs);
		victim.awaitStarted(START_TIMEOUT);
		survivor.awaitStarted(START_TIMEOUT);
		survivorClient = new SampleClient(survivor.port());
		openings = new AccountOpeningCrash(JdbcClient.create(dataSource), victim, "victim-" + SCHEMA);
		openings.awaitPaused();
		assertThat(victim.kill()).as("exit status of %s", victim).isEqualTo(SampleInstance.SIGKILL_EXIT_STATUS);
		openings.awaitVictimGone();
	}

	private static SampleInstance launch(String name, Path logs) {
		Map<String, Object> properties = new LinkedHashMap<>(TestServers.springProperties());
		properties.put("server.port", 0);
		properties.put("spring.datasource.hikari.schema", SCHEMA);
		// the server is shared: a small pool each, named to find its connections
		properties.put("spring.datasource.hikari.maximum-pool-size", 8);
		properties.put("spring.datasource.hikari.data-source-properties.ApplicationName", name + "-" + SCHEMA);
		properties.put("spring.flyway.schemas", SCHEMA);
		properties.put("spring.flyway.default-schema", SCHEMA);
		properties.put("idempotency.store.type", "jdbc");
		properties.put("idempotency.lock-timeout", "10m");
		properties.put("idempotency.ttl", "15m");
		properties.put("payments.demo.enabled", true);
		SampleInstance instance = SampleInstance.start(name, properties,
				List.of("-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"), logs);
		instances.add(instance);
		return instance;
	}

	@AfterAll
	static void stopInstances() {
		instances.forEach(SampleInstance::close);
		if (dataSource != null) {
			TestServers.Postgres.dropSchema(dataSource, SCHEMA);
		}
	}

	@Test
	void anAccountKilledBeforeTheHandlerIsOpenedOnceByTheRetries() {
		openings.assertOpenedOnceByTheRetries(survivorClient, AccountOpeningCrash.BEFORE_HANDLER);
	}

	@Test
	void anAccountKilledBeforeItsCommitIsOpenedOnceByTheRetries() {
		openings.assertOpenedOnceByTheRetries(survivorClient, AccountOpeningCrash.BEFORE_COMMIT);
	}

	@Test
	void anAccountKilledAfterItsCommitIsReplayedByTheRetries() {
		openings.assertReplayedByTheRetries(survivorClient);
	}

}
