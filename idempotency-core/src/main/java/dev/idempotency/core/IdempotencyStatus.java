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

package dev.idempotency.core;

/**
 * States of a stored idempotency record.
 * <p>
 * The full lifecycle is {@code ABSENT -> PROCESSING -> COMPLETED -> EXPIRED}, where
 * {@code ABSENT} and {@code EXPIRED} are the same thing: no record. A stored record is
 * therefore always in one of the two states below.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public enum IdempotencyStatus {

	/**
	 * The first request's handler is running. The record has an owner whose lease is kept
	 * alive by heartbeats; when the lease lapses (the owner crashed) the next request
	 * with the same fingerprint takes the key over. Duplicates are answered as in
	 * progress.
	 */
	PROCESSING,

	/**
	 * The handler finished with a storable response. Retries with the same fingerprint
	 * are answered with the stored response until the record expires.
	 */
	COMPLETED

}
