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
import java.util.HexFormat;

import dev.idempotency.core.IdempotencyKey;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A completed record whose stored response cannot be decoded (corrupt, or written by a
 * later format version), on a real server and a real store: a retry is answered with the
 * {@code response-not-replayable} problem, never with {@code 503} and never by running
 * the handler again, also under a fail-open policy. Subclasses choose the store and write
 * the damaged response directly into it.
 *
 * @author Idempotency contributors
 */
abstract class AbstractUnreadableRecordIT extends AbstractWebIT {

	// what a later format version could look like: version 2, which this one cannot read
	static final byte[] FUTURE_RESPONSE = HexFormat.of().parseHex("0201" + "00c9" + "00" + "03" + "7b7d0a");

	static final String DETAIL = "The request with this key completed, but its stored response cannot be read, "
			+ "so it cannot be replayed.";

	/**
	 * Replace the stored response of a completed record, keeping its expiry.
	 * @param key the record's key
	 * @param response the bytes to store as its response
	 */
	abstract void replaceStoredResponse(IdempotencyKey key, byte[] response);

	@Test
	void retryOfARecordWithAnUnreadableResponseIsAnsweredNotReplayable() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/payments", key, "{}");
		assertThat(first.statusCode()).isEqualTo(201);
		replaceStoredResponse(IdempotencyKey.global(key), FUTURE_RESPONSE);
		for (int i = 0; i < 2; i++) {
			HttpResponse<byte[]> retry = post("/payments", key, "{}");
			assertThat(retry.statusCode()).isEqualTo(410);
			assertThat(retry.headers().firstValue("Content-Type")).hasValue("application/problem+json");
			assertThat(text(retry)).isEqualTo(
					problem("response-not-replayable", 410, "Response not replayable", DETAIL, "/payments", key));
			assertThat(retry.headers().firstValue(IdempotencyFilter.EXPIRES_HEADER)).isPresent();
		}
		// a request that is not the same is still told so
		assertThat(post("/payments", key, "{\"other\":1}").statusCode()).isEqualTo(422);
		assertThat(this.counter.count("payments", key)).isEqualTo(1);
	}

	@Test
	void failOpenPolicyDoesNotRunTheHandlerAgain() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/open", key, "");
		assertThat(text(first)).isEqualTo("open 1");
		replaceStoredResponse(IdempotencyKey.global(key), FUTURE_RESPONSE);
		HttpResponse<byte[]> retry = post("/open", key, "");
		assertThat(retry.statusCode()).isEqualTo(410);
		assertThat(text(retry))
			.isEqualTo(problem("response-not-replayable", 410, "Response not replayable", DETAIL, "/open", key));
		assertThat(this.counter.count("open", key)).isEqualTo(1);
	}

}
