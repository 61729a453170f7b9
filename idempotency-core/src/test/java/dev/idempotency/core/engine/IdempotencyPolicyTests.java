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

package dev.idempotency.core.engine;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link IdempotencyPolicy}.
 *
 * @author Idempotency contributors
 */
class IdempotencyPolicyTests {

	@Test
	void toBuilderKeepsEverySetting() {
		IdempotencyPolicy policy = IdempotencyPolicy.builder()
			.name("payments")
			.ttl(Duration.ofHours(2))
			.lockTimeout(Duration.ofSeconds(5))
			.inFlightWait(Duration.ofMillis(200))
			.onStoreFailure(StoreFailureMode.FAIL_OPEN)
			.nonStorableStatuses(StatusSet.of(500, 503))
			.unavailableRetryAfter(Duration.ofSeconds(3))
			.inProgressRetryAfter(Duration.ofSeconds(4))
			.transactional(true)
			.maxExecutionTime(Duration.ofMinutes(1))
			.build();
		assertThat(policy.toBuilder().build()).isEqualTo(policy);
	}

	@Test
	void toBuilderChangesOnlyWhatIsSet() {
		IdempotencyPolicy policy = IdempotencyPolicy.builder().name("payments").build();
		IdempotencyPolicy shorter = policy.toBuilder().ttl(Duration.ofMinutes(5)).build();
		assertThat(shorter.ttl()).isEqualTo(Duration.ofMinutes(5));
		assertThat(shorter.toBuilder().ttl(policy.ttl()).build()).isEqualTo(policy);
	}

}
