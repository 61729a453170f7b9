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

package dev.idempotency.test;

import java.util.Map;

import dev.idempotency.core.store.EncryptingIdempotencyStore;
import dev.idempotency.core.store.EncryptionKeyRing;
import dev.idempotency.core.store.IdempotencyStore;
import dev.idempotency.core.store.InMemoryIdempotencyStore;

/**
 * The whole contract kit on {@link EncryptingIdempotencyStore} over the in-memory store:
 * encryption changes nothing a caller of the store can observe.
 *
 * @author Idempotency contributors
 */
class EncryptingIdempotencyStoreContractTests extends AbstractIdempotencyStoreTests {

	private static final EncryptionKeyRing KEY_RING = EncryptionKeyRing.ofBase64("k1",
			Map.of("k1", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="));

	@Override
	protected IdempotencyStore createStore() {
		return new EncryptingIdempotencyStore(new InMemoryIdempotencyStore(), KEY_RING);
	}

	@Override
	protected int raceRounds() {
		return 10;
	}

}
