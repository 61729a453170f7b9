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

import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link JsonPointerTree}.
 *
 * @author Idempotency contributors
 */
class JsonPointerTreeTests {

	@Test
	void parsesReferenceTokens() {
		assertThat(JsonPointerTree.parse("/metadata/requestTime")).containsExactly("metadata", "requestTime");
		assertThat(JsonPointerTree.parse("/items/0/clientRef")).containsExactly("items", "0", "clientRef");
		assertThat(JsonPointerTree.parse("/")).containsExactly("");
		assertThat(JsonPointerTree.parse("/a/")).containsExactly("a", "");
		assertThat(JsonPointerTree.parse("//")).containsExactly("", "");
	}

	@Test
	void unescapesTokens() {
		assertThat(JsonPointerTree.parse("/a~1b")).containsExactly("a/b");
		assertThat(JsonPointerTree.parse("/m~0n")).containsExactly("m~n");
		// RFC 6901: ~01 is "~1", not "/"
		assertThat(JsonPointerTree.parse("/~01")).containsExactly("~1");
		assertThat(JsonPointerTree.parse("/~10")).containsExactly("/0");
	}

	@Test
	void rejectsEmptyPointer() {
		assertThatIllegalArgumentException().isThrownBy(() -> JsonPointerTree.parse(""))
			.withMessageContaining("''")
			.withMessageContaining("whole body");
	}

	@Test
	void rejectsPointerWithoutLeadingSlash() {
		assertThatIllegalArgumentException().isThrownBy(() -> JsonPointerTree.parse("metadata/requestTime"))
			.withMessageContaining("'metadata/requestTime'")
			.withMessageContaining("must start with '/'");
	}

	@Test
	void rejectsBadEscapes() {
		assertThatIllegalArgumentException().isThrownBy(() -> JsonPointerTree.parse("/a~2"))
			.withMessageContaining("'/a~2'")
			.withMessageContaining("'~' must be followed by '0' or '1'");
		assertThatIllegalArgumentException().isThrownBy(() -> JsonPointerTree.parse("/a~"))
			.withMessageContaining("'~' must be followed by '0' or '1'");
	}

	@Test
	void rejectsNull() {
		assertThatIllegalArgumentException().isThrownBy(() -> JsonPointerTree.compile(Arrays.asList("/a", null)))
			.withMessageContaining("null");
	}

	@Test
	void compilesNothingToNull() {
		assertThat(JsonPointerTree.compile(List.of())).isNull();
	}

	@Test
	void compilesSharedPrefixesIntoOneTree() {
		JsonPointerTree root = JsonPointerTree.compile(List.of("/items/0/ref", "/items/10/ref", "/items/-", "/a"));
		assertThat(root).isNotNull();
		assertThat(root.isExcluded()).isFalse();
		assertThat(root.member("a")).isNotNull().satisfies((node) -> assertThat(node.isExcluded()).isTrue());
		JsonPointerTree items = root.member("items");
		assertThat(items).isNotNull();
		assertThat(items.isExcluded()).isFalse();
		assertThat(items.element(0)).isNotNull().isSameAs(items.member("0"));
		assertThat(items.element(10)).isNotNull().isSameAs(items.member("10"));
		assertThat(items.element(1)).isNull();
		assertThat(items.member("-")).isNotNull();
		assertThat(items.element(0).member("ref")).isNotNull()
			.satisfies((node) -> assertThat(node.isExcluded()).isTrue());
		assertThat(root.member("b")).isNull();
		assertThat(root.element(0)).isNull();
	}

	@Test
	void doesNotTreatNonCanonicalNumbersAsIndexes() {
		JsonPointerTree root = JsonPointerTree.compile(List.of("/01", "/+1", "/99999999999"));
		assertThat(root).isNotNull();
		assertThat(root.element(1)).isNull();
		assertThat(root.member("01")).isNotNull();
	}

}
