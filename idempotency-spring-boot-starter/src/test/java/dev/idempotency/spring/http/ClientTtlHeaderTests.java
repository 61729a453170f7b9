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

package dev.idempotency.spring.http;

import java.time.Duration;
import java.util.List;

import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.core.fingerprint.Sha256RequestFingerprinter;
import dev.idempotency.spring.NamedPolicy;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link ClientTtlHeader}.
 *
 * @author Idempotency contributors
 */
class ClientTtlHeaderTests {

	private final NamedPolicy policy = new NamedPolicy(
			IdempotencyPolicy.builder().ttl(Duration.ofHours(1)).lockTimeout(Duration.ofSeconds(30)).build(),
			new Sha256RequestFingerprinter(), List.of(), 1024, 1024, Duration.ofMinutes(1), Duration.ofDays(1));

	@Test
	void secondsAreOneToTenAsciiDigits() {
		assertThat(ClientTtlHeader.seconds("600")).isEqualTo(600);
		assertThat(ClientTtlHeader.seconds(" \t600 ")).isEqualTo(600);
		assertThat(ClientTtlHeader.seconds("0")).isZero();
		assertThat(ClientTtlHeader.seconds("9999999999")).isEqualTo(9_999_999_999L);
	}

	@Test
	void otherValuesAreIgnored() {
		assertThat(ClientTtlHeader.seconds(null)).isEqualTo(-1);
		assertThat(ClientTtlHeader.seconds("")).isEqualTo(-1);
		assertThat(ClientTtlHeader.seconds("  ")).isEqualTo(-1);
		assertThat(ClientTtlHeader.seconds("10000000000")).isEqualTo(-1);
		assertThat(ClientTtlHeader.seconds("-5")).isEqualTo(-1);
		assertThat(ClientTtlHeader.seconds("+5")).isEqualTo(-1);
		assertThat(ClientTtlHeader.seconds("5s")).isEqualTo(-1);
		assertThat(ClientTtlHeader.seconds("1.5")).isEqualTo(-1);
		assertThat(ClientTtlHeader.seconds("PT5S")).isEqualTo(-1);
		// digits of other scripts (Arabic-Indic, fullwidth)
		assertThat(ClientTtlHeader.seconds("\u0665\u0660")).isEqualTo(-1);
		assertThat(ClientTtlHeader.seconds("\uFF15")).isEqualTo(-1);
	}

	@Test
	void askedTtlIsClampedByThePolicy() {
		ClientTtlHeader header = new ClientTtlHeader("Idempotency-TTL");
		assertThat(header.policy("600", this.policy).ttl()).isEqualTo(Duration.ofMinutes(10));
		assertThat(header.policy("1", this.policy).ttl()).isEqualTo(Duration.ofMinutes(1));
		assertThat(header.policy("9999999999", this.policy).ttl()).isEqualTo(Duration.ofDays(1));
	}

	@Test
	void policyAppliesWithoutAValidAskedTtl() {
		ClientTtlHeader header = new ClientTtlHeader("Idempotency-TTL");
		assertThat(header.policy(null, this.policy)).isSameAs(this.policy.engine());
		assertThat(header.policy("ten", this.policy)).isSameAs(this.policy.engine());
		assertThat(ClientTtlHeader.NONE.policy("600", this.policy)).isSameAs(this.policy.engine());
	}

}
