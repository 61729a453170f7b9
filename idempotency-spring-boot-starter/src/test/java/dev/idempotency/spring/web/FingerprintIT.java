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

import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What makes two requests with one key the same request, with the default fingerprinter.
 *
 * @author Idempotency contributors
 */
class FingerprintIT extends AbstractWebIT {

	private static final String JSON = "application/json";

	@Test
	void jsonMemberOrderAndWhitespaceDoNotMatterByDefault() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/payments", key, "{\"amount\":10,\"currency\":\"EUR\"}", "Content-Type",
				JSON);
		HttpResponse<byte[]> reordered = post("/payments", key, "{ \"currency\" : \"EUR\",\n \"amount\" : 10 }",
				"Content-Type", JSON);
		assertThat(reordered.statusCode()).isEqualTo(201);
		assertThat(reordered.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(reordered.body()).isEqualTo(first.body());
		HttpResponse<byte[]> changed = post("/payments", key, "{\"amount\":11,\"currency\":\"EUR\"}", "Content-Type",
				JSON);
		assertThat(changed.statusCode()).isEqualTo(422);
	}

	@Test
	void jsonInAnotherCharsetIsComparedByItsBytes() throws Exception {
		String key = newKey();
		String latin1 = "application/json; charset=ISO-8859-1";
		// the handler reads the bytes C3 A9 as two characters here, the escape as one
		HttpResponse<byte[]> first = post("/payments", key, "{\"name\":\"\u00e9\"}", "Content-Type", latin1);
		assertThat(first.statusCode()).isEqualTo(201);
		HttpResponse<byte[]> escaped = post("/payments", key, "{\"name\":\"\\u00e9\"}", "Content-Type", latin1);
		assertThat(escaped.statusCode()).isEqualTo(422);
		HttpResponse<byte[]> same = post("/payments", key, "{\"name\":\"\u00e9\"}", "Content-Type", latin1);
		assertThat(same.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(this.counter.count("payments", key)).isEqualTo(1);
		// declared as UTF-8, the two are one document
		String utf8Key = newKey();
		String utf8 = "application/json;charset=UTF-8";
		post("/payments", utf8Key, "{\"name\":\"\u00e9\",\"n\":1}", "Content-Type", utf8);
		HttpResponse<byte[]> equivalent = post("/payments", utf8Key, "{ \"n\":1, \"name\":\"\\u00e9\"}", "Content-Type",
				utf8);
		assertThat(equivalent.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
	}

	@Test
	void invalidUtf8IsComparedByItsBytes() throws Exception {
		String key = newKey();
		// C0 AF is an overlong form of '/': not UTF-8, and not the same request as '/'
		byte[] overlong = { '{', '"', 'p', '"', ':', '"', (byte) 0xC0, (byte) 0xAF, '"', '}' };
		HttpResponse<byte[]> first = send(HttpRequest.newBuilder(uri("/payments"))
			.POST(BodyPublishers.ofByteArray(overlong))
			.header(KEY, key)
			.header("Content-Type", JSON)
			.build());
		assertThat(first.statusCode()).isEqualTo(201);
		HttpResponse<byte[]> slash = post("/payments", key, "{\"p\":\"/\"}", "Content-Type", JSON);
		assertThat(slash.statusCode()).isEqualTo(422);
		assertThat(this.counter.count("payments", key)).isEqualTo(1);
	}

	@Test
	void excludedJsonPointerIsLeftOut() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/json/lenient", key, "{\"amount\":10,\"sentAt\":\"10:00\"}", "Content-Type",
				JSON);
		HttpResponse<byte[]> resent = post("/json/lenient", key, "{\"amount\":10,\"sentAt\":\"10:05\"}", "Content-Type",
				JSON);
		assertThat(resent.body()).isEqualTo(first.body());
		assertThat(resent.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(
				post("/json/lenient", key, "{\"amount\":12,\"sentAt\":\"10:05\"}", "Content-Type", JSON).statusCode())
			.isEqualTo(422);
		assertThat(this.counter.count("lenient", key)).isEqualTo(1);
	}

	@Test
	void rawPolicyComparesBytes() throws Exception {
		String key = newKey();
		post("/json/raw", key, "{\"a\":1,\"b\":2}", "Content-Type", JSON);
		HttpResponse<byte[]> reordered = post("/json/raw", key, "{\"b\":2,\"a\":1}", "Content-Type", JSON);
		assertThat(reordered.statusCode()).isEqualTo(422);
		assertThat(this.counter.count("raw", key)).isEqualTo(1);
	}

	@Test
	void configuredHeaderTakesPart() throws Exception {
		String key = newKey();
		post("/payments", key, "{}", "X-Account", "1");
		HttpResponse<byte[]> otherAccount = post("/payments", key, "{}", "X-Account", "2");
		assertThat(otherAccount.statusCode()).isEqualTo(422);
		HttpResponse<byte[]> sameAccount = post("/payments", key, "{}", "X-Account", "1");
		assertThat(sameAccount.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
	}

}
