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

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.StringJoiner;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link JsonCanonicalizer}.
 *
 * @author Idempotency contributors
 */
class JsonCanonicalizerTests {

	@Test
	void removesWhitespaceAndSortsMembersAtEveryLevel() {
		assertThat(canonical(
				" { \"b\" : [ 1 , { \"z\" : 1 , \"y\" : 2 } ] ,\n\t\"a\" : { \"d\" : true , \"c\" : null } } "))
			.hasValue("{\"a\":{\"c\":null,\"d\":true},\"b\":[1,{\"y\":2,\"z\":1}]}");
	}

	@Test
	void keepsArrayOrder() {
		assertThat(canonical("[3, 1, 2]")).hasValue("[3,1,2]");
	}

	@Test
	void keepsNumbersAsWritten() {
		assertThat(canonical("[1, 1.0, 1.00, 1e0, 1E+2, -0, 0.5e-3, 12345678901234567890.123]"))
			.hasValue("[1,1.0,1.00,1e0,1E+2,-0,0.5e-3,12345678901234567890.123]");
	}

	@Test
	void writesStringsWithMinimalEscapes() {
		assertThat(canonical("\"\\u0041\\/\\\"\\\\\\b\\f\\n\\r\\t\\u0001\\u001F\\u007f\\u00e9\\ud83d\\ude00\""))
			.hasValue("\"A/\\\"\\\\\\b\\f\\n\\r\\t\\u0001\\u001f\u007f\u00e9\ud83d\ude00\"");
	}

	@Test
	void writesLongStringsMixingPlainEscapedAndWideCharacters() {
		// plain, escaped, paired and multi-byte
		// characters in turn, over thousands of them
		StringBuilder json = new StringBuilder("{\"k\u00e9y\":\"");
		StringBuilder expected = new StringBuilder("{\"k\u00e9y\":\"");
		for (int i = 0; i < 4000; i++) {
			switch (i % 5) {
				case 0 -> {
					json.append('a');
					expected.append('a');
				}
				case 1 -> {
					json.append("\\u0001");
					expected.append("\\u0001");
				}
				case 2 -> {
					json.append("\\ud83d\\ude00");
					expected.append("\ud83d\ude00");
				}
				case 3 -> {
					json.append("\\\"");
					expected.append("\\\"");
				}
				default -> {
					json.append("\u20ac");
					expected.append("\u20ac");
				}
			}
		}
		json.append("\"}");
		expected.append("\"}");
		assertThat(canonical(json.toString())).hasValue(expected.toString());
	}

	@Test
	void writesNamesWithMinimalEscapes() {
		assertThat(canonical("{\"\\u0061\\\"\":1,\"\\n\":2}")).hasValue("{\"\\n\":2,\"a\\\"\":1}");
	}

	@Test
	void writesUnpairedSurrogateAsItsThreeBytes() {
		byte[] canonical = canonicalBytes("\"\\ud800\"").orElseThrow();
		assertThat(canonical).containsExactly('"', 0xED, 0xA0, 0x80, '"');
	}

	@Test
	void sortsNamesByCodePoint() {
		// UTF-16 order would put the surrogate pair of U+1F600 before U+E000
		assertThat(canonical("{\"\ud83d\ude00\":1,\"\ue000\":2,\"b\":3,\"ab\":4,\"a\":5}"))
			.hasValue("{\"a\":5,\"ab\":4,\"b\":3,\"\ue000\":2,\"\ud83d\ude00\":1}");
	}

	@Test
	void sortsLargeObjects() {
		List<String> names = new ArrayList<>();
		for (int i = 0; i < 300; i++) {
			names.add("k" + i);
		}
		Collections.shuffle(names, new Random(42));
		Map<String, Integer> sorted = new TreeMap<>();
		StringJoiner input = new StringJoiner(", ", "{", "}");
		for (String name : names) {
			int value = name.hashCode();
			input.add("\"" + name + "\": {\"y\": " + value + ", \"x\": []}");
			sorted.put(name, value);
		}
		StringJoiner expected = new StringJoiner(",", "{", "}");
		sorted.forEach((name, value) -> expected.add("\"" + name + "\":{\"x\":[],\"y\":" + value + "}"));
		assertThat(canonical(input.toString())).hasValue(expected.toString());
	}

	@Test
	void writesScalarDocuments() {
		assertThat(canonical(" \"x\" ")).hasValue("\"x\"");
		assertThat(canonical("12")).hasValue("12");
		assertThat(canonical("true")).hasValue("true");
		assertThat(canonical("false")).hasValue("false");
		assertThat(canonical("null")).hasValue("null");
		assertThat(canonical("{ }")).hasValue("{}");
		assertThat(canonical("[ ]")).hasValue("[]");
	}

