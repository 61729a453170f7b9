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

package dev.idempotency.spring.autoconfigure;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.engine.CompletionOutcome;
import dev.idempotency.core.engine.Decision;
import dev.idempotency.core.engine.IdempotencyListener;
import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.core.store.IdempotencyStoreException;
import dev.idempotency.spring.store.tiered.CircuitBreakerState;
import dev.idempotency.spring.store.tiered.TieredStoreListener;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Tests for {@link CompositeListener}.
 *
 * @author Idempotency contributors
 */
class CompositeListenerTests {

	private static final IdempotencyKey KEY = IdempotencyKey.global("key-1");

	private static final IdempotencyPolicy POLICY = IdempotencyPolicy.defaults();

	private final List<String> calls = new CopyOnWriteArrayList<>();

	@Test
	void everyEngineListenerIsToldInOrderEvenWhenOneThrows() {
		IdempotencyListener composite = CompositeListener.of(IdempotencyListener.class,
				List.of(new Recording("first", this.calls, true), new Recording("second", this.calls, false)));
		composite.onDecision(KEY, POLICY, new Decision.Mismatch());
		composite.onCompletion(KEY, POLICY, CompletionOutcome.STORED);
		composite.onOwnershipLost(KEY, POLICY);
		composite.onStoreFailure(KEY, "acquire", new IdempotencyStoreException("down"));
		assertThat(this.calls).containsExactly("first:decision", "second:decision", "first:completion",
				"second:completion", "first:ownership-lost", "second:ownership-lost", "first:store-failure",
				"second:store-failure");
	}

	@Test
	void everyTieredStoreListenerIsToldInOrderEvenWhenOneThrows() {
		TieredStoreListener failing = new TieredStoreListener() {

			@Override
			public void onFallback(String operation, @Nullable Exception exception) {
				CompositeListenerTests.this.calls.add("first:fallback:" + operation);
				throw new IllegalStateException("first failed");
			}

		};
		TieredStoreListener recording = new TieredStoreListener() {

			@Override
			public void onFallback(String operation, @Nullable Exception exception) {
				CompositeListenerTests.this.calls.add("second:fallback:" + operation + ":" + exception);
			}

			@Override
			public void onBreakerStateChange(CircuitBreakerState from, CircuitBreakerState to) {
				CompositeListenerTests.this.calls.add("second:breaker:" + from + ">" + to);
			}

		};
		TieredStoreListener composite = CompositeListener.of(TieredStoreListener.class, List.of(failing, recording));
		composite.onFallback("acquire", null);
		composite.onBreakerStateChange(CircuitBreakerState.CLOSED, CircuitBreakerState.OPEN);
		assertThat(this.calls).containsExactly("first:fallback:acquire", "second:fallback:acquire:null",
				"second:breaker:CLOSED>OPEN");
	}

	@Test
	void aSingleListenerIsUsedAsItIs() {
		IdempotencyListener only = new Recording("only", this.calls, false);
		assertThat(CompositeListener.of(IdempotencyListener.class, List.of(only))).isSameAs(only);
	}

	@Test
	void errorsAreNotSwallowed() {
		TieredStoreListener failing = new TieredStoreListener() {

			@Override
			public void onFallback(String operation, @Nullable Exception exception) {
				throw new AssertionError("simulated");
			}

		};
		TieredStoreListener composite = CompositeListener.of(TieredStoreListener.class,
				List.of(failing, TieredStoreListener.NONE));
		assertThatExceptionOfType(AssertionError.class).isThrownBy(() -> composite.onFallback("find", null));
	}

	@Test
	void objectMethodsDoNotReachTheListeners() {
		IdempotencyListener composite = CompositeListener.of(IdempotencyListener.class,
				List.of(new Recording("first", this.calls, true), new Recording("second", this.calls, true)));
		assertThat(composite).isEqualTo(composite).isNotEqualTo(IdempotencyListener.NONE);
		assertThat(composite.hashCode()).isEqualTo(System.identityHashCode(composite));
		assertThat(composite.toString()).isEqualTo("Composite IdempotencyListener of 2 listeners");
		assertThat(this.calls).isEmpty();
	}

	@Test
	void onlyInterfacesWhoseMethodsReturnNothingCanBeCombined() {
		assertThatIllegalArgumentException().isThrownBy(() -> CompositeListener.of(Comparable.class, List.of("a", "b")))
			.withMessageContaining("does not return void");
	}

	private record Recording(String name, List<String> calls, boolean fail) implements IdempotencyListener {

		@Override
		public void onDecision(IdempotencyKey key, IdempotencyPolicy policy, Decision decision) {
			record("decision");
		}

		@Override
		public void onCompletion(IdempotencyKey key, IdempotencyPolicy policy, CompletionOutcome outcome) {
			record("completion");
		}

		@Override
		public void onOwnershipLost(IdempotencyKey key, IdempotencyPolicy policy) {
			record("ownership-lost");
		}

		@Override
		public void onStoreFailure(IdempotencyKey key, String operation, IdempotencyStoreException failure) {
			record("store-failure");
		}

		private void record(String event) {
			this.calls.add(this.name + ":" + event);
			if (this.fail) {
				throw new IllegalStateException(this.name + " failed on " + event);
			}
		}

	}

}
