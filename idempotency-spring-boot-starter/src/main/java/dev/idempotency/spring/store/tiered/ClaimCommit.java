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

package dev.idempotency.spring.store.tiered;

import dev.idempotency.spring.store.AsynchronousClaimCommit;
import dev.idempotency.spring.store.UnclaimedCompletion;

/**
 * How {@link TieredIdempotencyStore} commits the durable claim of a first request in
 * {@link TieredClaimMode#DURABLE durable claim mode}, when the fast tier holds the same
 * claim.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 * @see TieredIdempotencyStore#setClaimCommit(ClaimCommit)
 */
public enum ClaimCommit {

	/**
	 * The durable claim is on durable storage before the handler runs: no crash of either
	 * tier, or of both, lets a duplicate run the handler again. The default.
	 */
	SYNCHRONOUS,

	/**
	 * The durable claim is committed without waiting for durable storage (PostgreSQL's
	 * {@code synchronous_commit = off} for that one statement): it is visible to every
	 * instance at once, as a synchronous one, but a crash of the durable tier's server
	 * within a short window after it (at most three times {@code wal_writer_delay}, 600
	 * ms by default) may lose it. While the fast tier still holds the claim, duplicates
	 * are turned away there, and the owner writes the lost claim again at its next lease
	 * renewal or stores its response at completion as if unclaimed. A duplicate runs the
	 * handler a second time only if the fast tier loses the same claim before then (a
	 * Redis restart without persistence, or a failover, close to the PostgreSQL crash).
	 * Saves the claim's wait for its flush to disk.
	 * <p>
	 * Claims made while the fast tier is skipped (failing, or its circuit breaker open),
	 * claims of the transactional mode, and takeovers of lapsed or expired records are
	 * always committed synchronously: there, the durable claim is the only one. The
	 * stored response is always committed synchronously. Requires a durable tier that
	 * implements {@link AsynchronousClaimCommit} and {@link UnclaimedCompletion}.
	 */
	ASYNCHRONOUS

}
