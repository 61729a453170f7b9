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

package dev.idempotency.core;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link IdempotencyScopes}.
 *
 * @author Idempotency contributors
 */
class IdempotencyScopesTests {

	@Test
	void scopesNameTheirSource() {
		assertThat(IdempotencyScopes.header("acme")).isEqualTo("header:acme");
		assertThat(IdempotencyScopes.principal("alice")).isEqualTo("principal:alice");
		assertThat(IdempotencyScopes.custom("alice")).isEqualTo("custom:alice");
	}

	@Test
	void tenantAndPrincipalOfTheSameNameHaveTheirOwnScopes() {
		assertThat(IdempotencyScopes.header("alice")).isNotEqualTo(IdempotencyScopes.principal("alice"))
			.isNotEqualTo(IdempotencyScopes.custom("alice"));
		assertThat(IdempotencyScopes.principal("alice")).isNotEqualTo(IdempotencyScopes.custom("alice"));
	}

	@Test
	void emptyPrincipalNameIsNotTheGlobalScope() {
		assertThat(IdempotencyScopes.principal("")).isEqualTo("principal:");
		assertThat(IdempotencyScopes.principal(null)).isEqualTo("principal:");
		assertThat(IdempotencyScopes.principal("")).isNotEqualTo(IdempotencyKey.GLOBAL_SCOPE);
	}

	@Test
	void emptyCustomScopeIsTheGlobalScope() {
		assertThat(IdempotencyScopes.custom("")).isSameAs(IdempotencyKey.GLOBAL_SCOPE);
	}

	@Test
	void scopeThatFitsIsStoredAsItIs() {
		String scope = IdempotencyScopes.principal("u".repeat(IdempotencyKey.MAX_SCOPE_LENGTH - 10));
		assertThat(scope).hasSize(IdempotencyKey.MAX_SCOPE_LENGTH);
		assertThat(IdempotencyScopes.storable(scope)).isSameAs(scope);
		assertThat(IdempotencyScopes.storable(IdempotencyKey.GLOBAL_SCOPE)).isEmpty();
	}

	@Test
	void longScopeIsStoredAsTheDigestOfThePrefixedScope() throws Exception {
		String scope = IdempotencyScopes.header("ä".repeat(1100));
		String expected = "sha256:" + HexFormat.of()
			.formatHex(MessageDigest.getInstance("SHA-256").digest(scope.getBytes(StandardCharsets.UTF_8)));
		assertThat(IdempotencyScopes.storable(scope)).isEqualTo(expected);
		assertThat(new IdempotencyKey(IdempotencyScopes.storable(scope), "k").scope()).isEqualTo(expected);
	}

	@Test
	void digestsOfLongScopesHaveKnownValues() {
		// records already written are found again only while these values hold
		assertThat(IdempotencyScopes.storable(IdempotencyScopes.principal("u".repeat(1024))))
			.isEqualTo("sha256:a4a9dc37934d6eb3c0bfd2f5c9c511688034cb61292f2b766c6c1cc27cffbaa5");
		assertThat(IdempotencyScopes.storable(IdempotencyScopes.header("ä".repeat(1100))))
			.isEqualTo("sha256:9c82597b0bea0e02e45583479d7ca04e9979e478f78feec82e0507137737abd1");
	}

	@Test
	void literalScopeNeverMeetsADigest() {
		String digest = IdempotencyScopes.storable(IdempotencyScopes.principal("u".repeat(1024)));
		assertThat(IdempotencyScopes.header(digest)).isNotEqualTo(digest);
		assertThat(IdempotencyScopes.principal(digest)).isNotEqualTo(digest);
		assertThat(IdempotencyScopes.custom(digest)).isNotEqualTo(digest);
	}

	@Test
	void operationScopesAreApartFromRequestScopesAndFromEachOther() {
		assertThat(IdempotencyScopes.operation("PaymentService.pay", "principal:alice"))
			.isEqualTo("operation:PaymentService.pay/principal:alice");
		assertThat(IdempotencyScopes.operation("pay", IdempotencyKey.GLOBAL_SCOPE)).isEqualTo("operation:pay/")
			.isNotEqualTo(IdempotencyKey.GLOBAL_SCOPE);
		// the name cannot hold the '/' that ends it, so no two pairs meet
		assertThat(IdempotencyScopes.operation("a", "b/c")).isNotEqualTo(IdempotencyScopes.operation("b", "c"));
		assertThat(IdempotencyScopes.isOperationName("a/b")).isFalse();
	}

	@Test
	void operationNamesAreLettersDigitsAndFewMarks() {
		assertThat(IdempotencyScopes.isOperationName("Refunds.create_v2-$1")).isTrue();
		for (String name : new String[] { null, "", "a b", "a/b", "a:b", "é", "a|b" }) {
			assertThat(IdempotencyScopes.isOperationName(name)).as(String.valueOf(name)).isFalse();
		}
		assertThatIllegalArgumentException().isThrownBy(() -> IdempotencyScopes.operation("a/b", ""))
			.withMessageContaining("'a/b'");
	}

}
