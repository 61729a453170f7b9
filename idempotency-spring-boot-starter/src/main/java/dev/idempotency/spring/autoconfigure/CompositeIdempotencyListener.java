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
import java.util.function.Consumer;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.core.engine.CompletionOutcome;
import dev.idempotency.core.engine.Decision;
import dev.idempotency.core.engine.IdempotencyListener;
import dev.idempotency.core.engine.IdempotencyPolicy;
import dev.idempotency.core.store.IdempotencyStoreException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * An {@link IdempotencyListener} that tells several others, in order. One that throws is
 * logged and skipped, so the others are still told.
 *
 * @author Idempotency contributors
 */
final class CompositeIdempotencyListener implements IdempotencyListener {

	private static final Log logger = LogFactory.getLog(CompositeIdempotencyListener.class);

	private final IdempotencyListener[] listeners;

	CompositeIdempotencyListener(List<IdempotencyListener> listeners) {
		this.listeners = listeners.toArray(new IdempotencyListener[0]);
	}

	@Override
	public void onDecision(IdempotencyKey key, IdempotencyPolicy policy, Decision decision) {
		tellEach("onDecision", key, (listener) -> listener.onDecision(key, policy, decision));
	}

	@Override
	public void onCompletion(IdempotencyKey key, IdempotencyPolicy policy, CompletionOutcome outcome) {
		tellEach("onCompletion", key, (listener) -> listener.onCompletion(key, policy, outcome));
	}

	@Override
	public void onOwnershipLost(IdempotencyKey key, IdempotencyPolicy policy) {
		tellEach("onOwnershipLost", key, (listener) -> listener.onOwnershipLost(key, policy));
	}

	@Override
	public void onStoreFailure(IdempotencyKey key, String operation, IdempotencyStoreException failure) {
		tellEach("onStoreFailure", key, (listener) -> listener.onStoreFailure(key, operation, failure));
	}

	private void tellEach(String method, IdempotencyKey key, Consumer<IdempotencyListener> call) {
		for (IdempotencyListener listener : this.listeners) {
			try {
				call.accept(listener);
			}
			catch (RuntimeException ex) {
				logger.warn("Listener " + listener.getClass().getName() + " failed in " + method + " for key '" + key
						+ "'; ignoring it", ex);
			}
		}
	}

}
