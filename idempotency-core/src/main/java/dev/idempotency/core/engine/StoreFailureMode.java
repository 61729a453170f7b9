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
 * What to do when no store can answer whether a request may run.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public enum StoreFailureMode {

	/**
	 * Refuse the request (HTTP 503 with {@code Retry-After}) without running the handler.
	 * The safe default: nothing runs that could run twice.
	 */
	FAIL_CLOSED,

	/**
	 * Run the handler without idempotency protection, log and count it. Only for
	 * endpoints where an occasional duplicate is cheaper than unavailability.
	 */
	FAIL_OPEN

}
