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

package dev.idempotency.core.fingerprint;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.RequestFingerprint;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNullPointerException;

/**
 * Tests for {@link Sha256RequestFingerprinter}.
 *
 * @author Idempotency contributors
 */
class Sha256RequestFingerprinterTests {

	private static final String JSON = "application/json";

	private final Sha256RequestFingerprinter fingerprinter = new Sha256RequestFingerprinter();

	@Test
	void jacksonIsAvailableInTheseTests() {
		assertThat(Sha256RequestFingerprinter.isJsonCanonicalizationAvailable()).isTrue();
	}

	@Test
	void hashesTheDocumentedFraming() throws Exception {
		FingerprintInput input = new FingerprintInput("POST", "/payments/\u00e9", "a=1&b=2",
				"text/plain; charset=utf-8", List.of(new HttpHeader("X-Tenant", "t1"), new HttpHeader("Accept", "*/*"),
						new HttpHeader("x-tenant", "t0")),
				ByteBuffer.wrap(bytes("{\"b\":1,\"a\":2}")));
		ByteArrayOutputStream stream = new ByteArrayOutputStream();
		DataOutputStream data = new DataOutputStream(stream);
		data.write(bytes("dev.idempotency.fingerprint.v1"));
		data.write('M');
		writeString(data, "POST");
		data.write('P');
		writeString(data, "/payments/\u00e9");
		data.write('Q');
		data.write(1);
		writeString(data, "a=1&b=2");
		data.write('C');
		data.write(1);
		writeString(data, "text/plain; charset=utf-8");
		data.write('H');
		data.writeInt(3);
		writeString(data, "accept");
		writeString(data, "*/*");
		writeString(data, "x-tenant");
		writeString(data, "t1");
		writeString(data, "x-tenant");
		writeString(data, "t0");
		data.write('B');
		data.write('R');
		data.writeInt(13);
		data.write(bytes("{\"b\":1,\"a\":2}"));
		byte[] expected = MessageDigest.getInstance("SHA-256").digest(stream.toByteArray());
		assertThat(this.fingerprinter.fingerprint(input)).isEqualTo(RequestFingerprint.of(expected));
	}

	@Test
	void hashesTheDocumentedFramingOfCanonicalJsonAndAbsentParts() throws Exception {
		FingerprintInput input = new FingerprintInput("PUT", "/", null, null, List.of(), ByteBuffer.allocate(0));
		ByteArrayOutputStream stream = new ByteArrayOutputStream();
		DataOutputStream data = new DataOutputStream(stream);
		data.write(bytes("dev.idempotency.fingerprint.v1"));
		data.write('M');
		writeString(data, "PUT");
		data.write('P');
		writeString(data, "/");
		data.write('Q');
		data.write(0);
		data.write('C');
		data.write(0);
		data.write('H');
		data.writeInt(0);
		data.write('B');
		data.write('R');
		data.writeInt(0);
		assertThat(this.fingerprinter.fingerprint(input))
			.isEqualTo(RequestFingerprint.of(MessageDigest.getInstance("SHA-256").digest(stream.toByteArray())));
		FingerprintInput json = new FingerprintInput("PUT", "/", null, JSON, List.of(),
				ByteBuffer.wrap(bytes(" { \"b\" : 1 , \"a\" : \"\\u00e9\" } ")));
		stream.reset();
		data.write(bytes("dev.idempotency.fingerprint.v1"));
		data.write('M');
		writeString(data, "PUT");
		data.write('P');
		writeString(data, "/");
		data.write('Q');
		data.write(0);
		data.write('C');
		data.write(1);
		writeString(data, JSON);
		data.write('H');
		data.writeInt(0);
		data.write('B');
		data.write('J');
		byte[] canonical = bytes("{\"a\":\"\u00e9\",\"b\":1}");
		data.writeInt(canonical.length);
		data.write(canonical);
		assertThat(this.fingerprinter.fingerprint(json))
			.isEqualTo(RequestFingerprint.of(MessageDigest.getInstance("SHA-256").digest(stream.toByteArray())));
	}

