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

import dev.idempotency.spring.Idempotent;

import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * Receives the events of the payment service provider. The provider delivers each event
 * at least once: again when our answer was lost, and sometimes twice at once.
 *
 * @author Idempotency contributors
 */
@RestController
class GatewayWebhookController {

	private final GatewayEvents events;

	GatewayWebhookController(GatewayEvents events) {
		this.events = events;
	}

	// the "gateway-events" policy of application.yml: the key is
	// the event's own id, at /id of the body, and the settlement
	// commits together with the claim and the stored receipt
	@PostMapping(path = "/webhooks/gateway", consumes = MediaType.APPLICATION_JSON_VALUE)
	@Idempotent("gateway-events")
	GatewayEvents.Receipt receive(@RequestBody GatewayEvents.Event event) {
		return this.events.apply(event);
	}

}
