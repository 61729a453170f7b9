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

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Callers that the scope sources tell apart never share a record, on a real server: a
 * tenant and a principal of the same name, an empty principal name and no principal, a
 * literal scope and the digest that stands for a long one.
 *
 * @author Idempotency contributors
 */
class ScopeNamespacesIT extends AbstractWebIT {

	@Test
	void tenantAndPrincipalOfTheSameNameHaveTheirOwnRecords() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> tenant = post("/payments", key, "{}", "X-Tenant", "alice");
		HttpResponse<byte[]> principal = post("/payments", key, "{}", "X-User", "alice");
		assertOwnExecutions(key, tenant, principal);
		assertThat(post("/payments", key, "{}", "X-Tenant", "alice").body()).isEqualTo(tenant.body());
		assertThat(post("/payments", key, "{}", "X-User", "alice").body()).isEqualTo(principal.body());
	}

	@Test
	void emptyPrincipalNameIsNotTheGlobalScope() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> anonymous = post("/payments", key, "{}");
		HttpResponse<byte[]> emptyName = post("/payments", key, "{}", "X-User", "");
		assertOwnExecutions(key, anonymous, emptyName);
		assertThat(post("/payments", key, "{}").body()).isEqualTo(anonymous.body());
		assertThat(post("/payments", key, "{}", "X-User", "").body()).isEqualTo(emptyName.body());
	}

	@Test
	void literalScopeNeverMeetsTheDigestOfALongOne() throws Exception {
		String key = newKey();
		// longer than IdempotencyKey.MAX_SCOPE_LENGTH: stored as a digest
		String longName = "u".repeat(1100);
		HttpResponse<byte[]> longPrincipal = post("/payments", key, "{}", "X-User", longName);
		// tenants whose literal scope is that digest, of the name or of the scope
		HttpResponse<byte[]> digestOfName = post("/payments", key, "{}", "X-Tenant", "sha256:" + sha256(longName));
		HttpResponse<byte[]> digestOfScope = post("/payments", key, "{}", "X-Tenant",
				"sha256:" + sha256("principal:" + longName));
		assertOwnExecutions(key, longPrincipal, digestOfName, digestOfScope);
		assertThat(post("/payments", key, "{}", "X-User", longName).body()).isEqualTo(longPrincipal.body());
	}

	private void assertOwnExecutions(String key, HttpResponse<?>... responses) {
		for (HttpResponse<?> response : responses) {
			assertThat(response.statusCode()).isEqualTo(201);
			assertThat(response.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).isEmpty();
		}
		assertThat(this.counter.count("payments", key)).isEqualTo(responses.length);
	}

	private static String sha256(String text) throws Exception {
		return HexFormat.of()
			.formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
	}

}