	@Test
	void isDeterministicAcrossInstances() {
		FingerprintInput input = json("{\"amount\":100,\"currency\":\"EUR\"}");
		RequestFingerprint first = new Sha256RequestFingerprinter().fingerprint(input);
		RequestFingerprint second = new Sha256RequestFingerprinter().fingerprint(input);
		assertThat(first).isEqualTo(second);
		assertThat(this.fingerprinter.fingerprint(input)).isEqualTo(first);
	}

	@Test
	void ignoresJsonMemberOrder() {
		assertSameJson("{\"amount\":100,\"currency\":\"EUR\"}", "{\"currency\":\"EUR\",\"amount\":100}");
	}

	@Test
	void ignoresJsonWhitespace() {
		assertSameJson("{\"amount\":100,\"tags\":[1,2]}", " {\n\t\"amount\" : 100 ,\r\n \"tags\" : [ 1 , 2 ] }\n");
	}

	@Test
	void ignoresStringEscapes() {
		assertSameJson("{\"name\":\"\u00e9\"}", "{\"name\":\"\\u00e9\"}");
		assertSameJson("{\"name\":\"\u00e9\"}", "{\"name\":\"\\u00E9\"}");
		assertSameJson("{\"path\":\"/a\"}", "{\"path\":\"\\/a\"}");
		assertSameJson("{\"a\":\"\\n\"}", "{\"a\":\"\\u000a\"}");
		assertSameJson("{\"\u00e9\":1}", "{\"\\u00e9\":1}");
		assertSameJson("[\"\ud83d\ude00\"]", "[\"\\ud83d\\ude00\"]");
	}

	@Test
	void ignoresOrderInNestedObjects() {
		assertSameJson("{\"a\":{\"x\":1,\"y\":{\"p\":[{\"m\":1,\"n\":2}],\"q\":2}},\"b\":0}",
				"{\"b\":0,\"a\":{\"y\":{\"q\":2,\"p\":[{\"n\":2,\"m\":1}]},\"x\":1}}");
	}

	@Test
	void changedValueChangesFingerprint() {
		assertDifferentJson("{\"amount\":100}", "{\"amount\":101}");
		assertDifferentJson("{\"amount\":100}", "{\"amount\":\"100\"}");
		assertDifferentJson("{\"a\":{\"b\":true}}", "{\"a\":{\"b\":false}}");
		assertDifferentJson("{\"a\":null}", "{}");
		assertDifferentJson("{\"a\":1}", "{\"A\":1}");
		assertDifferentJson("{\"a\":\"x\"}", "{\"a\":\"x \"}");
	}

	@Test
	void changedArrayOrderChangesFingerprint() {
		assertDifferentJson("{\"items\":[1,2]}", "{\"items\":[2,1]}");
		assertDifferentJson("[{\"a\":1},{\"b\":2}]", "[{\"b\":2},{\"a\":1}]");
	}

	@Test
	void keepsBigNumbersApart() {
		assertDifferentJson("{\"amount\":12345678901234567890.123}", "{\"amount\":12345678901234567890.124}");
		assertDifferentJson("{\"amount\":12345678901234567890.123}", "{\"amount\":12345678901234567000}");
		assertDifferentJson("{\"amount\":12345678901234567890.123}", "{\"amount\":1.2345678901234567E19}");
		assertDifferentJson("{\"id\":9007199254740993}", "{\"id\":9007199254740992}");
		assertDifferentJson("{\"amount\":0.1}", "{\"amount\":0.10000000000000001}");
	}

	@Test
	void keepsNumberFormsApart() {
		assertDifferentJson("{\"amount\":1}", "{\"amount\":1.0}");
		assertDifferentJson("{\"amount\":1.0}", "{\"amount\":1.00}");
		assertDifferentJson("{\"amount\":100}", "{\"amount\":1e2}");
		assertDifferentJson("{\"amount\":0}", "{\"amount\":-0}");
	}

