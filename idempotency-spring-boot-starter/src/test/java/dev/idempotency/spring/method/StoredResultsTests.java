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

package dev.idempotency.spring.method;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import dev.idempotency.core.HttpHeader;
import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.spring.method.StoredResults.DeterministicExceptions;
import dev.idempotency.spring.method.StoredResults.NotStorableException;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.annotation.JsonDeserialize;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.module.SimpleModule;

import org.springframework.core.ParameterizedTypeReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link StoredResults}.
 *
 * @author Idempotency contributors
 */
class StoredResultsTests {

	private static final IdempotencyKey KEY = IdempotencyKey.global("k");

	private final JsonMapper mapper = JsonMapper.builder().build();

	private final StoredResults results = new StoredResults(this.mapper);

	@Test
	void aResultIsStoredAsJsonAndReadBackAsTheDeclaredGenericType() throws Throwable {
		JavaType type = type(new ParameterizedTypeReference<Map<String, List<Item>>>() {
		});
		Map<String, List<Item>> result = Map.of("items", List.of(new Item("a", 1), new Item("b", 2)));
		StoredResponse stored = this.results.result(result, type, 1024);
		assertThat(stored.status()).isEqualTo(200);
		assertThat(stored.headers()).containsExactly(new HttpHeader("Content-Type", "application/json"));
		assertThat(new String(stored.bodyBytes()))
			.isEqualTo("{\"items\":[{\"name\":\"a\",\"count\":1},{\"name\":\"b\",\"count\":2}]}");
		assertThat(this.results.read(KEY, stored, type, DeterministicExceptions.NONE)).isEqualTo(result);
	}

	@Test
	void noResultIsStoredWithoutBody() throws Throwable {
		JavaType type = this.mapper.constructType(String.class);
		StoredResponse stored = this.results.result(null, type, 0);
		assertThat(stored.status()).isEqualTo(204);
		assertThat(stored.bodyLength()).isZero();
		assertThat(this.results.read(KEY, stored, type, DeterministicExceptions.NONE)).isNull();
	}

	@Test
	void anEmptyOptionalIsReadBackEmpty() throws Throwable {
		JavaType type = type(new ParameterizedTypeReference<Optional<Item>>() {
		});
		StoredResponse stored = this.results.result(Optional.empty(), type, 1024);
		assertThat(this.results.read(KEY, stored, type, DeterministicExceptions.NONE)).isEqualTo(Optional.empty());
	}

	@Test
	void aResultLargerThanThePolicyAllowsIsNotStorable() {
		JavaType type = this.mapper.constructType(String.class);
		assertThatExceptionOfType(NotStorableException.class)
			.isThrownBy(() -> this.results.result("0123456789", type, 8))
			.withMessageContaining("its JSON has 12 bytes, more than the policy's max-response-body of 8");
	}

	@Test
	void aListedExceptionIsThrownAgainAsANewInstanceWithItsMessage() {
		DeterministicExceptions deterministic = new DeterministicExceptions(List.of(IllegalArgumentException.class));
		NumberFormatException thrown = new NumberFormatException("not a number: x");
		assertThat(deterministic.stores(thrown)).isTrue();
		assertThat(deterministic.stores(new IllegalStateException())).isFalse();
		StoredResponse stored = this.results.exception(thrown);
		assertThatExceptionOfType(NumberFormatException.class)
			.isThrownBy(() -> this.results.read(KEY, stored, this.mapper.constructType(String.class), deterministic))
			.withMessage("not a number: x")
			.isNotSameAs(thrown);
	}

	@Test
	void aStoredExceptionTypeThatThePolicyNoLongerListsIsNeverCreated() {
		StoredResponse stored = this.results.exception(new IllegalStateException("boom"));
		assertThatExceptionOfType(IdempotencyException.class)
			.isThrownBy(() -> this.results.read(KEY, stored, this.mapper.constructType(String.class),
					new DeterministicExceptions(List.of(IllegalArgumentException.class))))
			.withMessageContaining("its exception type java.lang.IllegalStateException is not one of the policy's"
					+ " deterministic-exceptions [java.lang.IllegalArgumentException]")
			.withMessageContaining("the call is not run again");
	}

