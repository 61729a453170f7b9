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

/**
 * A payment service provider. Like a real one, it is idempotent by the key its caller
 * sends: a charge retried with the same key returns the first charge instead of charging
 * again.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public interface PaymentGateway {

	/**
	 * Charge an amount, or return the charge already made with this key.
	 * @param chargeKey the caller's idempotency key for this charge
	 * @param amount amount in minor units
	 * @param currency the ISO 4217 currency code
	 * @return the charge's id
	 * @throws GatewayException if the provider failed; a retry with the same key may
	 * succeed
	 */
	String charge(String chargeKey, long amount, String currency);

}
