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

import dev.idempotency.sample.payments.TestDatabase;

/**
 * {@link AbstractMultiInstanceIT The multi-instance tests} with Redis in front of MariaDB
 * (the profile {@code mariadb}): the stampedes' executions, the replays after Redis lost
 * its data and the records of both users are counted in MariaDB.
 *
 * @author Idempotency contributors
 * @see MariaDbJdbcMultiInstanceIT
 */
class MariaDbMultiInstanceIT extends AbstractMultiInstanceIT {

	@Override
	TestDatabase database() {
		return TestDatabase.MARIADB;
	}

	// a third of PostgreSQL's: the duplicates meet the claim in Redis there as here,
	// and 100 requests on one key still race every instance many times over
	@Override
	int stampede() {
		return 100;
	}

}