	@Test
	void aResultThatNoLongerFitsItsTypeIsAFailedReplayNotARun() {
		StoredResponse stored = this.results.result("text", this.mapper.constructType(String.class), 1024);
		assertThatExceptionOfType(IdempotencyException.class)
			.isThrownBy(() -> this.results.read(KEY, stored, this.mapper.constructType(Item.class),
					DeterministicExceptions.NONE))
			.withMessageContaining("The stored result of key 'k' cannot be replayed: Jackson cannot read it as");
	}

	@Test
	void anHttpResponseUnderTheKeyIsNotTakenForAResult() {
		StoredResponse http = new StoredResponse(201, List.of(new HttpHeader("Content-Type", "application/json")),
				"{}".getBytes());
		assertThatExceptionOfType(IdempotencyException.class).isThrownBy(
				() -> this.results.read(KEY, http, this.mapper.constructType(Map.class), DeterministicExceptions.NONE))
			.withMessageContaining("it holds an HTTP response (status 201)");
	}

	@Test
	void aResultThatJacksonWritesButCannotReadBackIsNotStorable() {
		JavaType type = this.mapper.constructType(Holder.class);
		assertThatExceptionOfType(NotStorableException.class)
			.isThrownBy(() -> this.results.result(new Holder(new Item("a", 1)), type, 1024))
			.withMessageContaining("cannot read it back as")
			.withMessageContaining("@JsonTypeInfo");
	}

	@Test
	void theStartUpCheckFindsTypesJacksonCannotCreate() {
		assertThat(unreadable(Shape.class)).contains("abstract");
		assertThat(unreadable(new ParameterizedTypeReference<List<Shape>>() {
		}.getType())).isNotNull();
		assertThat(unreadable(new ParameterizedTypeReference<Map<String, List<Item>>>() {
		}.getType())).isNull();
		assertThat(unreadable(new ParameterizedTypeReference<Optional<Item>>() {
		}.getType())).isNull();
		assertThat(unreadable(String.class)).isNull();
		assertThat(unreadable(int.class)).isNull();
		// what the check cannot see without looking into the properties
		assertThat(unreadable(Holder.class)).contains("its property shape (" + Shape.class.getName() + ")");
		assertThat(unreadable(new ParameterizedTypeReference<List<Outer>>() {
		}.getType())).contains("its property holder.shape (");
		assertThat(unreadable(Outer.class)).contains("its property holder.shape (");
		assertThat(unreadable(Node.class)).isNull();
	}

	@Test
	void theStartUpCheckHonoursWhatJacksonHonoursWhenItReadsAProperty() throws Exception {
		// each of them Jackson writes and reads back: none is refused
		Map<Object, java.lang.reflect.Type> readable = new java.util.LinkedHashMap<>();
		readable.put(new AsImpl("a", new Circle(1.5)), AsImpl.class);
		readable.put(new ContentAs(List.of(new Circle(2)), Map.of("c", new Circle(3))), ContentAs.class);
		readable.put(new TypedProperty(new Circle(4), List.of(new Circle(5))), TypedProperty.class);
		readable.put(new Holders(List.of(new AsImpl("b", new Circle(6)))), Holders.class);
		for (Map.Entry<Object, java.lang.reflect.Type> result : readable.entrySet()) {
			JavaType type = this.mapper.constructType(result.getValue());
			Object read = this.mapper.readValue(this.mapper.writeValueAsString(result.getKey()), type);
			assertThat(read).isEqualTo(result.getKey());
			assertThat(unreadable(result.getValue())).as(result.getValue().getTypeName()).isNull();
		}
		// a mix-in, and an abstract type mapped by a module, of the application's mapper
		JsonMapper mixedIn = JsonMapper.builder().addMixIn(Holder.class, HolderMixIn.class).build();
		JsonMapper mapped = JsonMapper.builder()
			.addModule(new SimpleModule().addAbstractTypeMapping(Shape.class, Circle.class))
			.build();
		for (JsonMapper mapper : List.of(mixedIn, mapped)) {
			Holder holder = new Holder(new Circle(7));
			assertThat(mapper.readValue(mapper.writeValueAsString(holder), Holder.class)).isEqualTo(holder);
			assertThat(new StoredResults(mapper).unreadable(Holder.class, mapper.constructType(Holder.class))).isNull();
		}
		// and what Jackson cannot read is still refused
		assertThat(unreadable(Holder.class)).contains("its property shape (" + Shape.class.getName() + ")");
		assertThat(unreadable(AsAbstract.class)).contains("its property shape (");
	}

