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

import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonValue;
import dev.idempotency.spring.Idempotent;
import dev.idempotency.spring.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.spring.autoconfigure.IdempotencyMethodAutoConfiguration;
import dev.idempotency.spring.autoconfigure.IdempotentMethodsCheckAutoConfiguration;
import org.junit.jupiter.api.Test;

import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link IdempotencyMethodAutoConfiguration}: what it creates, and the
 * annotations it refuses at start-up, on the in-memory store.
 *
 * @author Idempotency contributors
 */
class IdempotentMethodConfigurationTests {

	private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(IdempotencyAutoConfiguration.class, IdempotencyMethodAutoConfiguration.class))
		.withPropertyValues("idempotency.store.type=memory");

	@Test
	void proxiesAnnotatedBeansAndRunsEachKeyOnce() {
		this.runner.withBean(Counter.class).run((context) -> {
			assertThat(context).hasSingleBean(IdempotencyTemplate.class);
			assertThat(context).hasSingleBean(IdempotentMethodAdvisor.class);
			Counter counter = context.getBean(Counter.class);
			assertThat(AopUtils.isAopProxy(counter)).isTrue();
			assertThat(counter.count("k1")).isEqualTo(1);
			assertThat(counter.count("k1")).isEqualTo(1);
			assertThat(counter.count("k2")).isEqualTo(2);
		});
	}

	@Test
	void theFormerAnnotationStillMakesABeanMethodIdempotent() {
		this.runner.withBean(FormerCounter.class)
			.withPropertyValues("idempotency.policies.counts.ttl=1h")
			.run((context) -> {
				FormerCounter counter = context.getBean(FormerCounter.class);
				assertThat(AopUtils.isAopProxy(counter)).isTrue();
				assertThat(counter.count("k1")).isEqualTo(1);
				assertThat(counter.count("k1")).isEqualTo(1);
				assertThat(counter.count("k2")).isEqualTo(2);
			});
	}

	@Test
	void theFormerAnnotationNamesItsPolicy() {
		this.runner.withBean(FormerCounter.class)
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("Idempotency policy 'counts' is not configured"));
	}

	@Test
	void classesWithTheSameSimpleNameAndOverloadsHaveKeysOfTheirOwn() {
		this.runner.withBean(First.OrderService.class).withBean(Second.OrderService.class).run((context) -> {
			First.OrderService first = context.getBean(First.OrderService.class);
			Second.OrderService second = context.getBean(Second.OrderService.class);
			assertThat(first.place("k")).isEqualTo("first");
			assertThat(second.place("k")).isEqualTo("second");
			assertThat(second.place("k", 2)).isEqualTo("second 2");
			assertThat(second.place("k", new String[] { "a" })).isEqualTo("second [a]");
			assertThat(first.place("k")).isEqualTo("first");
		});
	}

	@Test
	void theDefaultOperationIsTheClassTheMethodAndItsParameterTypes() throws Exception {
		assertThat(IdempotentMethodInterceptor.defaultOperation(
				Second.OrderService.class.getDeclaredMethod("place", String.class, String[].class),
				Second.OrderService.class))
			.isEqualTo(Second.OrderService.class.getName() + ".place-java.lang.String-java.lang.String$array");
	}

	@Test
	void failsForAResultTypeThatCannotBeReadBack() {
		this.runner.withBean(InterfaceResult.class)
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("@Idempotent method " + InterfaceResult.class.getName() + ".shape returns "
						+ Shape.class.getName())
				.hasMessageContaining("cannot be read back")
				.hasMessageContaining("@JsonTypeInfo")
				.hasMessageContaining("IdempotentResultCodec"));
	}

	@Test
	void failsForAResponseEntityResultOfAHandlerWithAKey() {
		this.runner.withBean(EntityHandler.class)
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("@Idempotent method " + EntityHandler.class.getName() + ".open returns "
						+ "org.springframework.http.ResponseEntity")
				.hasMessageContaining("cannot be read back"));
	}

	@Test
	void failsForAResultTypeWithAPropertyOfAnInterfaceType() {
		this.runner.withBean(NestedInterfaceResult.class)
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("@Idempotent method " + NestedInterfaceResult.class.getName() + ".draw returns "
						+ Drawing.class.getName())
				.hasMessageContaining("cannot be read back")
				.hasMessageContaining("its property shape (" + Shape.class.getName() + ")")
				.hasMessageContaining("@JsonTypeInfo"));
	}

	@Test
	void startsForAResultWhosePropertyJacksonReadsAsAConcreteType() {
		this.runner.withBean(AsImplResult.class).run((context) -> {
			assertThat(context).hasNotFailed();
			AsImplResult bean = context.getBean(AsImplResult.class);
			StoredResultsTests.AsImpl first = bean.make("k");
			assertThat(bean.make("k")).isEqualTo(first).isNotSameAs(first);
			assertThat(bean.runs()).isOne();
		});
	}

	@Test
	void failsForAResultDeclaredObject() {
		this.runner.withBean(ObjectResult.class)
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("@Idempotent method " + ObjectResult.class.getName() + ".any returns Object")
				.hasMessageContaining("LinkedHashMap")
				.hasMessageContaining("declare the type the method returns"));
	}

	@Test
	void aResultThatCannotBeReadBackIsNeverRunAgain() {
		this.runner.withBean(TagResult.class).run((context) -> {
			TagResult bean = context.getBean(TagResult.class);
			assertThat(bean.tag("k")).isEqualTo(new Tag("1"));
			// the call ran: the retry is told its result was not stored, for the
			// whole TTL, and never runs it again
			assertThatExceptionOfType(IdempotentResultNotStoredException.class).isThrownBy(() -> bean.tag("k"))
				.satisfies((ex) -> assertThat(ex.getReason()).isEqualTo("not-readable"));
			assertThat(bean.runs()).isOne();
		});
	}

	@Test
	void aResultCodecWritesAndReadsTheTypesJacksonDoesNotHandle() {
		this.runner.withBean(Messages.class).withBean(MessageCodec.class).run((context) -> {
			Messages messages = context.getBean(Messages.class);
			Message first = messages.send("k");
			assertThat(first.text()).isEqualTo("message 1");
			Message replayed = messages.send("k");
			assertThat(replayed.text()).isEqualTo("message 1");
			assertThat(replayed).isNotSameAs(first);
			assertThat(messages.runs()).isOne();
		});
	}

	@Test
	void aResultJacksonCannotWriteIsNeverRunAgainWithoutACodec() {
		this.runner.withBean(Messages.class).run((context) -> {
			Messages messages = context.getBean(Messages.class);
			assertThat(messages.send("k").text()).isEqualTo("message 1");
			assertThatExceptionOfType(IdempotentResultNotStoredException.class).isThrownBy(() -> messages.send("k"))
				.satisfies((ex) -> assertThat(ex.getReason()).isEqualTo("not-writable"));
			assertThat(messages.runs()).isOne();
		});
	}

	@Test
	void leavesBeansWithoutKeysAlone() {
		this.runner.withBean(Plain.class).withBean(Handler.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(AopUtils.isAopProxy(context.getBean(Plain.class))).isFalse();
			assertThat(AopUtils.isAopProxy(context.getBean(Handler.class))).isFalse();
		});
	}

	@Test
	void storesTheDeterministicExceptionsOfEachPolicy() {
		this.runner.withBean(Counter.class)
			.withPropertyValues("idempotency.deterministic-exceptions=java.lang.IllegalArgumentException")
			.run((context) -> {
				Counter counter = context.getBean(Counter.class);
				assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> counter.count("bad"))
					.withMessage("bad key");
				assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> counter.count("bad"))
					.withMessage("bad key");
				assertThat(counter.runs()).isOne();
			});
	}

	@Test
	void anotherExceptionReleasesTheKey() {
		this.runner.withBean(Counter.class).run((context) -> {
			Counter counter = context.getBean(Counter.class);
			assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> counter.count("bad"));
			assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> counter.count("bad"));
			assertThat(counter.runs()).isEqualTo(2);
		});
	}

	@Test
	void failsForAnAnnotationWithoutKeyOnABeanThatIsNotAController() {
		this.runner.withBean(NoKey.class)
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("@Idempotent method " + NoKey.class.getName() + ".run is not a web handler,"
						+ " so it needs a key"));
	}

	@Test
	void failsForAMethodThatReturnsBeforeItsResultIsKnown() {
		this.runner.withBean(Later.class)
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("returns java.util.concurrent.CompletableFuture: its result is not known"));
	}

	@Test
	void failsForAnUnknownPolicy() {
		this.runner.withBean(UnknownPolicy.class)
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("Idempotency policy 'nowhere' is not configured"));
	}

	@Test
	void failsForATransactionalPolicy() {
		this.runner.withBean(TransactionalPolicy.class)
			.withPropertyValues("idempotency.store.type=memory", "idempotency.policies.ledger.transactional=true")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("Idempotency policy 'ledger' is transactional, which only HTTP endpoints"));
	}

	@Test
	void failsForAnInvalidExpressionOrOperationName() {
		this.runner.withBean(BadExpression.class)
			.run((context) -> assertThat(context).getFailure()
				.hasStackTraceContaining("has an invalid key expression '#id +'"));
		this.runner.withBean(BadOperation.class)
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("has the operation name 'a b'"));
	}

	@Test
	void failsForAKeyOnAClass() {
		this.runner.withBean(KeyOnClass.class)
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("has a key, which only a method's annotation may have"));
	}

	@Test
	void failsForADeterministicExceptionThatCannotBeCreatedAgain() {
		this.runner.withBean(Counter.class)
			.withPropertyValues("idempotency.policies.strict.deterministic-exceptions=" + Opaque.class.getName())
			.run((context) -> assertThat(context).getFailure()
				.hasMessageContaining("idempotency.policies.strict.deterministic-exceptions")
				.rootCause()
				.hasMessageContaining("has no public constructor taking a String message"));
	}

	@Test
	void anApplicationThatIsNotAWebApplicationGetsIdempotentMethods() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class,
					IdempotencyMethodAutoConfiguration.class, IdempotentMethodsCheckAutoConfiguration.class))
			.withPropertyValues("idempotency.store.type=memory")
			.withBean(Counter.class)
			.run((context) -> {
				Counter counter = context.getBean(Counter.class);
				assertThat(counter.count("k1")).isEqualTo(1);
				assertThat(counter.count("k1")).isEqualTo(1);
				assertThat(counter.runs()).isOne();
			});
	}

	@Test
	void anApplicationWithoutEngineFailsRatherThanRunAnnotatedMethodsUnprotected() {
		new ReactiveWebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class,
					IdempotencyMethodAutoConfiguration.class, IdempotentMethodsCheckAutoConfiguration.class))
			.withPropertyValues("idempotency.reactive.enabled=false")
			.withBean(Counter.class)
			.run((context) -> assertThat(context).getFailure()
				.hasMessageContaining("1 method(s) are annotated with @Idempotent and a key, but this application has"
						+ " no idempotency engine")
				.hasMessageContaining(Counter.class.getName() + ".count"));
	}

	@Test
	void anApplicationWithoutEngineStartsWhenDisabledOrWithoutKeyedMethods() {
		ReactiveWebApplicationContextRunner plain = new ReactiveWebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class,
					IdempotencyMethodAutoConfiguration.class, IdempotentMethodsCheckAutoConfiguration.class))
			.withPropertyValues("idempotency.reactive.enabled=false");
		plain.withBean(Plain.class).run((context) -> assertThat(context).hasNotFailed());
		plain.withBean(Counter.class)
			.withPropertyValues("idempotency.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void theCheckStandsAsideWhenTheAdvisorIsThere() {
		this.runner.withConfiguration(AutoConfigurations.of(IdempotentMethodsCheckAutoConfiguration.class))
			.withBean(Counter.class)
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(IdempotentMethodsCheckAutoConfiguration.class));
	}

	static class FormerCounter {

		private final AtomicInteger runs = new AtomicInteger();

		@SuppressWarnings("deprecation")
		@dev.idempotency.spring.web.Idempotent(policy = "counts", key = "#p0")
		int count(String key) {
			return this.runs.incrementAndGet();
		}

	}

	static class Counter {

		private final AtomicInteger runs = new AtomicInteger();

		int runs() {
			return this.runs.get();
		}

		@Idempotent(key = "#p0")
		int count(String key) {
			int run = this.runs.incrementAndGet();
			if (key.equals("bad")) {
				throw new IllegalArgumentException("bad key");
			}
			return run;
		}

	}

	static class First {

		static class OrderService {

			@Idempotent(key = "#p0")
			String place(String id) {
				return "first";
			}

		}

	}

	static class Second {

		static class OrderService {

			@Idempotent(key = "#p0")
			String place(String id) {
				return "second";
			}

			@Idempotent(key = "#p0")
			String place(String id, int count) {
				return "second " + count;
			}

			@Idempotent(key = "#p0")
			String place(String id, String[] items) {
				return "second " + List.of(items);
			}

		}

	}

	interface Shape {

	}

	record Circle(int radius) implements Shape {

	}

	record Drawing(String name, Shape shape) {

	}

	static class InterfaceResult {

		@Idempotent(key = "#p0")
		Shape shape(String key) {
			return new Circle(1);
		}

	}

	static class NestedInterfaceResult {

		private final AtomicInteger runs = new AtomicInteger();

		int runs() {
			return this.runs.get();
		}

		@Idempotent(key = "#p0")
		Drawing draw(String key) {
			return new Drawing("circle", new Circle(this.runs.incrementAndGet()));
		}

	}

	// its property is declared as an interface, read as a record: Boot's mapper writes
	// and reads it back
	static class AsImplResult {

		private final AtomicInteger runs = new AtomicInteger();

		int runs() {
			return this.runs.get();
		}

		@Idempotent(key = "#p0")
		StoredResultsTests.AsImpl make(String key) {
			return new StoredResultsTests.AsImpl("a" + key,
					new StoredResultsTests.Circle(this.runs.incrementAndGet() + 0.5));
		}

	}

	static class ObjectResult {

		@Idempotent(key = "#p0")
		Object any(String key) {
			return new Circle(1);
		}

	}

	/**
	 * Written as {@code "#text"}, but read only from {@code "@text"}: the start-up check
	 * cannot see it, the read-back of the first result does.
	 *
	 * @param text the text
	 */
	record Tag(String text) {

		@JsonCreator(mode = JsonCreator.Mode.DELEGATING)
		static Tag parse(String json) {
			if (!json.startsWith("@")) {
				throw new IllegalArgumentException("not a tag: " + json);
			}
			return new Tag(json.substring(1));
		}

		@JsonValue
		String json() {
			return "#" + this.text;
		}

	}

	static class TagResult {

		private final AtomicInteger runs = new AtomicInteger();

		int runs() {
			return this.runs.get();
		}

		@Idempotent(key = "#p0")
		Tag tag(String key) {
			return new Tag(String.valueOf(this.runs.incrementAndGet()));
		}

	}

	record Account(String id) {

	}

	@Controller
	static class EntityHandler {

		@PostMapping("/accounts/{id}")
		@Idempotent(key = "#p0")
		ResponseEntity<Account> open(@PathVariable String id) {
			return ResponseEntity.ok(new Account(id));
		}

	}

	/**
	 * A type Jackson cannot write, as protobuf messages: a getter returns the message
	 * itself.
	 */
	static final class Message {

		private final String text;

		Message(String text) {
			this.text = text;
		}

		String text() {
			return this.text;
		}

		@JsonProperty("defaultInstanceForType")
		Message getDefaultInstanceForType() {
			return this;
		}

		byte[] toByteArray() {
			return this.text.getBytes(StandardCharsets.UTF_8);
		}

	}

	static class MessageCodec implements IdempotentResultCodec {

		@Override
		public boolean supports(Type type) {
			return type == Message.class;
		}

		@Override
		public String contentType() {
			return "application/x-protobuf";
		}

		@Override
		public byte[] write(Object result, Type type) {
			return ((Message) result).toByteArray();
		}

		@Override
		public Object read(byte[] body, Type type) {
			return new Message(new String(body, StandardCharsets.UTF_8));
		}

	}

	static class Messages {

		private final AtomicInteger runs = new AtomicInteger();

		int runs() {
			return this.runs.get();
		}

		@Idempotent(key = "#p0")
		Message send(String key) {
			return new Message("message " + this.runs.incrementAndGet());
		}

	}

	static class Plain {

		int run() {
			return 1;
		}

	}

	@Controller
	static class Handler {

		@PostMapping("/handled")
		@Idempotent
		String handle() {
			return "ok";
		}

	}

	static class NoKey {

		@Idempotent
		int run() {
			return 1;
		}

	}

	static class Later {

		@Idempotent(key = "#p0")
		CompletableFuture<String> run(String key) {
			return CompletableFuture.completedFuture(key);
		}

	}

	static class UnknownPolicy {

		@Idempotent(policy = "nowhere", key = "#p0")
		String run(String key) {
			return key;
		}

	}

	static class TransactionalPolicy {

		@Idempotent(policy = "ledger", key = "#p0")
		String run(String key) {
			return key;
		}

	}

	static class BadExpression {

		@Idempotent(key = "#id +")
		String run(String id) {
			return id;
		}

	}

	static class BadOperation {

		@Idempotent(key = "#p0", operation = "a b")
		String run(String id) {
			return id;
		}

	}

	@Idempotent(key = "#p0")
	static class KeyOnClass {

		List<String> run(String id) {
			return List.of(id);
		}

	}

	public static class Opaque extends RuntimeException {

		Opaque(int code) {
			super("code " + code);
		}

	}

}
