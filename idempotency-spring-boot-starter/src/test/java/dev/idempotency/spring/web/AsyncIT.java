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

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Asynchronous handlers complete their key when the async dispatch ends.
 *
 * @author Idempotency contributors
 */
class AsyncIT extends AbstractWebIT {

	@ParameterizedTest
	@ValueSource(strings = { "callable", "deferred", "future" })
	void asyncHandlerRunsOnceAndIsReplayed(String handler) throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/async/" + handler, key, "");
		HttpResponse<byte[]> retry = post("/async/" + handler, key, "");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(text(first)).startsWith(handler + " 1 ");
		assertThat(first.headers().firstValue(IdempotencyFilter.EXPIRES_HEADER)).isPresent();
		assertThat(retry.statusCode()).isEqualTo(200);
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(retry.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
		assertThat(retry.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(this.counter.count(handler, key)).isEqualTo(1);
	}

	@Test
	void asyncErrorReleasesTheKey() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/async/deferred?fail=true", key, "");
		HttpResponse<byte[]> retry = post("/async/deferred?fail=true", key, "");
		assertThat(first.statusCode()).isEqualTo(500);
		assertThat(retry.statusCode()).isEqualTo(500);
		assertThat(retry.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).isEmpty();
		assertThat(this.counter.count("deferred", key)).isEqualTo(2);
	}

}