	@Test
	void rejectsDuplicateNames() {
		assertThat(canonical("{\"a\":1,\"a\":2}")).isEmpty();
		assertThat(canonical("{\"a\":1,\"a\":1}")).isEmpty();
		assertThat(canonical("{\"b\":1,\"a\":1,\"b\":1}")).isEmpty();
		assertThat(canonical("{\"x\":{\"a\":1,\"\\u0061\":2}}")).isEmpty();
	}

	@Test
	void rejectsDuplicateNamesInLargeObjects() {
		List<String> members = new ArrayList<>();
		for (int i = 0; i < 50; i++) {
			members.add("\"k" + i + "\":" + i);
		}
		members.add("\"k17\":0");
		Collections.shuffle(members, new Random(7));
		assertThat(canonical("{" + String.join(",", members) + "}")).isEmpty();
	}

	@Test
	void rejectsDuplicateNamesWhenOneIsExcluded() {
		assertThat(canonical("{\"a\":1,\"a\":2}", "/a")).isEmpty();
	}

	@Test
	void rejectsWhatIsNotStrictJson() {
		assertThat(canonical("")).isEmpty();
		assertThat(canonical("   ")).isEmpty();
		assertThat(canonical("{\"a\":1")).isEmpty();
		assertThat(canonical("{\"a\":1}}")).isEmpty();
		assertThat(canonical("{\"a\":1} x")).isEmpty();
		assertThat(canonical("1 2")).isEmpty();
		assertThat(canonical("{'a':1}")).isEmpty();
		assertThat(canonical("{a:1}")).isEmpty();
		assertThat(canonical("[1,]")).isEmpty();
		assertThat(canonical("[01]")).isEmpty();
		assertThat(canonical("[NaN]")).isEmpty();
		assertThat(canonical("[1] // comment")).isEmpty();
		assertThat(canonical("\"a\u0001\"")).isEmpty();
		assertThat(canonicalBytes(new byte[] { '"', (byte) 0xC3, '"' })).isEmpty();
	}

	@Test
	void acceptsNestingUpToTheLimit() {
		String depth = "[".repeat(JsonCanonicalizer.MAX_DEPTH) + "]".repeat(JsonCanonicalizer.MAX_DEPTH);
		assertThat(canonical(depth)).hasValue(depth);
		String objects = "{\"a\":".repeat(JsonCanonicalizer.MAX_DEPTH - 1) + "{}"
				+ "}".repeat(JsonCanonicalizer.MAX_DEPTH - 1);
		assertThat(canonical(objects)).hasValue(objects);
	}

	@Test
	void rejectsNestingBeyondTheLimit() {
		int depth = JsonCanonicalizer.MAX_DEPTH + 1;
		assertThat(canonical("[".repeat(depth) + "]".repeat(depth))).isEmpty();
		assertThat(canonical("[".repeat(100_000))).isEmpty();
		assertThat(canonical("{\"a\":".repeat(100_000))).isEmpty();
	}

	@Test
	void leavesOutExcludedMembers() {
		assertThat(canonical("{\"a\":1}", "/a")).hasValue("{}");
		assertThat(canonical("{\"a\":1,\"b\":2,\"c\":3}", "/a")).hasValue("{\"b\":2,\"c\":3}");
		assertThat(canonical("{\"a\":1,\"b\":2,\"c\":3}", "/b")).hasValue("{\"a\":1,\"c\":3}");
		assertThat(canonical("{\"a\":1,\"b\":2,\"c\":3}", "/c")).hasValue("{\"a\":1,\"b\":2}");
		assertThat(canonical("{\"c\":3,\"b\":{\"x\":[1]},\"a\":1}", "/b")).hasValue("{\"a\":1,\"c\":3}");
		assertThat(canonical("{\"m\":{\"t\":1,\"u\":2},\"t\":3}", "/m/t")).hasValue("{\"m\":{\"u\":2},\"t\":3}");
	}

	@Test
	void leavesOutExcludedArrayElements() {
		assertThat(canonical("[0,1,2]", "/0")).hasValue("[1,2]");
		assertThat(canonical("[0,1,2]", "/1")).hasValue("[0,2]");
		assertThat(canonical("[0,1,2]", "/2")).hasValue("[0,1]");
		assertThat(canonical("[0,[1],2]", "/1", "/2")).hasValue("[0]");
		assertThat(canonical("[0,1]", "/-")).hasValue("[0,1]");
		assertThat(canonical("[0,1]", "/01")).hasValue("[0,1]");
	}

