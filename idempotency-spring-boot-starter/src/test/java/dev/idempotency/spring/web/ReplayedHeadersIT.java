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
import java.util.List;
import java.util.Locale;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.IdempotencyRecord;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.IdempotencyStore;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which response headers a replay carries, on a real server: CORS headers are the retry's
 * own, and headers that carry credentials are neither stored nor replayed.
 *
 * @author Idempotency contributors
 */
class ReplayedHeadersIT extends AbstractWebIT {

	private static final String ALLOW_ORIGIN = "Access-Control-Allow-Origin";

	@Autowired
	IdempotencyStore store;

	@Test
	void retryFromAnotherAllowedOriginGetsItsOwnCorsHeaders() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/payments", key, "{}", "Origin", ContractTestApplication.FIRST_ORIGIN);
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(first.headers().allValues(ALLOW_ORIGIN)).containsExactly(ContractTestApplication.FIRST_ORIGIN);
		HttpResponse<byte[]> retry = post("/payments", key, "{}", "Origin", ContractTestApplication.SECOND_ORIGIN);
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		// a browser at the second origin accepts the replay only with its own origin
		assertThat(retry.headers().allValues(ALLOW_ORIGIN)).containsExactly(ContractTestApplication.SECOND_ORIGIN);
		assertThat(retry.headers().allValues("Access-Control-Allow-Credentials")).containsExactly("true");
		assertThat(retry.headers().firstValue("Access-Control-Expose-Headers")).hasValue("X-Payment-Id");
		// and a retry without an origin (not a CORS request) gets none
		HttpResponse<byte[]> plain = post("/payments", key, "{}");
		assertThat(plain.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(plain.headers().map().keySet())
			.noneMatch((name) -> name.toLowerCase(Locale.ROOT).startsWith("access-control-"));
		assertThat(storedHeaderNames(key))
			.noneMatch((name) -> name.toLowerCase(Locale.ROOT).startsWith("access-control-"));
		assertThat(this.counter.count("payments", key)).isEqualTo(1);
	}

	@Test
	void headersThatCarryCredentialsAreNeitherStoredNorReplayed() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/tokens", key, "");
		assertThat(first.statusCode()).isEqualTo(200);
		// the first response is the handler's, untouched
		assertThat(first.headers().firstValue("Authorization")).hasValue("Bearer secret-1");
		assertThat(first.headers().firstValue("X-Auth-Token")).hasValue("token-1");
		assertThat(storedHeaderNames(key)).contains("X-Payment-Id")
			.doesNotContain("Authorization", "WWW-Authenticate", "X-Auth-Token", "X-Api-Key");
		HttpResponse<byte[]> replay = post("/tokens", key, "");
		assertThat(replay.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(replay.body()).isEqualTo(first.body());
		assertThat(replay.headers().firstValue("X-Payment-Id")).hasValue("p-1");
		for (String name : List.of("Authorization", "WWW-Authenticate", "X-Auth-Token", "X-Api-Key")) {
			assertThat(replay.headers().firstValue(name)).as(name).isEmpty();
		}
		assertThat(this.counter.count("tokens", key)).isEqualTo(1);
	}

	private List<String> storedHeaderNames(String key) {
		IdempotencyRecord record = this.store.find(IdempotencyKey.global(key)).orElseThrow();
		StoredResponse response = record.response();
		assertThat(response).isNotNull();
		return response.headers().stream().map(HttpHeader::name).toList();
	}

}
