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

package dev.idempotency.core.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.OwnerToken;
import dev.idempotency.core.StoredResponse;
import dev.idempotency.core.store.IdempotencyStoreException;
import dev.idempotency.core.store.InMemoryIdempotencyStore;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link Decision#handle(Decision.Handler)}.
 *
 * @author Idempotency contributors
 */
class DecisionTests {

	private final Decision.Handler<String, RuntimeException> names = new Names();

	@Test
	void eachDecisionCallsTheHandlersMethodForIt() {
		IdempotencyStoreException failure = new IdempotencyStoreException("down");
		Execution execution = new Execution(new IdempotencyEngine(new InMemoryIdempotencyStore()),
				IdempotencyKey.global("k"), IdempotencyPolicy.defaults(), OwnerToken.generate());
		assertThat(new Decision.Execute(execution).handle(this.names)).isEqualTo("execute");
		assertThat(
				new Decision.Replay(new StoredResponse(200, List.of(), new byte[0]), Instant.EPOCH).handle(this.names))
			.isEqualTo("replay");
		assertThat(new Decision.InProgress(Duration.ofSeconds(1)).handle(this.names)).isEqualTo("inProgress");
		assertThat(new Decision.Mismatch().handle(this.names)).isEqualTo("mismatch");
		assertThat(new Decision.Unavailable(Duration.ofSeconds(1), failure).handle(this.names))
			.isEqualTo("unavailable");
		assertThat(new Decision.Unprotected(failure).handle(this.names)).isEqualTo("unprotected");
	}

	private static final class Names implements Decision.Handler<String, RuntimeException> {

		@Override
		public String execute(Decision.Execute decision) {
			return "execute";
		}

		@Override
		public String replay(Decision.Replay decision) {
			return "replay";
		}

		@Override
		public String inProgress(Decision.InProgress decision) {
			return "inProgress";
		}

		@Override
		public String mismatch(Decision.Mismatch decision) {
			return "mismatch";
		}

		@Override
		public String unavailable(Decision.Unavailable decision) {
			return "unavailable";
		}

		@Override
		public String unprotected(Decision.Unprotected decision) {
			return "unprotected";
		}

	}

}
