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

/**
 * The transactional mode: a request (or a call) whose claim, whose handler's own writes
 * and whose stored response commit in one transaction of the application's
 * {@code DataSource}, or not at all.
 * <p>
 * {@link dev.idempotency.spring.transaction.RequestTransactions} begins the transaction
 * of a request, {@link dev.idempotency.spring.transaction.RequestTransaction} ends it and
 * says how it ended, and {@link dev.idempotency.spring.transaction.TransactionalClaims}
 * tells the stores whose operations join it. See docs/stores/postgresql.md, "The
 * transactional mode", for every way such a request ends.
 */
@NullMarked
package dev.idempotency.spring.transaction;

import org.jspecify.annotations.NullMarked;
