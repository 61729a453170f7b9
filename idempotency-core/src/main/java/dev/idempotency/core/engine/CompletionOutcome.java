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

/**
 * How an {@link Execution} ended.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public enum CompletionOutcome {

	/**
	 * The response was stored; retries replay it.
	 */
	STORED,

	/**
	 * The key was released (the handler failed or its status is not storable); the next
	 * request runs the handler again.
	 */
	RELEASED,

	/**
	 * The store rejected the write because another caller took the key over after this
	 * execution's lease lapsed. Nothing was written; the event is logged and counted.
	 */
	FENCED,

	/**
	 * The store failed while completing or releasing. The record stays in progress until
	 * its lease lapses; in the transactional mode, where the store's work is part of the
	 * request's transaction, a failed commit also ends a request this way, and nothing of
	 * it persisted, its claim included.
	 */
	FAILED

}
