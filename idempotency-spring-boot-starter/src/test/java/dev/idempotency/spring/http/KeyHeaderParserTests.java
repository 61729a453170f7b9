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

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link KeyHeaderParser}.
 *
 * @author Idempotency contributors
 */
class KeyHeaderParserTests {

	@Test
	void bareTokenIsTheKey() {
		assertThat(KeyHeaderParser.parse("abc-123")).isEqualTo("abc-123");
		assertThat(KeyHeaderParser.parse(" \tabc-123 ")).isEqualTo("abc-123");
		assertThat(KeyHeaderParser.parse("a;b=c")).isEqualTo("a;b=c");
	}

	@Test
	void stringWithoutItsQuotesIsTheKey() {
		assertThat(KeyHeaderParser.parse("\"abc-123\"")).isEqualTo("abc-123");
		assertThat(KeyHeaderParser.parse("\"a\\\"b\\\\c\"")).isEqualTo("a\"b\\c");
		assertThat(KeyHeaderParser.parse("\"a,b\"")).isEqualTo("a,b");
	}

	@Test
	void invalidValuesAreRejected() {
		assertThat(KeyHeaderParser.parse("")).isNull();
		assertThat(KeyHeaderParser.parse("   ")).isNull();
		assertThat(KeyHeaderParser.parse("\"\"")).isNull();
		assertThat(KeyHeaderParser.parse("\"abc")).isNull();
		assertThat(KeyHeaderParser.parse("\"abc\"x")).isNull();
		assertThat(KeyHeaderParser.parse("\"abc\";p=1")).isNull();
		assertThat(KeyHeaderParser.parse("\"a\\x\"")).isNull();
		assertThat(KeyHeaderParser.parse("\"a b\"")).isNull();
		assertThat(KeyHeaderParser.parse("a b")).isNull();
		assertThat(KeyHeaderParser.parse("a,b")).isNull();
		assertThat(KeyHeaderParser.parse("schlüssel")).isNull();
		assertThat(KeyHeaderParser.parse("a\u0001b")).isNull();
		assertThat(KeyHeaderParser.parse("\"a\u007fb\"")).isNull();
	}

	@Test
	void lengthIsCountedWithoutQuotesAndEscapes() {
		assertThat(KeyHeaderParser.parse("k".repeat(255))).hasSize(255);
		assertThat(KeyHeaderParser.parse("k".repeat(256))).isNull();
		assertThat(KeyHeaderParser.parse("\"" + "k".repeat(255) + "\"")).hasSize(255);
		assertThat(KeyHeaderParser.parse("\"" + "\\\"".repeat(255) + "\"")).hasSize(255);
		assertThat(KeyHeaderParser.parse("\"" + "k".repeat(256) + "\"")).isNull();
	}

}
