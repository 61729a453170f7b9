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
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link CompositeIdempotencyListener}.
 *
 * @author Idempotency contributors
 */
class CompositeIdempotencyListenerTests {

	private static final IdempotencyKey KEY = IdempotencyKey.global("key-1");

	private static final IdempotencyPolicy POLICY = IdempotencyPolicy.defaults();

	@Test
	void everyListenerIsToldEvenWhenOneThrows() {
		List<String> calls = new CopyOnWriteArrayList<>();
		IdempotencyListener composite = new CompositeIdempotencyListener(
				List.of(new Recording("first", calls, true), new Recording("second", calls, false)));
		composite.onDecision(KEY, POLICY, new Decision.Mismatch());
		composite.onCompletion(KEY, POLICY, CompletionOutcome.STORED);
		composite.onOwnershipLost(KEY, POLICY);
		composite.onStoreFailure(KEY, "acquire", new IdempotencyStoreException("down"));
		assertThat(calls).containsExactly("first:decision", "second:decision", "first:completion", "second:completion",
				"first:ownership-lost", "second:ownership-lost", "first:store-failure", "second:store-failure");
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
