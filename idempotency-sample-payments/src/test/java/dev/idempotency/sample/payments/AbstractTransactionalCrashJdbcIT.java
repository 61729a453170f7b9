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

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The account openings of {@link AccountOpeningCrash}, killed with {@code SIGKILL} before
 * the handler, before the commit and after the commit of their request transaction, with
 * the JDBC store alone on the {@link #database() database} (PostgreSQL or MariaDB): two
 * child JVMs from the packaged jar, one of them killed once the database shows the three
 * states.
 * <p>
 * The lock timeout is ten minutes, far beyond the retries' patience (a minute): a
 * transactional claim has no lease, so the retries on the survivor must not wait for one.
 * As soon as the database has ended the dead owner's sessions (rolling back their
 * transactions, and with them their claims: PostgreSQL's advisory locks, MariaDB's
 * uncommitted rows), the raced retries open each rolled-back account exactly once, or
 * replay the committed one, and the database holds exactly one account per key.
 *
 * @author Idempotency contributors
 * @see AbstractCrashRecoveryIT
 */
@Tag("reliability")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractTransactionalCrashJdbcIT {

	private static final Duration START_TIMEOUT = Duration.ofMinutes(3);

	private final String schema = "tx_crash_it_" + Long.toHexString(System.nanoTime());

	private final List<SampleInstance> instances = new ArrayList<>();

	private TestDatabase.Namespace namespace;

	private SampleClient survivorClient;

	private AccountOpeningCrash openings;

	/**
	 * Return the database the instances run on.
	 * @return the database
	 */
	abstract TestDatabase database();

	@BeforeAll
	void startInstancesAndKillOne() {
		this.namespace = database().create(this.schema);
		Path logs = SampleInstance.jar()
			.getParent()
			.resolve((database() == TestDatabase.POSTGRESQL) ? "tx-crash-jdbc-it" : "tx-crash-jdbc-it-mariadb");
		// both start at once: the second one's start-up overlaps the first one's
		SampleInstance victim = launch("victim", logs);
		SampleInstance survivor = launch("survivor", logs);
		victim.awaitStarted(START_TIMEOUT);
		survivor.awaitStarted(START_TIMEOUT);
		this.survivorClient = new SampleClient(survivor.port());
		this.openings = new AccountOpeningCrash(this.namespace, victim, "victim-" + this.schema, survivor, null);
		this.openings.awaitPaused();
		assertThat(victim.kill()).as("exit status of %s", victim).isEqualTo(SampleInstance.SIGKILL_EXIT_STATUS);
		this.openings.awaitVictimGone();
	}

	private SampleInstance launch(String name, Path logs) {
		Map<String, Object> properties = new LinkedHashMap<>(this.namespace.springProperties());
		properties.put("server.port", 0);
		// the server is shared: a small pool each, named to find its connections
		properties.put("spring.datasource.hikari.maximum-pool-size", 8);
		properties.putAll(this.namespace.connectionNameProperties(name + "-" + this.schema));
		properties.put("idempotency.store.type", "jdbc");
		properties.put("idempotency.lock-timeout", "10m");
		properties.put("idempotency.ttl", "15m");
		properties.put("payments.demo.enabled", true);
		SampleInstance instance = SampleInstance.start(name, properties,
				List.of("-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"), logs);
		this.instances.add(instance);
		return instance;
	}

	@AfterAll
	void stopInstances() {
		this.instances.forEach(SampleInstance::close);
		if (this.namespace != null) {
			this.namespace.close();
		}
	}

	@Test
	void anAccountKilledBeforeTheHandlerIsOpenedOnceByTheRetries() {
		this.openings.assertOpenedOnceByTheRetries(this.survivorClient, AccountOpeningCrash.BEFORE_HANDLER);
	}

	@Test
	void anAccountKilledBeforeItsCommitIsOpenedOnceByTheRetries() {
		this.openings.assertOpenedOnceByTheRetries(this.survivorClient, AccountOpeningCrash.BEFORE_COMMIT);
	}

	@Test
	void anAccountKilledAfterItsCommitIsReplayedByTheRetries() {
		this.openings.assertReplayedByTheRetries(this.survivorClient);
	}

}
