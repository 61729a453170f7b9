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

import java.io.ByteArrayInputStream;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Malformed keys and bodies on a real server.
 *
 * @author Idempotency contributors
 */
class BadInputIT extends AbstractWebIT {

	private static final String INVALID = "idempotency-key-invalid";

	@Test
	void missingKeyIsRejected() throws Exception {
		HttpResponse<byte[]> response = post("/payments", null, "{}");
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(text(response)).contains("idempotency-key-missing");
	}

	@Test
	void emptyKeyIsInvalid() throws Exception {
		RawHttp.Response response = raw(RawHttp.ascii("Idempotency-Key: "), "");
		assertThat(response.status()).isEqualTo(400);
		assertThat(response.text()).contains(INVALID);
		assertThat(this.counter.count("payments", "")).isZero();
	}

	@Test
	void keyOf256CharactersIsInvalidAnd255AreAccepted() throws Exception {
		String tooLong = "k".repeat(255) + "x";
		HttpResponse<byte[]> rejected = post("/payments", tooLong, "{}");
		assertThat(rejected.statusCode()).isEqualTo(400);
		assertThat(text(rejected)).contains(INVALID);
		assertThat(this.counter.count("payments", tooLong)).isZero();
		String longest = newKey() + "k".repeat(255 - 36);
		assertThat(post("/payments", longest, "{}").statusCode()).isEqualTo(201);
		// quotes do not count towards the length
		String quoted = "\"" + newKey() + "q".repeat(255 - 36) + "\"";
		assertThat(post("/payments", quoted, "{}").statusCode()).isEqualTo(201);
	}

	@Test
	void nonAsciiKeyIsInvalid() throws Exception {
		RawHttp.Response response = raw(
				RawHttp.concat(RawHttp.ascii("Idempotency-Key: "), "schlüssel".getBytes(StandardCharsets.UTF_8)), "");
		assertThat(response.status()).isEqualTo(400);
		assertThat(response.text()).contains(INVALID);
	}

	@Test
	void controlCharactersInKeyAreInvalid() throws Exception {
		String key = "tab\there-" + newKey();
		RawHttp.Response tab = raw(RawHttp.ascii("Idempotency-Key: " + key), "");
		assertThat(tab.status()).isEqualTo(400);
		assertThat(tab.text()).contains(INVALID);
		assertThat(this.counter.count("payments", key)).isZero();
		String control = "ctl\u0001-" + newKey();
		RawHttp.Response rejected = raw(RawHttp.ascii("Idempotency-Key: " + control), "");
		// the container may refuse the header before the filter sees it: either way 400
		assertThat(rejected.status()).isEqualTo(400);
		assertThat(this.counter.count("payments", control)).isZero();
	}

	@Test
	void duplicatedKeyHeaderIsInvalid() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> twice = send(HttpRequest.newBuilder(uri("/payments"))
			.POST(BodyPublishers.ofString("{}"))
			.header(KEY, key)
			.header(KEY, key)
			.build());
		assertThat(twice.statusCode()).isEqualTo(400);
		assertThat(text(twice)).contains(INVALID);
		HttpResponse<byte[]> list = post("/payments", key + ", " + key, "{}");
		assertThat(list.statusCode()).isEqualTo(400);
		HttpResponse<byte[]> compactList = post("/payments", key + "," + key, "{}");
		assertThat(compactList.statusCode()).isEqualTo(400);
		HttpResponse<byte[]> parameters = post("/payments", "\"" + key + "\";a=1", "{}");
		assertThat(parameters.statusCode()).isEqualTo(400);
		assertThat(this.counter.count("payments", key)).isZero();
	}

	@Test
	void stringAndTokenFormsShareOneRecord() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> quoted = post("/payments", "\"" + key + "\"", "{}");
		HttpResponse<byte[]> bare = post("/payments", key, "{}");
		HttpResponse<byte[]> padded = post("/payments", " \"" + key + "\" ", "{}");
		assertThat(quoted.statusCode()).isEqualTo(201);
		assertThat(bare.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(bare.body()).isEqualTo(quoted.body());
		assertThat(padded.body()).isEqualTo(quoted.body());
		assertThat(this.counter.count("payments", "\"" + key + "\"")).isEqualTo(1);
		assertThat(this.counter.count("payments", key)).isZero();
	}

	@Test
	void escapedKeyIsEchoedAsValidJson() throws Exception {
		String suffix = newKey();
		String header = "\"q\\\"uo\\\\te-" + suffix + "\"";
		assertThat(post("/payments", header, "{\"a\":1}").statusCode()).isEqualTo(201);
		HttpResponse<byte[]> reused = post("/payments", header, "{\"a\":2}");
		assertThat(reused.statusCode()).isEqualTo(422);
		// the key is q"uo\te-...; in JSON both characters are escaped
		assertThat(text(reused)).contains("\"idempotencyKey\":\"q\\\"uo\\\\te-" + suffix + "\"");
	}

	@Test
	void malformedJsonBodyIsAStoredClientErrorNotAServerError() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> first = post("/json", key, "{not json", "Content-Type", "application/json");
		HttpResponse<byte[]> retry = post("/json", key, "{not json", "Content-Type", "application/json");
		assertThat(first.statusCode()).isEqualTo(400);
		assertThat(retry.statusCode()).isEqualTo(400);
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(retry.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(this.counter.count("json", key)).isZero();
		// canonical or raw, a valid body still works under another key
		HttpResponse<byte[]> valid = post("/json", newKey(), "{\"a\":1}", "Content-Type", "application/json");
		assertThat(valid.statusCode()).isEqualTo(200);
	}

	@Test
	void chunkedBodyOverTheLimitIsRejectedBeforeTheHandler() throws Exception {
		String key = newKey();
		HttpResponse<byte[]> response = send(HttpRequest.newBuilder(uri("/small"))
			.POST(BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(new byte[5000])))
			.header(KEY, key)
			.build());
		assertThat(response.statusCode()).isEqualTo(413);
		assertThat(text(response)).contains("idempotency-request-too-large");
		assertThat(this.counter.count("small", key)).isZero();
	}

	@Test
	void chunkedBodyUnderTheLimitIsTheSameRequestAsWithContentLength() throws Exception {
		String key = newKey();
		byte[] body = "hello chunks".getBytes(StandardCharsets.US_ASCII);
		HttpResponse<byte[]> chunked = send(HttpRequest.newBuilder(uri("/small"))
			.POST(BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(body)))
			.header(KEY, key)
			.build());
		HttpResponse<byte[]> sized = send(
				HttpRequest.newBuilder(uri("/small")).POST(BodyPublishers.ofByteArray(body)).header(KEY, key).build());
		assertThat(chunked.statusCode()).isEqualTo(200);
		assertThat(sized.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		assertThat(sized.body()).isEqualTo(chunked.body());
		assertThat(this.counter.count("small", key)).isEqualTo(1);
	}

	private RawHttp.Response raw(byte[] keyHeaderLine, String body) throws Exception {
		byte[] head = RawHttp.concat(RawHttp.ascii("POST /payments HTTP/1.1\r\nHost: localhost\r\n"), keyHeaderLine,
				RawHttp.ascii("\r\nContent-Type: application/json"));
		return RawHttp.exchange(this.port, head, body.getBytes(StandardCharsets.UTF_8));
	}

}
