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

package dev.idempotency.spring.http;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import org.springframework.security.web.csrf.DefaultCsrfToken;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

/**
 * Tests for {@link FormCanonicalizer}.
 *
 * @author Idempotency contributors
 */
class FormCanonicalizerTests {

	@Test
	void recognisesFormContentTypes() {
		assertThat(FormCanonicalizer.isForm("application/x-www-form-urlencoded")).isTrue();
		assertThat(FormCanonicalizer.isForm(" Application/X-WWW-Form-URLEncoded ; charset=UTF-8")).isTrue();
		assertThat(FormCanonicalizer.isForm("application/x-www-form-urlencodedx")).isFalse();
		assertThat(FormCanonicalizer.isForm("multipart/form-data")).isFalse();
		assertThat(FormCanonicalizer.isForm(null)).isFalse();
		assertThat(FormCanonicalizer.isMultipartForm("multipart/form-data; boundary=x")).isTrue();
		assertThat(FormCanonicalizer.isMultipartForm("multipart/mixed")).isFalse();
	}

	@Test
	void canonicalFormSortsNamesAndKeepsTheOrderOfValues() {
		Map<String, String[]> parameters = new LinkedHashMap<>();
		parameters.put("b", new String[] { "2", "1" });
		parameters.put("a b", new String[] { "x&y=z" });
		parameters.put("a", new String[] { "" });
		parameters.put("flag", new String[] { null });
		parameters.put("é", new String[] { "\u20ac", "\ud83d\ude00" });
		// sorted by the encoded names, where '%' comes before letters
		assertThat(text(FormCanonicalizer.canonicalize(parameters)))
			.isEqualTo("%C3%A9=%E2%82%AC&%C3%A9=%F0%9F%98%80&a=&a%20b=x%26y%3Dz&b=2&b=1&flag");
	}

	@Test
	void canonicalFormTellsEveryDifferenceApart() {
		List<Map<String, String[]>> forms = List.of(Map.of(), Map.of("a", new String[] { "" }),
				Map.of("a", new String[] { null }), Map.of("a", new String[0]), Map.of("a", new String[] { "b" }),
				Map.of("a", new String[] { "b", "c" }), Map.of("a", new String[] { "c", "b" }),
				Map.of("a", new String[] { "b&a=c" }), Map.of("a", new String[] { "b" }, "a=c", new String[] { "" }),
				Map.of("a", new String[] { "?" }), Map.of("a", new String[] { "\ud800" }),
				Map.of("a", new String[] { "\udc00" }), Map.of("a", new String[] { "\ufffd" }),
				Map.of("a", new String[] { "+" }), Map.of("a", new String[] { " " }),
				Map.of("a", new String[] { "%20" }));
		Set<String> canonical = new HashSet<>();
		for (Map<String, String[]> form : forms) {
			canonical.add(text(FormCanonicalizer.canonicalize(form)));
		}
		// a name without values is no parameter, as with the empty form
		assertThat(canonical).hasSize(forms.size() - 1);
	}

	@Test
	void parsesWellFormedBodies() {
		assertThat(
				FormCanonicalizer.parseStrictly(bytes("a=1&b=J%C3%BCrgen&a=x+y%2B&c=&d=e=f"), StandardCharsets.UTF_8))
			.containsExactly(entry("a", List.of("1", "x y+")), entry("b", List.of("Jürgen")), entry("c", List.of("")),
					entry("d", List.of("e=f")));
		assertThat(FormCanonicalizer.parseStrictly(bytes("a=%E9"), StandardCharsets.ISO_8859_1))
			.containsExactly(entry("a", List.of("é")));
		assertThat(FormCanonicalizer.parseStrictly(new byte[0], StandardCharsets.UTF_8)).isEmpty();
	}

	@Test
	void refusesBodiesThatParsersMayReadDifferently() {
		for (String body : List.of("a", "a=1&", "&a=1", "a=1&&b=2", "=1", "a=%zz", "a=%4", "a=%", "a=%E9", "a= b",
				"a=\t", "a=\u00e9", "a=\u007f")) {
			assertThat(FormCanonicalizer.parseStrictly(body.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8))
				.as(body)
				.isNull();
		}
	}

	@Test
	void minimumBodyLengthLeavesRoomForTheQuery() {
		Map<String, String[]> parameters = Map.of("name", new String[] { "12345", null });
		assertThat(FormCanonicalizer.minimumBodyLength(parameters, null)).isEqualTo(13);
		assertThat(FormCanonicalizer.minimumBodyLength(parameters, "name=12345")).isEqualTo(3);
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.US_ASCII);
	}

	@Test
	void csrfTokensOfBothStacksNameTheirParameter() {
		assertThat(FormCanonicalizer.csrfParameterName(new DefaultCsrfToken("X-CSRF-TOKEN", "_csrf", "t")))
			.isEqualTo("_csrf");
		assertThat(FormCanonicalizer.csrfParameterName(
				new org.springframework.security.web.server.csrf.DefaultCsrfToken("X-CSRF-TOKEN", "csrf", "t")))
			.isEqualTo("csrf");
		assertThat(FormCanonicalizer.csrfParameterName("_csrf")).isNull();
		assertThat(FormCanonicalizer.csrfParameterName(null)).isNull();
	}

	@Test
	void leavesOneParameterOut() {
		Map<String, String[]> parameters = new LinkedHashMap<>();
		parameters.put("amount", new String[] { "5" });
		parameters.put("_csrf", new String[] { "a", "b" });
		assertThat(FormCanonicalizer.without(parameters, "_csrf")).containsOnlyKeys("amount");
		assertThat(parameters).containsKey("_csrf");
		assertThat(FormCanonicalizer.without(parameters, "other")).isSameAs(parameters);
		assertThat(FormCanonicalizer.without(parameters, null)).isSameAs(parameters);
	}

	private static String text(byte[] bytes) {
		return new String(bytes, StandardCharsets.US_ASCII);
	}

}
