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

package dev.idempotency.spring.web;

import dev.idempotency.spring.store.jdbc.JdbcDialect;
import dev.idempotency.spring.store.jdbc.JdbcIdempotencyStore;
import org.junit.jupiter.api.Test;

import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP contract over the JDBC store on MariaDB in the transactional mode, on a real
 * server: every row of the contract, and every ending of a transactional request.
 *
 * @author Idempotency contributors
 */
@TestPropertySource(properties = { "idempotency.store.type=jdbc", "contract.database=mariadb" })
class MariaDbTransactionalHttpContractIT extends AbstractTransactionalHttpContractIT {

	@Test
	void usesTheJdbcStoreOnMariaDbWithTransactionalClaims() {
		assertThat(this.store).isInstanceOfSatisfying(JdbcIdempotencyStore.class, (store) -> {
			assertThat(store.isTransactionalClaims()).isTrue();
			assertThat(store.getDialect()).isEqualTo(JdbcDialect.MARIADB);
		});
	}

}