	@Test
	void anUnreadableRecordIsAFailedReplayThatSaysWhyNotARun() {
		assertThatExceptionOfType(IdempotencyException.class)
			.isThrownBy(() -> this.results.read(KEY, StoredResponse.unreadable(), this.mapper.constructType(Item.class),
					DeterministicExceptions.NONE))
			.isExactlyInstanceOf(IdempotencyException.class)
			.withMessageContaining("The stored result of key 'k' cannot be replayed: its record is unreadable")
			.withMessageContaining("idempotency.encryption.replay-unencrypted-until")
			.withMessageContaining("altered")
			.withMessageEndingWith("; the call is not run again")
			.satisfies((ex) -> assertThat(ex.getKey()).isEqualTo(KEY));
	}

	@Test
	void aResultThatWasNotStoredIsReplayedAsTheExceptionThatSaysSo() {
		StoredResponse stored = this.results.notStored(StoredResults.TOO_LARGE);
		assertThatExceptionOfType(IdempotentResultNotStoredException.class)
			.isThrownBy(() -> this.results.read(KEY, stored, this.mapper.constructType(Item.class),
					DeterministicExceptions.NONE))
			.withMessageContaining("ran, but its result could not be stored (too-large)")
			.satisfies((ex) -> assertThat(ex.getReason()).isEqualTo("too-large"));
	}

	@Test
	void exceptionTypesThatCannotBeCreatedAgainAreRefused() {
		assertThatIllegalArgumentException().isThrownBy(() -> new DeterministicExceptions(List.of(NoMessage.class)))
			.withMessageContaining(NoMessage.class.getName());
	}

	private String unreadable(java.lang.reflect.Type type) {
		return this.results.unreadable(type, this.mapper.constructType(type));
	}

	private JavaType type(ParameterizedTypeReference<?> reference) {
		return this.mapper.constructType(reference.getType());
	}

	record Item(String name, int count) implements Shape {

	}

	interface Shape {

	}

	record Holder(Shape shape) {

	}

	record Outer(String name, Holder holder) {

	}

	record Circle(double r) implements Shape {

	}

	record AsImpl(String id, @JsonDeserialize(as = Circle.class) Shape shape) {

	}

	record ContentAs(@JsonDeserialize(contentAs = Circle.class) List<Shape> shapes,
			@JsonDeserialize(contentAs = Circle.class) Map<String, Shape> byName) {

	}

	record TypedProperty(
			@JsonTypeInfo(use = JsonTypeInfo.Id.NAME) @JsonSubTypes(@JsonSubTypes.Type(value = Circle.class,
					name = "circle")) Shape shape,
			@JsonTypeInfo(use = JsonTypeInfo.Id.NAME) @JsonSubTypes(@JsonSubTypes.Type(value = Circle.class,
					name = "circle")) List<Shape> shapes) {

	}

	record Holders(List<AsImpl> holders) {

	}

	// as says another abstract type: Jackson cannot create it either
	record AsAbstract(@JsonDeserialize(as = Shape.class) Shape shape) {

	}

	interface HolderMixIn {

		@JsonDeserialize(as = Circle.class)
		Shape shape();

	}

	// a type that refers to itself is looked into once
	record Node(String name, List<Node> children) {

	}

	static class NoMessage extends RuntimeException {

		NoMessage(int code) {
			super(String.valueOf(code));
		}

	}

}
