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
 * A {@link PaymentGateway} that first does what the request's demo headers ask for
 * (waits, or fails with a 5xx), then hands the charge to the real gateway.
 *
 * @author Idempotency contributors
 * @see DemoConfiguration
 */
class DemoPaymentGateway implements PaymentGateway {

	private final PaymentGateway gateway;

	DemoPaymentGateway(PaymentGateway gateway) {
		this.gateway = gateway;
	}

	@Override
	public String charge(String chargeKey, long amount, String currency) {
		DemoBehaviour demo = DemoBehaviour.current();
		if (demo != null) {
			if (!demo.gatewayDelay().isZero()) {
				sleep(demo.gatewayDelay().toMillis());
			}
			if (demo.gatewayFault() != 0) {
				throw new GatewayException(demo.gatewayFault());
			}
		}
		return this.gateway.charge(chargeKey, amount, currency);
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			// a provider that does not answer in time
			Thread.currentThread().interrupt();
			throw new GatewayException(504);
		}
	}

}
