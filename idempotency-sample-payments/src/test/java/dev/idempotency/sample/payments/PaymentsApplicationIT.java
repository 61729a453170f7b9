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

import dev.idempotency.test.servers.TestServers;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@link AbstractPaymentsApplicationIT The README's story} on PostgreSQL, the sample's
 * default, in a schema of its own.
 *
 * @author Idempotency contributors
 */
class PaymentsApplicationIT extends AbstractPaymentsApplicationIT {

	private static final String SCHEMA = "payments_it_" + Long.toHexString(System.nanoTime());

	@DynamicPropertySource
	static void servers(DynamicPropertyRegistry registry) {
		TestServers.springProperties().forEach((name, value) -> registry.add(name, () -> value));
		registry.add("spring.datasource.hikari.schema", () -> SCHEMA);
		registry.add("spring.flyway.schemas", () -> SCHEMA);
		registry.add("spring.flyway.default-schema", () -> SCHEMA);
		registry.add("idempotency.redis.key-prefix", () -> SCHEMA + ":");
	}

}
