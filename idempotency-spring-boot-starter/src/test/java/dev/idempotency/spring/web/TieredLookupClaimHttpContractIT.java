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

import dev.idempotency.spring.store.tiered.TieredClaimMode;
import dev.idempotency.spring.store.tiered.TieredIdempotencyStore;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.TestPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HTTP contract over the tiered store in lookup claim mode
 * ({@code idempotency.tiered.claim=lookup}) on real servers. Its context is closed after
 * the class, so that its connection pool is not kept open for the rest of the run.
 *
 * @author Idempotency contributors
 */
@DirtiesContext
@TestPropertySource(
		properties = { "idempotency.tiered.claim=lookup", "idempotency.redis.key-prefix=it-http-tiered-lookup:" })
@Tag("variant")
class TieredLookupClaimHttpContractIT extends TieredHttpContractIT {

	// the claim lives in Redis only, and Redis takes a lapsed lease over at once
	@Override
	protected boolean confirmsTakeover() {
		return false;
	}

	@Test
	void usesTheLookupClaim() {
		assertThat(outage().delegate()).isInstanceOfSatisfying(TieredIdempotencyStore.class,
				(store) -> assertThat(store.getClaimMode()).isEqualTo(TieredClaimMode.LOOKUP));
	}

}
