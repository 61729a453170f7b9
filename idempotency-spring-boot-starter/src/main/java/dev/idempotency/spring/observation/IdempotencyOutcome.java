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

package dev.idempotency.spring.observation;

import java.util.Locale;

/**
 * How the idempotency filter answered a request to an idempotent endpoint, or
 * {@code IdempotencyTemplate} a call (those that apply to calls: not
 * {@link #UNAUTHENTICATED} nor {@link #TOO_LARGE}). The {@link #value() values} are those
 * of the {@code outcome} key of the {@code idempotency.request} and
 * {@code idempotency.call} observations, and so of the {@code outcome} tag of the timers
 * that Micrometer's meter observation handler derives from them.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public enum IdempotencyOutcome {

	/**
	 * The handler ran under the key.
	 */
	EXECUTED,

	/**
	 * The stored response of an earlier request with the same key was replayed.
	 */
	REPLAYED,

	/**
	 * An earlier request with the same key is still running (409).
	 */
	IN_PROGRESS,

	/**
	 * The key was already used for a different request (422).
	 */
	MISMATCH,

	/**
	 * The endpoint requires a key and the request has none (400).
	 */
	MISSING_KEY,

	/**
	 * The key is malformed or was sent more than once (400).
	 */
	INVALID_KEY,

	/**
	 * The request has no authenticated principal and such requests are refused (403).
	 */
	UNAUTHENTICATED,

	/**
	 * The request body exceeds the policy's maximum (413).
	 */
	TOO_LARGE,

	/**
	 * The store failed and the policy fails closed (503).
	 */
	STORE_UNAVAILABLE,

	/**
	 * The store failed and the policy fails open: the handler ran without protection.
	 */
	FAIL_OPEN;

	private final String value = name().toLowerCase(Locale.ROOT);

	/**
	 * Return the tag value of this outcome, such as {@code in_progress}.
	 * @return the lower-case name
	 */
	public String value() {
		return this.value;
	}

}
