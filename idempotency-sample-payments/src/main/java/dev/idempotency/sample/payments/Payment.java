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

import java.time.Instant;
import java.util.UUID;

/**
 * A payment taken from an account.
 *
 * @param id the payment's id
 * @param accountId the debited account
 * @param amount amount in minor units
 * @param currency ISO 4217 code
 * @param description what the payment is for
 * @param status {@code SUCCEEDED}, or {@code PENDING} while the gateway is being charged
 * @param createdAt when the payment was taken
 * @author Idempotency contributors
 */
public record Payment(UUID id, UUID accountId, long amount, String currency, String description, String status,
		Instant createdAt) {

}