	@Test
	void ignoresExcludedPointer() {
		this.fingerprinter.setExcludedJsonPointers(List.of("/metadata/requestTime"));
		assertSameJson("{\"amount\":1,\"metadata\":{\"requestTime\":\"2026-01-01T00:00:00Z\",\"source\":\"app\"}}",
				"{\"metadata\":{\"source\":\"app\",\"requestTime\":\"2026-01-02T10:11:12Z\"},\"amount\":1}");
		assertSameJson("{\"amount\":1,\"metadata\":{\"requestTime\":1,\"source\":\"app\"}}",
				"{\"amount\":1,\"metadata\":{\"source\":\"app\"}}");
		assertDifferentJson("{\"amount\":1,\"metadata\":{\"requestTime\":1,\"source\":\"app\"}}",
				"{\"amount\":1,\"metadata\":{\"requestTime\":1,\"source\":\"web\"}}");
		assertDifferentJson("{\"amount\":1,\"metadata\":{\"requestTime\":1}}",
				"{\"amount\":2,\"metadata\":{\"requestTime\":1}}");
	}

	@Test
	void ignoresExcludedPointerIntoArray() {
		this.fingerprinter.setExcludedJsonPointers(List.of("/items/0/clientRef"));
		assertSameJson("{\"items\":[{\"sku\":\"a\",\"clientRef\":\"r1\"},{\"sku\":\"b\",\"clientRef\":\"r2\"}]}",
				"{\"items\":[{\"clientRef\":\"other\",\"sku\":\"a\"},{\"sku\":\"b\",\"clientRef\":\"r2\"}]}");
		assertDifferentJson("{\"items\":[{\"sku\":\"a\",\"clientRef\":\"r1\"},{\"sku\":\"b\",\"clientRef\":\"r2\"}]}",
				"{\"items\":[{\"sku\":\"a\",\"clientRef\":\"r1\"},{\"sku\":\"b\",\"clientRef\":\"other\"}]}");
		assertDifferentJson("{\"items\":[{\"sku\":\"a\",\"clientRef\":\"r1\"}]}",
				"{\"items\":[{\"sku\":\"x\",\"clientRef\":\"r1\"}]}");
	}

	@Test
	void ignoresExcludedPointerWithEscapes() {
		this.fingerprinter.setExcludedJsonPointers(List.of("/a~1b/c~0d"));
		assertSameJson("{\"a/b\":{\"c~d\":1,\"e\":2}}", "{\"a/b\":{\"c~d\":2,\"e\":2}}");
		assertDifferentJson("{\"a/b\":{\"c~d\":1,\"e\":2}}", "{\"a/b\":{\"c~d\":1,\"e\":3}}");
	}

