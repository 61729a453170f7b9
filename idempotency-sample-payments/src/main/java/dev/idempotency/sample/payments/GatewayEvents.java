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

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;

/**
 * Applies the events of the payment service provider: a {@code charge.succeeded} event
 * records the settlement of its charge; other types are acknowledged and ignored.
 *
 * @author Idempotency contributors
 */
@Service
class GatewayEvents {

	static final String CHARGE_SUCCEEDED = "charge.succeeded";

	private final JdbcClient jdbc;

	GatewayEvents(JdbcClient jdbc) {
		this.jdbc = jdbc;
	}

	/**
	 * Apply an event. Runs in the transaction of the request, which commits the
	 * settlement with the event's idempotency record.
	 * @param event the event
	 * @return what was done
	 */
	Receipt apply(Event event) {
		if (!CHARGE_SUCCEEDED.equals(event.type())) {
			return new Receipt(event.id(), "ignored", null);
		}
		Charge charge = event.data();
		if (charge == null || charge.id() == null || charge.amount() <= 0) {
			throw PaymentException.invalid("A charge.succeeded event needs data.id and a positive data.amount");
		}
		PaymentValidation.checkCurrency(charge.currency());
		UUID settlement = UUID.randomUUID();
		this.jdbc
			.sql("INSERT INTO gateway_settlements (id, event_id, charge_id, amount, currency) VALUES (?, ?, ?, ?, ?)")
			.params(settlement, event.id(), charge.id(), charge.amount(), charge.currency())
			.update();
		return new Receipt(event.id(), "settled", settlement);
	}

	/**
	 * An event as the provider sends it.
	 *
	 * @param id the event's id, unique per event and the same in every delivery of it
	 * @param type what happened, such as {@value #CHARGE_SUCCEEDED}
	 * @param data the charge the event is about
	 */
	record Event(String id, String type, @Nullable Charge data) {
	}

	/**
	 * The charge of an event.
	 *
	 * @param id the charge's id at the provider
	 * @param amount the amount in minor units
	 * @param currency the ISO 4217 currency code
	 */
	record Charge(@Nullable String id, long amount, @Nullable String currency) {
	}

	/**
	 * The answer to a delivery.
	 *
	 * @param event the event's id
	 * @param outcome {@code settled} or {@code ignored}
	 * @param settlement the settlement recorded, or {@code null}
	 */
	record Receipt(String event, String outcome, @Nullable UUID settlement) {
	}

}
