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

import java.util.UUID;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

/**
 * A fake payment service provider with its own ledger of charges, in the sample's
 * database.
 *
 * @author Idempotency contributors
 */
@Component
class FakePaymentGateway implements PaymentGateway {

	// the charge of a new key, none for a key already charged: PostgreSQL's ON CONFLICT
	// DO NOTHING, MariaDB's INSERT IGNORE (every value fits its column, so IGNORE
	// shortens
	// nothing), each returning the id it inserted
	private static final String CHARGE_POSTGRESQL = """
			INSERT INTO gateway_charges (charge_key, id, amount, currency) VALUES (?, ?, ?, ?)
			ON CONFLICT (charge_key) DO NOTHING
			RETURNING id
			""";

	private static final String CHARGE_MARIADB = """
			INSERT IGNORE INTO gateway_charges (charge_key, id, amount, currency) VALUES (?, ?, ?, ?)
			RETURNING id
			""";

	private final JdbcClient jdbc;

	private final String charge;

	FakePaymentGateway(JdbcClient jdbc, SampleDatabase database) {
		this.jdbc = jdbc;
		this.charge = (database == SampleDatabase.MARIADB) ? CHARGE_MARIADB : CHARGE_POSTGRESQL;
	}

	@Override
	public String charge(String chargeKey, long amount, String currency) {
		return this.jdbc.sql(this.charge)
			.params(chargeKey, "ch_" + UUID.randomUUID().toString().replace("-", ""), amount, currency)
			.query(String.class)
			.optional()
			.orElseGet(() -> this.jdbc.sql("SELECT id FROM gateway_charges WHERE charge_key = ?")
				.param(chargeKey)
				.query(String.class)
				.single());
	}

}