	@Test
	void rejectsInvalidPointersAndKeepsTheSettings() {
		this.fingerprinter.setExcludedJsonPointers(List.of("/a"));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.fingerprinter.setExcludedJsonPointers(List.of("/ok", "no-slash")))
			.withMessageContaining("'no-slash'")
			.withMessageContaining("must start with '/'");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.fingerprinter.setExcludedJsonPointers(List.of("/a~2")))
			.withMessageContaining("'/a~2'");
		assertThatIllegalArgumentException().isThrownBy(() -> this.fingerprinter.setExcludedJsonPointers(List.of("")))
			.withMessageContaining("whole body");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.fingerprinter.setExcludedJsonPointers(Arrays.asList("/a", null)))
			.withMessageContaining("null");
		assertThatNullPointerException().isThrownBy(() -> this.fingerprinter.setExcludedJsonPointers(null))
			.withMessageContaining("excludedJsonPointers");
		assertThat(this.fingerprinter.getExcludedJsonPointers()).containsExactly("/a");
		assertSameJson("{\"a\":1,\"b\":2}", "{\"a\":3,\"b\":2}");
	}

	@Test
	void copiesThePointers() {
		List<String> pointers = new ArrayList<>(List.of("/a"));
		this.fingerprinter.setExcludedJsonPointers(pointers);
		pointers.add("/b");
		assertThat(this.fingerprinter.getExcludedJsonPointers()).containsExactly("/a");
		assertDifferentJson("{\"b\":1}", "{\"b\":2}");
	}

	@Test
	void fallsBackToRawBytesForInvalidJson() {
		assertRaw("{\"amount\":");
		assertRaw("{\"amount\":1");
		assertRaw("{\"amount\":1}garbage");
		assertRaw("{\"amount\":1} {\"amount\":2}");
		assertRaw("{'amount':1}");
		assertRaw("not json at all");
		assertRaw("   ");
		assertRaw("{\"a\":1,\"a\":2}");
		assertRaw("[".repeat(100_000));
		assertRaw("[".repeat(100_000) + "]".repeat(100_000));
		assertRaw("{\"a\":".repeat(50_000) + "1" + "}".repeat(50_000));
		assertRawBytes(new byte[] { '{', '"', (byte) 0xFF, '"', ':', '1', '}' });
	}

	@Test
	void keepsMemberOrderOfBodiesThatFallBack() {
		assertDifferentJson("{\"a\":1,\"b\":2,\"a\":3}", "{\"b\":2,\"a\":1,\"a\":3}");
		assertDifferentJson("{\"b\":1,\"a\":2} x", "{\"a\":2,\"b\":1} x");
	}

	@Test
	void canonicalisesUpToTheDepthLimitOnly() {
		int limit = JsonCanonicalizer.MAX_DEPTH;
		assertSameJson("[".repeat(limit) + "]".repeat(limit), "[ ".repeat(limit) + "]".repeat(limit));
		assertDifferentJson("[".repeat(limit + 1) + "]".repeat(limit + 1),
				"[ ".repeat(limit + 1) + "]".repeat(limit + 1));
		assertRaw("[ ".repeat(limit + 1) + "]".repeat(limit + 1));
	}

	@Test
	void hashesEmptyBody() {
		FingerprintInput empty = input("POST", "/p", null, JSON, List.of(), new byte[0]);
		assertThat(this.fingerprinter.fingerprint(empty)).isEqualTo(raw().fingerprint(empty));
		assertThat(this.fingerprinter.fingerprint(empty)).isNotEqualTo(this.fingerprinter.fingerprint(json("{}")));
		assertThat(this.fingerprinter.fingerprint(empty))
			.isNotEqualTo(this.fingerprinter.fingerprint(input("POST", "/p", null, JSON, List.of(), bytes(" "))));
	}

	@Test
	void hashesNonJsonContentAsRawBytes() {
		for (String contentType : Arrays.asList(null, "text/plain", "application/x-www-form-urlencoded",
				"application/jsonx", "text/json", "application/json-seq", "application/+json")) {
			FingerprintInput first = input("POST", "/p", null, contentType, List.of(), bytes("{\"a\":1,\"b\":2}"));
			FingerprintInput second = input("POST", "/p", null, contentType, List.of(), bytes("{\"b\":2,\"a\":1}"));
			assertThat(this.fingerprinter.fingerprint(first)).as(String.valueOf(contentType))
				.isNotEqualTo(this.fingerprinter.fingerprint(second))
				.isEqualTo(raw().fingerprint(first));
		}
	}

	@Test
	void canonicalisesEveryJsonContentType() {
		for (String contentType : List.of("application/json", "APPLICATION/JSON", "application/json;charset=UTF-8",
				"application/json; charset=utf-8", " application/json ", "application/problem+json",
				"application/vnd.example.payment+JSON; version=2", "application/merge-patch+json")) {
			FingerprintInput first = input("POST", "/p", null, contentType, List.of(), bytes("{\"a\":1,\"b\":2}"));
			FingerprintInput second = input("POST", "/p", null, contentType, List.of(), bytes("{\"b\":2,\"a\":1}"));
			assertThat(this.fingerprinter.fingerprint(first)).as(contentType)
				.isEqualTo(this.fingerprinter.fingerprint(second));
		}
	}

	@Test
	void hashesJsonDeclaredInAnotherCharsetAsRawBytes() {
		// Spring decodes such a body with the declared charset: in ISO-8859-1 the bytes
		// C3 A9 are two characters and the escape \u00e9 is one, so they are different
		// requests although both are the same document once decoded as UTF-8
		String latin1 = "application/json; charset=ISO-8859-1";
		FingerprintInput twoCharacters = input("POST", "/p", null, latin1, List.of(), bytes("{\"a\":\"\u00e9\"}"));
		FingerprintInput oneCharacter = input("POST", "/p", null, latin1, List.of(), bytes("{\"a\":\"\\u00e9\"}"));
		assertThat(this.fingerprinter.fingerprint(twoCharacters))
			.isNotEqualTo(this.fingerprinter.fingerprint(oneCharacter));
		for (String contentType : List.of(latin1, "application/json;charset=windows-1252",
				"application/json; charset=UTF-16", "application/json; charset=utf8",
				"application/problem+json; charset=\"ISO-8859-1\"", "application/json; charset=utf-8; charset=latin1",
				"application/json; x=\"a;b\"; charset=us-ascii", "application/json; charset=\"utf-8",
				"application/json; charset", "application/json; charset=\"utf\\-8\"")) {
			FingerprintInput first = input("POST", "/p", null, contentType, List.of(), bytes("{\"a\":1,\"b\":2}"));
			FingerprintInput second = input("POST", "/p", null, contentType, List.of(), bytes("{\"b\":2,\"a\":1}"));
			assertThat(this.fingerprinter.fingerprint(first)).as(contentType)
				.isNotEqualTo(this.fingerprinter.fingerprint(second))
				.isEqualTo(raw().fingerprint(first));
		}
	}

	@Test
	void canonicalisesJsonDeclaredAsUtf8() {
		for (String contentType : List.of("application/json;charset=utf-8", "application/json; Charset=\"UTF-8\"",
				"application/json; version=2; charset=utf-8", "application/json; x=\"charset=latin1\"",
				"application/json; x=\"a\\\";charset=latin1\"; charset=utf-8", "application/json ; charset = UTF-8 ",
				"application/json;")) {
			FingerprintInput first = input("POST", "/p", null, contentType, List.of(), bytes("{\"a\":1,\"b\":2}"));
			FingerprintInput second = input("POST", "/p", null, contentType, List.of(), bytes("{\"b\":2,\"a\":1}"));
			assertThat(this.fingerprinter.fingerprint(first)).as(contentType)
				.isEqualTo(this.fingerprinter.fingerprint(second));
		}
	}

	@Test
	void hashesInvalidUtf8AsRawBytes() {
		// overlong forms of '/', a surrogate, beyond U+10FFFF, bytes that never occur,
		// truncated sequences, a lone continuation byte
		for (int[] sequence : new int[][] { { 0xC0, 0xAF }, { 0xC1, 0xBF }, { 0xE0, 0x80, 0xAF },
				{ 0xF0, 0x80, 0x80, 0xAF }, { 0xED, 0xA0, 0x80 }, { 0xED, 0xBF, 0xBF }, { 0xF4, 0x90, 0x80, 0x80 },
				{ 0xF5, 0x80, 0x80, 0x80 }, { 0xFE }, { 0xFF }, { 0xE2, 0x82 }, { 0xF0, 0x9F, 0x98 }, { 0xC3 },
				{ 0x80 }, { 0xC3, 0xC3, 0xA9 } }) {
			byte[] body = concat(bytes("{\"a\":\""), sequence, bytes("\"}"));
			assertRawBytes(body);
		}
		assertRawBytes(concat(bytes("{\"a\":\"x\"}"), new int[] { 0xE2, 0x82 }));
		// a byte order mark, and NUL (UTF-16 or UTF-32 would be detected by the parser)
		assertRawBytes(concat(new int[] { 0xEF, 0xBB, 0xBF }, bytes("{\"a\":1}")));
		assertRawBytes(concat(new int[] { 0x00, '{', 0x00, '}' }, new byte[0]));
		assertRawBytes(concat(new int[] { '{', 0x00, '}', 0x00 }, new byte[0]));
		// so the overlong slash is not the same request as a slash
		assertThat(this.fingerprinter
			.fingerprint(json(concat(bytes("{\"a\":\""), new int[] { 0xC0, 0xAF }, bytes("\"}")))))
			.isNotEqualTo(this.fingerprinter.fingerprint(json("{\"a\":\"/\"}")));
	}

	@Test
	void canonicalisesEveryValidUtf8Sequence() {
		// the shortest and longest sequence of each length, and the code
		// points around the surrogates, each the same as its escaped form
		for (int codePoint : new int[] { 0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFD, 0xFFFF, 0x10000,
				0x10FFFF }) {
			String character = new String(Character.toChars(codePoint));
			StringBuilder escaped = new StringBuilder();
			for (char c : character.toCharArray()) {
				escaped.append(String.format("\\u%04x", (int) c));
			}
			assertSameJson("{\"a\":\"" + character + "\",\"b\":1}", "{\"b\":1,\"a\":\"" + escaped + "\"}");
			assertSameJson("{\"" + character + "\":1,\"b\":1}", "{\"b\":1,\"" + escaped + "\":1}");
		}
	}

	@Test
	void rawModeHashesBytesAsReceived() {
		Sha256RequestFingerprinter raw = raw();
		raw.setExcludedJsonPointers(List.of("/a"));
		assertThat(raw.isCanonicalizeJson()).isFalse();
		assertThat(raw.fingerprint(json("{\"a\":1,\"b\":2}"))).isNotEqualTo(raw.fingerprint(json("{\"b\":2,\"a\":1}")));
		assertThat(raw.fingerprint(json("{\"a\":1}"))).isNotEqualTo(raw.fingerprint(json("{ \"a\":1}")));
		assertThat(raw.fingerprint(json("{\"a\":1,\"b\":2}"))).isNotEqualTo(raw.fingerprint(json("{\"a\":3,\"b\":2}")));
		assertThat(raw.fingerprint(json("{\"a\":1}"))).isEqualTo(raw().fingerprint(json("{\"a\":1}")));
	}

	@Test
	void canonicalAndRawBodiesNeverMeet() {
		// the same bytes, once canonical and once raw, give different streams
		assertThat(this.fingerprinter.fingerprint(json("{\"a\":1}")))
			.isNotEqualTo(raw().fingerprint(json("{\"a\":1}")));
	}

	@Test
	void framesEveryPartUnambiguously() {
		List<FingerprintInput> inputs = List.of(input("GET", "/ab", null, null, List.of(), new byte[0]),
				input("GET", "/a", "b", null, List.of(), new byte[0]),
				input("GET", "/a", "", null, List.of(), new byte[0]),
				input("GET", "/a", null, null, List.of(), new byte[0]),
				input("GET", "/a", null, "", List.of(), new byte[0]),
				input("GET", "/a", null, "b", List.of(), new byte[0]),
				input("GET", "/a", "b", "", List.of(), new byte[0]),
				input("GET", "/a", "", "b", List.of(), new byte[0]),
				input("GET", "/a", null, null, List.of(), bytes("b")),
				input("GET", "/a", null, null, List.of(new HttpHeader("b", "")), new byte[0]),
				input("GET", "/a", null, null, List.of(new HttpHeader("x", "b")), new byte[0]),
				input("GET", "/a", null, null, List.of(new HttpHeader("xb", "")), new byte[0]),
				input("GET", "/a", null, null, List.of(new HttpHeader("x", "")), bytes("b")),
				input("GET", "/a", null, null, List.of(new HttpHeader("x", ""), new HttpHeader("x", "b")), new byte[0]),
				input("GET", "/a", null, null, List.of(new HttpHeader("x", "b"), new HttpHeader("x", "")), new byte[0]),
				input("GETb", "/a", null, null, List.of(), new byte[0]),
				input("GE", "T/a", null, null, List.of(), new byte[0]),
				input("POST", "/a", null, null, List.of(), new byte[0]),
				input("post", "/a", null, null, List.of(), new byte[0]),
				input("GET", "/A", null, null, List.of(), new byte[0]),
				input("GET", "/a?b", null, null, List.of(), new byte[0]),
				input("GET", "/a", null, null, List.of(new HttpHeader("x", "B")), new byte[0]));
		Set<RequestFingerprint> fingerprints = new HashSet<>();
		for (FingerprintInput input : inputs) {
			fingerprints.add(this.fingerprinter.fingerprint(input));
		}
		assertThat(fingerprints).hasSameSizeAs(inputs);
	}

	@Test
	void comparesHeaderNamesIgnoringCase() {
		assertThat(this.fingerprinter.fingerprint(headers(new HttpHeader("X-Tenant", "acme"))))
			.isEqualTo(this.fingerprinter.fingerprint(headers(new HttpHeader("x-tenant", "acme"))))
			.isEqualTo(this.fingerprinter.fingerprint(headers(new HttpHeader("X-TENANT", "acme"))))
			.isNotEqualTo(this.fingerprinter.fingerprint(headers(new HttpHeader("X-Tenant", "ACME"))));
	}

	@Test
	void ignoresOrderOfDifferentHeaders() {
		HttpHeader tenant = new HttpHeader("X-Tenant", "acme");
		HttpHeader language = new HttpHeader("Accept-Language", "fr");
		HttpHeader version = new HttpHeader("api-version", "2");
		assertThat(this.fingerprinter.fingerprint(headers(tenant, language, version)))
			.isEqualTo(this.fingerprinter.fingerprint(headers(version, tenant, language)))
			.isEqualTo(this.fingerprinter.fingerprint(headers(language, version, tenant)));
	}

	@Test
	void keepsOrderOfValuesOfOneHeader() {
		HttpHeader first = new HttpHeader("X-Tag", "a");
		HttpHeader second = new HttpHeader("x-tag", "b");
		HttpHeader other = new HttpHeader("Accept", "*/*");
		assertThat(this.fingerprinter.fingerprint(headers(first, other, second)))
			.isEqualTo(this.fingerprinter.fingerprint(headers(other, first, second)))
			.isNotEqualTo(this.fingerprinter.fingerprint(headers(second, other, first)));
	}

	@Test
	void readsBodyRangeWithoutMovingTheBuffer() {
		byte[] array = bytes("xx{\"b\":1,\"a\":2}yy");
		FingerprintInput range = FingerprintInput.of("POST", "/p", null, JSON, List.of(), array, 2, array.length - 4);
		ByteBuffer direct = ByteBuffer.allocateDirect(array.length);
		direct.put(array).position(2).limit(array.length - 2);
		FingerprintInput directInput = new FingerprintInput("POST", "/p", null, JSON, List.of(), direct);
		RequestFingerprint expected = this.fingerprinter
			.fingerprint(input("POST", "/p", null, JSON, List.of(), bytes("{\"a\":2,\"b\":1}")));
		assertThat(this.fingerprinter.fingerprint(range)).isEqualTo(expected);
		assertThat(this.fingerprinter.fingerprint(directInput)).isEqualTo(expected);
		assertThat(range.body().position()).isEqualTo(2);
		assertThat(directInput.body().position()).isEqualTo(2);
		FingerprintInput rawRange = FingerprintInput.of("POST", "/p", null, "text/plain", List.of(), array, 2,
				array.length - 4);
		assertThat(this.fingerprinter.fingerprint(rawRange)).isEqualTo(this.fingerprinter
			.fingerprint(input("POST", "/p", null, "text/plain", List.of(), bytes("{\"b\":1,\"a\":2}"))));
		assertThat(rawRange.body().position()).isEqualTo(2);
	}

	@Test
	void handlesLargeBodiesAndReusesWorkspaces() {
		StringBuilder large = new StringBuilder("{\"z\":[");
		for (int i = 0; i < 50_000; i++) {
			large.append("{\"n\":").append(i).append(",\"m\":\"v\"},");
		}
		large.append("null],\"a\":1}");
		String reordered = large.toString().replace("{\"z\":", "{\"a\":1,\"z\":").replace(",\"a\":1}", "}");
		for (int i = 0; i < 3; i++) {
			assertSameJson(large.toString(), reordered);
			assertSameJson("{\"b\":1,\"a\":2}", "{\"a\":2,\"b\":1}");
		}
	}

	@Test
	void isThreadSafe() throws Exception {
		List<String> bodies = new ArrayList<>();
		List<RequestFingerprint> expected = new ArrayList<>();
		for (int i = 0; i < 64; i++) {
			String body = "{\"n\":" + i + ",\"items\":[" + "{\"b\":2,\"a\":1},".repeat(i) + "0],\"m\":\"x\"}";
			bodies.add(body);
			expected.add(this.fingerprinter.fingerprint(json(body)));
		}
		ExecutorService executor = Executors.newFixedThreadPool(8);
		try {
			List<Future<Boolean>> results = new ArrayList<>();
			for (int thread = 0; thread < 8; thread++) {
				results.add(executor.submit(() -> {
					boolean allEqual = true;
					for (int round = 0; round < 20; round++) {
						for (int i = 0; i < bodies.size(); i++) {
							allEqual &= this.fingerprinter.fingerprint(json(bodies.get(i))).equals(expected.get(i));
						}
					}
					return allEqual;
				}));
			}
			for (Future<Boolean> result : results) {
				assertThat(result.get()).isTrue();
			}
		}
		finally {
			executor.shutdownNow();
		}
	}

	@Test
	void recognisesJsonContentTypes() {
		assertThat(Sha256RequestFingerprinter.isJson("application/json")).isTrue();
		assertThat(Sha256RequestFingerprinter.isJson("Application/Json ; charset=utf-8")).isTrue();
		assertThat(Sha256RequestFingerprinter.isJson("application/ld+json")).isTrue();
		assertThat(Sha256RequestFingerprinter.isJson(null)).isFalse();
		assertThat(Sha256RequestFingerprinter.isJson("")).isFalse();
		assertThat(Sha256RequestFingerprinter.isJson("application/")).isFalse();
		assertThat(Sha256RequestFingerprinter.isJson("application/json5")).isFalse();
		assertThat(Sha256RequestFingerprinter.isJson("application/+json")).isFalse();
		assertThat(Sha256RequestFingerprinter.isJson("text/json")).isFalse();
		assertThat(Sha256RequestFingerprinter.isJson("multipart/form-data; boundary=json")).isFalse();
	}

	@Test
	void describesItsSettings() {
		this.fingerprinter.setExcludedJsonPointers(List.of("/a"));
		assertThat(this.fingerprinter.isCanonicalizeJson()).isTrue();
		assertThat(this.fingerprinter)
			.hasToString("Sha256RequestFingerprinter[canonicalizeJson=true, excludedJsonPointers=[/a]]");
	}

	private void assertSameJson(String first, String second) {
		assertThat(this.fingerprinter.fingerprint(json(first))).as("%s vs %s", abbreviate(first), abbreviate(second))
			.isEqualTo(this.fingerprinter.fingerprint(json(second)));
	}

	private void assertDifferentJson(String first, String second) {
		assertThat(this.fingerprinter.fingerprint(json(first))).as("%s vs %s", abbreviate(first), abbreviate(second))
			.isNotEqualTo(this.fingerprinter.fingerprint(json(second)));
	}

	private void assertRaw(String body) {
		assertRawBytes(bytes(body));
	}

	private void assertRawBytes(byte[] body) {
		FingerprintInput input = input("POST", "/payments", null, JSON, List.of(), body);
		assertThat(this.fingerprinter.fingerprint(input)).as(abbreviate(new String(body, StandardCharsets.UTF_8)))
			.isEqualTo(raw().fingerprint(input));
	}

	private static String abbreviate(String text) {
		return (text.length() > 80) ? text.substring(0, 80) + "..." : text;
	}

	private static Sha256RequestFingerprinter raw() {
		Sha256RequestFingerprinter raw = new Sha256RequestFingerprinter();
		raw.setCanonicalizeJson(false);
		return raw;
	}

	private static FingerprintInput json(String body) {
		return input("POST", "/payments", null, JSON, List.of(), bytes(body));
	}

	private static FingerprintInput headers(HttpHeader... headers) {
		return input("POST", "/payments", null, JSON, List.of(headers), bytes("{}"));
	}

	private static FingerprintInput input(String method, String path, @Nullable String query,
			@Nullable String contentType, List<HttpHeader> headers, byte[] body) {
		return FingerprintInput.of(method, path, query, contentType, headers, body, 0, body.length);
	}

	private static FingerprintInput json(byte[] body) {
		return input("POST", "/payments", null, JSON, List.of(), body);
	}

	private static byte[] concat(byte[] first, int[] second, byte[]... rest) {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		out.writeBytes(first);
		for (int b : second) {
			out.write(b);
		}
		for (byte[] part : rest) {
			out.writeBytes(part);
		}
		return out.toByteArray();
	}

	private static byte[] concat(int[] first, byte[] second) {
		return concat(new byte[0], first, second);
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	private static void writeString(DataOutputStream data, String value) throws IOException {
		byte[] bytes = bytes(value);
		data.writeInt(bytes.length);
		data.write(bytes);
	}

}
