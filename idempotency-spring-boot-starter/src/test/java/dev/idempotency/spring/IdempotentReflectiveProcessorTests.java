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

package dev.idempotency.spring;

import java.nio.ByteBuffer;
import java.util.List;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.annotation.ReflectiveRuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.http.ResponseEntity;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link IdempotentReflectiveProcessor}, through the registrar that Spring's
 * AOT processing runs on every bean class: what an idempotent method's interceptor
 * reaches reflectively in the application's types is registered, and nothing of an HTTP
 * endpoint's types, which Spring MVC registers.
 *
 * @author Idempotency contributors
 */
class IdempotentReflectiveProcessorTests {

	private final RuntimeHints hints = new RuntimeHints();

	IdempotentReflectiveProcessorTests() {
		new ReflectiveRuntimeHintsRegistrar().registerRuntimeHints(this.hints, Refunds.class, Events.class,
				PaymentEndpoint.class, LegacyRefunds.class, ControllerWithIdempotentClass.class);
	}

	@Test
	void anIdempotentMethodsResultAndArgumentsAreBoundAndTheMethodInvocable() {
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Refunds.class, "refund")).accepts(this.hints);
		// the key expression #command.refundId and the fingerprint's JSON
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(RefundCommand.class, "refundId"))
			.accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection()
			.onType(RefundCommand.class)
			.withMemberCategory(MemberCategory.INVOKE_DECLARED_CONSTRUCTORS)).accepts(this.hints);
		// the stored result, written and read by Jackson, down to its properties' types
		assertThat(RuntimeHintsPredicates.reflection()
			.onType(Receipt.class)
			.withMemberCategory(MemberCategory.INVOKE_DECLARED_CONSTRUCTORS)).accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Receipt.class, "lines")).accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection()
			.onType(Line.class)
			.withMemberCategory(MemberCategory.INVOKE_DECLARED_CONSTRUCTORS)).accepts(this.hints);
	}

	@Test
	void aListenersPayloadIsBoundAndItsBinaryFormsInvocable() {
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Events.class, "on")).accepts(this.hints);
		// the value of the ConsumerRecord<String, Event>
		assertThat(RuntimeHintsPredicates.reflection()
			.onType(Event.class)
			.withMemberCategory(MemberCategory.INVOKE_DECLARED_CONSTRUCTORS)).accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Event.class, "toByteArray"))
			.accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Event.class, "toByteBuffer"))
			.accepts(this.hints);
	}

	@Test
	void anHttpEndpointsTypesAreLeftToSpringMvc() {
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(PaymentEndpoint.class, "pay"))
			.accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onType(PaymentRequest.class)).rejects(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onType(ControllerWithIdempotentClass.class)).accepts(this.hints);
	}

	@Test
	void theFormerAnnotationIsProcessedToo() {
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(LegacyRefunds.class, "refund"))
			.accepts(this.hints);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(LegacyCommand.class, "refundId"))
			.accepts(this.hints);
	}

	record RefundCommand(String refundId, long amount) {
	}

	record Line(String text, long amount) {
	}

	record Receipt(String id, List<Line> lines) {
	}

	record PaymentRequest(long amount) {
	}

	record LegacyCommand(String refundId) {
	}

	public static class Event {

		private String id = "";

		public String getId() {
			return this.id;
		}

		public void setId(String id) {
			this.id = id;
		}

		public byte[] toByteArray() {
			return this.id.getBytes();
		}

		public ByteBuffer toByteBuffer() {
			return ByteBuffer.wrap(toByteArray());
		}

	}

	static class Refunds {

		@Idempotent(policy = "refunds", key = "#command.refundId")
		Receipt refund(RefundCommand command) {
			return new Receipt(command.refundId(), List.of());
		}

	}

	static class Events {

		@Idempotent(key = "#record.key()")
		void on(ConsumerRecord<String, Event> record) {
		}

	}

	static class PaymentEndpoint {

		@Idempotent("payments")
		ResponseEntity<String> pay(PaymentRequest request) {
			return ResponseEntity.ok("paid");
		}

	}

	@SuppressWarnings("deprecation")
	static class LegacyRefunds {

		@dev.idempotency.spring.web.Idempotent(key = "#command.refundId")
		String refund(LegacyCommand command) {
			return "refunded";
		}

	}

	@Idempotent
	static class ControllerWithIdempotentClass {

		String handle() {
			return "handled";
		}

	}

}
