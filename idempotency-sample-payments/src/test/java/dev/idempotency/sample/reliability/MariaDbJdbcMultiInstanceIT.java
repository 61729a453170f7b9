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

package dev.idempotency.sample.reliability;

import java.util.Map;

import dev.idempotency.sample.payments.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Three instances of the payments sample sharing MariaDB alone (the profile
 * {@code mariadb} with {@code idempotency.store.type=jdbc}, no Redis in the store): the
 * stampedes of {@link AbstractMultiInstanceIT}, where every claim of every duplicate is
 * decided by MariaDB, and the transactional one claims in MariaDB transactions that a
 * duplicate never waits behind.
 *
 * @author Idempotency contributors
 * @see MariaDbMultiInstanceIT
 */
@Tag("reliability")
class MariaDbJdbcMultiInstanceIT {

	private static PaymentsCluster cluster;

	@BeforeAll
	static void start() {
		// MariaDB answers every duplicate, and every in-flight wait polls it: the
		// sample's lock timeout (10 s, not the cluster's 2 s) and a larger pool, so that
		// the running request's heartbeat never loses its lease waiting for a connection
		// on a busy machine
		cluster = PaymentsCluster.start(TestDatabase.MARIADB, "multi_instance_jdbc_mariadb_it",
				AbstractMultiInstanceIT.INSTANCES, false, Map.of("idempotency.store.type", "jdbc",
						"idempotency.lock-timeout", "10s", "spring.datasource.hikari.maximum-pool-size", 10));
	}

	@AfterAll
	static void stop() {
		if (cluster != null) {
			cluster.close();
		}
	}

	@Test
	void concurrentDuplicatesOverThreeInstancesRunOnce() throws Exception {
		AbstractMultiInstanceIT.assertConcurrentDuplicatesRunOnce(cluster, 60, "stampede-jdbc");
	}

	@Test
	void concurrentTransactionalDuplicatesOverThreeInstancesOpenOneAccount() throws Exception {
		AbstractMultiInstanceIT.assertConcurrentTransactionalDuplicatesOpenOneAccount(cluster, 60,
				"account-stampede-jdbc", 500_002);
	}

}