	@Test
	void leavesOutMembersInsideArrayElements() {
		assertThat(canonical("{\"items\":[{\"ref\":\"x\",\"id\":1},{\"ref\":\"y\",\"id\":2}]}", "/items/0/ref"))
			.hasValue("{\"items\":[{\"id\":1},{\"id\":2,\"ref\":\"y\"}]}");
	}

	@Test
	void matchesIndexTokensAgainstMemberNames() {
		assertThat(canonical("{\"0\":1,\"1\":2}", "/0")).hasValue("{\"1\":2}");
	}

	@Test
	void matchesEscapedPointerTokens() {
		assertThat(canonical("{\"a/b\":{\"c~d\":1,\"e\":2}}", "/a~1b/c~0d")).hasValue("{\"a/b\":{\"e\":2}}");
	}

	@Test
	void ignoresPointersThatDoNotMatch() {
		assertThat(canonical("{\"a\":\"text\",\"b\":[1]}", "/a/x", "/b/5", "/c"))
			.hasValue("{\"a\":\"text\",\"b\":[1]}");
	}

	@Test
	void excludesWholeSubtreeWhenPointersNest() {
		assertThat(canonical("{\"a\":{\"b\":1,\"c\":2},\"d\":3}", "/a/b", "/a")).hasValue("{\"d\":3}");
	}

	@Test
	void stillValidatesExcludedValues() {
		assertThat(canonical("{\"a\":[1,],\"b\":1}", "/a")).isEmpty();
		int depth = JsonCanonicalizer.MAX_DEPTH + 1;
		assertThat(canonical("{\"a\":" + "[".repeat(depth) + "]".repeat(depth) + "}", "/a")).isEmpty();
	}

	@Test
	void reusesWorkspacesWithoutLeakingState() {
		StringBuilder large = new StringBuilder("{\"z\":[");
		for (int i = 0; i < 20_000; i++) {
			large.append("\"value ").append(i).append("\",");
		}
		large.append("0],\"a\":1}");
		for (int i = 0; i < 3; i++) {
			assertThat(canonical(large.toString()))
				.hasValueSatisfying((value) -> assertThat(value).startsWith("{\"a\":1,\"z\":[\"value 0\","));
			assertThat(canonical("{\"b\":1,\"a\":2}")).hasValue("{\"a\":2,\"b\":1}");
			assertThat(canonical("{\"a\":1,\"a\":2}")).isEmpty();
			assertThat(canonical("{\"y\":{\"b\":1,\"a\":2},\"x\":0}")).hasValue("{\"x\":0,\"y\":{\"a\":2,\"b\":1}}");
		}
	}

	@Test
	void comparesByCodePoint() {
		assertThat(JsonCanonicalizer.compare("a", "b")).isNegative();
		assertThat(JsonCanonicalizer.compare("a", "ab")).isNegative();
		assertThat(JsonCanonicalizer.compare("ab", "ab")).isZero();
		assertThat(JsonCanonicalizer.compare("\ud83d\ude00", "\ue000")).isPositive();
		assertThat(JsonCanonicalizer.compare("\ud83d\ude00", "\uffff")).isPositive();
		assertThat(JsonCanonicalizer.compare("\ud83d\ude00", "\ud7ff")).isPositive();
		assertThat(JsonCanonicalizer.compare("\ud83d\ude00", "\ud83d\ude01")).isNegative();
	}

	private static Optional<String> canonical(String json, String... pointers) {
		return canonicalBytes(json.getBytes(StandardCharsets.UTF_8), pointers)
			.map((bytes) -> new String(bytes, StandardCharsets.UTF_8));
	}

	private static Optional<byte[]> canonicalBytes(String json) {
		return canonicalBytes(json.getBytes(StandardCharsets.UTF_8));
	}

	private static Optional<byte[]> canonicalBytes(byte[] json, String... pointers) {
		JsonPointerTree exclusions = JsonPointerTree.compile(List.of(pointers));
		FingerprintWorkspace workspace = FingerprintWorkspace.acquire();
		try {
			if (!JsonCanonicalizer.canonicalize(workspace, json, json.length, exclusions)) {
				return Optional.empty();
			}
			byte[] bytes = new byte[workspace.json.length()];
			System.arraycopy(workspace.json.bytes(), 0, bytes, 0, bytes.length);
			return Optional.of(bytes);
		}
		finally {
			FingerprintWorkspace.release(workspace);
		}
	}

}
