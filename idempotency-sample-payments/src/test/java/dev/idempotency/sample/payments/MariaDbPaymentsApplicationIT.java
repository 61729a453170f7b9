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

import org.springframework.core.Ordered;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestContext;
import org.springframework.test.context.TestExecutionListener;
import org.springframework.test.context.TestExecutionListeners;

/**
 * {@link AbstractPaymentsApplicationIT The README's story} on MariaDB: the sample with
 * its profile {@code mariadb}, in a database of its own, its tables migrated from
 * {@code db/migration/mariadb}.
 *
 * @author Idempotency contributors
 */
@ActiveProfiles("mariadb")
@DirtiesContext
@TestExecutionListeners(listeners = MariaDbPaymentsApplicationIT.DropDatabase.class,
		mergeMode = TestExecutionListeners.MergeMode.MERGE_WITH_DEFAULTS)
class MariaDbPaymentsApplicationIT extends AbstractPaymentsApplicationIT {

	private static final TestDatabase.Namespace DATABASE = TestDatabase.MARIADB
		.create("payments_it_" + Long.toHexString(System.nanoTime()));

	@DynamicPropertySource
	static void servers(DynamicPropertyRegistry registry) {
		// the profile is @ActiveProfiles': too late here for application-mariadb.yml
		DATABASE.springProperties()
			.entrySet()
			.stream()
			.filter((property) -> !property.getKey().equals("spring.profiles.active"))
			.forEach((property) -> registry.add(property.getKey(), property::getValue));
		registry.add("idempotency.redis.key-prefix", () -> DATABASE.name() + ":");
	}

	/**
	 * Drops the test's database once the application is closed (by
	 * {@link DirtiesContext}, whose listener runs just before this one at the end of the
	 * class), so that nothing of it, the pool or the store's cleanup, works on a database
	 * that is gone.
	 */
	static final class DropDatabase implements TestExecutionListener, Ordered {

		@Override
		public void afterTestClass(TestContext testContext) {
			DATABASE.close();
		}

		// the listeners' afterTestClass run in reverse order: this one after
		// DirtiesContextTestExecutionListener's (3000)
		@Override
		public int getOrder() {
			return 2900;
		}

	}

}
