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

package dev.idempotency.spring.store;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link StoreDurations}.
 *
 * @author Idempotency contributors
 */
class StoreDurationsTests {

	@Test
	void wholeMillisecondsAreKept() {
		assertThat(StoreDurations.toMillis(Duration.ofSeconds(30), "lease")).isEqualTo(30_000);
		assertThat(StoreDurations.toMillis(Duration.ofMillis(1), "lease")).isEqualTo(1);
	}

	@Test
	void aSubMillisecondRemainderIsRoundedUp() {
		assertThat(StoreDurations.toMillis(Duration.ofNanos(1), "lease")).isEqualTo(1);
		assertThat(StoreDurations.toMillis(Duration.ofMillis(1500).plusNanos(1), "ttl")).isEqualTo(1501);
		assertThat(StoreDurations.toMillis(Duration.ofNanos(2_999_999), "ttl")).isEqualTo(3);
	}

	@Test
	void zeroAndNegativeDurationsAreRefusedByName() {
		assertThatIllegalArgumentException().isThrownBy(() -> StoreDurations.toMillis(Duration.ZERO, "ttl"))
			.withMessage("'ttl' must be positive");
		assertThatIllegalArgumentException().isThrownBy(() -> StoreDurations.toMillis(Duration.ofMillis(-1), "lease"))
			.withMessage("'lease' must be positive");
	}

}
