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

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code sendError} responses, rendered by Spring Boot's error page in the error
 * dispatch, are stored and replayed byte for byte, unless their status is not storable.
 *
 * @author Idempotency contributors
 */
class ErrorPageIT extends AbstractWebIT {

	@Test
	void sendErrorWithErrorPageIsReplayed() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/send-error/404", key, "");
		assertThat(first.statusCode()).isEqualTo(404);
		assertThat(text(first)).contains("\"status\":404").contains("\"path\":\"/send-error/404\"");
		assertThat(first.headers().firstValue(IdempotencyFilter.EXPIRES_HEADER)).isPresent();
		Thread.sleep(1100);
		HttpResponse<byte[]> retry = post("/send-error/404", key, "");
		assertThat(retry.statusCode()).isEqualTo(404);
		// Boot's error body has a timestamp: identical bytes prove it was replayed
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(retry.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
		assertThat(retry.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(this.counter.count("send-error", key)).isEqualTo(1);
	}

	@Test
	void responseStatusExceptionIsReplayed() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/not-found", key, "");
		Thread.sleep(1100);
		HttpResponse<byte[]> retry = post("/not-found", key, "");
		assertThat(first.statusCode()).isEqualTo(404);
		assertThat(retry.statusCode()).isEqualTo(404);
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(retry.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(this.counter.count("not-found", key)).isEqualTo(1);
	}

	@Test
	void sendErrorWithNonStorableStatusIsReleased() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/send-error/503", key, "");
		HttpResponse<byte[]> retry = post("/send-error/503", key, "");
		assertThat(first.statusCode()).isEqualTo(503);
		assertThat(text(first)).contains("\"status\":503");
		assertThat(first.headers().firstValue(IdempotencyFilter.EXPIRES_HEADER)).isEmpty();
		assertThat(retry.statusCode()).isEqualTo(503);
		assertThat(retry.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).isEmpty();
		assertThat(this.counter.count("send-error", key)).isEqualTo(2);
	}

}
