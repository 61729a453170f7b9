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

import java.time.Duration;
import java.util.UUID;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

/**
 * A fake payment service provider with its own ledger of charges. Like a real one it is
 * idempotent by the key its caller sends: a charge retried with the same key returns the
 * first charge instead of charging again.
 *
 * @author Idempotency contributors
 */
@Component
public class PaymentGateway {

	private static final Duration MAX_DELAY = Duration.ofSeconds(60);

	private final JdbcClient jdbc;

	PaymentGateway(JdbcClient jdbc) {
		this.jdbc = jdbc;
	}

	/**
	 * Charge an amount, or return the charge already made with this key.
	 * @param chargeKey the caller's idempotency key for this charge
	 * @param amount amount in minor units
	 * @param currency the ISO 4217 currency code
	 * @param demo the demo behaviour asked for by the request
	 * @return the charge's id
	 */
	public String charge(String chargeKey, long amount, String currency, DemoBehaviour demo) {
		if (!demo.delay().isZero() && !demo.delay().isNegative()) {
			sleep((demo.delay().compareTo(MAX_DELAY) > 0) ? MAX_DELAY : demo.delay());
		}
		if (demo.faultStatus() != 0) {
			throw new GatewayException(demo.faultStatus());
		}
		return this.jdbc.sql("""
				INSERT INTO gateway_charges (charge_key, id, amount, currency) VALUES (?, ?, ?, ?)
				ON CONFLICT (charge_key) DO NOTHING
				RETURNING id
				""")
			.params(chargeKey, "ch_" + UUID.randomUUID().toString().replace("-", ""), amount, currency)
			.query(String.class)
			.optional()
			.orElseGet(() -> this.jdbc.sql("SELECT id FROM gateway_charges WHERE charge_key = ?")
				.param(chargeKey)
				.query(String.class)
				.single());
	}

	private static void sleep(Duration delay) {
		try {
			Thread.sleep(delay.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new GatewayException(504);
		}
	}

	/**
	 * Demo controls taken from request headers.
	 *
	 * @param delay how long the gateway takes
	 * @param faultStatus a 5xx status to fail with, or 0
	 */
	public record DemoBehaviour(Duration delay, int faultStatus) {

		/**
		 * Behave normally.
		 */
		public static final DemoBehaviour NONE = new DemoBehaviour(Duration.ZERO, 0);

	}

}
