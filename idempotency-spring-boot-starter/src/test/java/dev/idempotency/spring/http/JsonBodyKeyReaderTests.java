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

import dev.idempotency.spring.IdempotencyKeySource;
import dev.idempotency.spring.http.JsonBodyKeyReader.BodyKey;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.core.JsonPointer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link JsonBodyKeyReader} and {@link IdempotencyKeySource}.
 *
 * @author Idempotency contributors
 */
class JsonBodyKeyReaderTests {

	private static BodyKey read(String body, String pointer) {
		return JsonBodyKeyReader.read(body.getBytes(StandardCharsets.UTF_8), JsonPointer.compile(pointer));
	}

	@Test
	void readsAStringMember() {
		assertThat(read("{\"type\":\"charge.succeeded\",\"id\":\"evt_1NG8Du2eZvKYlo2C\"}", "/id").key())
			.isEqualTo("evt_1NG8Du2eZvKYlo2C");
	}

	@Test
	void readsAnIntegerAsItsDecimalText() {
		assertThat(read("{\"id\":820982911946154508}", "/id").key()).isEqualTo("820982911946154508");
	}

	@Test
	void followsNestedMembersAndArrayElements() {
		String body = "{\"data\":{\"events\":[{\"id\":\"a\"},{\"id\":\"b\",\"more\":[1,{\"x\":2}]}]},\"id\":\"top\"}";
		assertThat(read(body, "/data/events/1/id").key()).isEqualTo("b");
		assertThat(read(body, "/data/events/0/id").key()).isEqualTo("a");
		assertThat(read(body, "/id").key()).isEqualTo("top");
		assertThat(read("{\"a/b\":{\"c~d\":\"k\"}}", "/a~1b/c~0d").key()).isEqualTo("k");
	}

	@Test
	void skipsMembersBeforeAndAfterTheKey() {
		String body = "{\"before\":{\"id\":\"nested\",\"list\":[[{}],[]]},\"id\":\"k-1\",\"after\":[{\"id\":\"x\"}]}";
		assertThat(read(body, "/id").key()).isEqualTo("k-1");
	}

	@ParameterizedTest
	@ValueSource(strings = { "{}", "{\"other\":\"x\"}", "{\"id\":null}", "[]", "{\"data\":[]}", "{\"data\":\"text\"}",
			"\"scalar\"", "{\"data\":{\"events\":[{\"id\":\"a\"}]}}" })
	void bodyWithoutAValueAtThePointerHasNoKey(String body) {
		String pointer = body.contains("events") ? "/data/events/1/id" : (body.contains("data") ? "/data/id" : "/id");
		BodyKey key = read(body, pointer);
		assertThat(key.key()).isNull();
		assertThat(key.absent()).isTrue();
	}

	@ParameterizedTest
	@ValueSource(strings = { "{\"id\":\"\"}", "{\"id\":\"has space\"}", "{\"id\":\"caf\u00e9\"}", "{\"id\":1.5}",
			"{\"id\":true}", "{\"id\":{\"value\":\"k\"}}", "{\"id\":[\"k\"]}", "{\"id\":\"a\",\"id\":\"b\"}",
			"{\"id\":\"a\",\"x\":{},\"id\":\"a\"}" })
	void valueThatIsNotAKeyOrAppearsTwiceIsInvalid(String body) {
		BodyKey key = read(body, "/id");
		assertThat(key.key()).isNull();
		assertThat(key.absent()).isFalse();
	}

	@Test
	void keyLongerThanTheLimitIsInvalid() {
		assertThat(read("{\"id\":\"" + "k".repeat(255) + "\"}", "/id").key()).hasSize(255);
		assertThat(read("{\"id\":\"" + "k".repeat(256) + "\"}", "/id").absent()).isFalse();
		assertThat(read("{\"id\":\"" + "k".repeat(256) + "\"}", "/id").key()).isNull();
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "   ", "{\"id\":\"k\"", "{\"id\":\"k\"} {\"id\":\"j\"}", "{\"id\":\"k\"}]",
			"{id:\"k\"}", "{\"id\":'k'}", "<event id=\"k\"/>", "{\"id\":\"k\",}" })
	void bodyThatIsNotStrictJsonHasNoKey(String body) {
		BodyKey key = read(body, "/id");
		assertThat(key.key()).isNull();
		assertThat(key.absent()).isFalse();
	}

	@Test
	void sourcesDescribeThemselvesAndCompareByValue() {
		assertThat(IdempotencyKeySource.jsonPointer("/id")).isEqualTo(IdempotencyKeySource.jsonPointer("/id"))
			.hasSameHashCodeAs(IdempotencyKeySource.jsonPointer("/id"))
			.isNotEqualTo(IdempotencyKeySource.header("id"))
			.hasToString("JSON body at '/id'");
		assertThat(IdempotencyKeySource.header("webhook-id").header()).isEqualTo("webhook-id");
		assertThat(IdempotencyKeySource.header("webhook-id").isBody()).isFalse();
		assertThat(IdempotencyKeySource.keyHeader().header()).isNull();
		assertThat(IdempotencyKeySource.keyHeader().jsonPointer()).isNull();
		assertThat(IdempotencyKeySource.jsonPointer("/data/id").jsonPointer()).isEqualTo("/data/id");
		assertThatIllegalArgumentException().isThrownBy(() -> IdempotencyKeySource.jsonPointer("id"));
		assertThatIllegalArgumentException().isThrownBy(() -> IdempotencyKeySource.jsonPointer(""));
		assertThatIllegalArgumentException().isThrownBy(() -> IdempotencyKeySource.header(""));
	}

}
