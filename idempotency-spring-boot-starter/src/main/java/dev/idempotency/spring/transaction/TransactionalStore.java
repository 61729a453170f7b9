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

package dev.idempotency.spring.transaction;

import javax.sql.DataSource;

/**
 * A store whose claims can be held by a transaction of the application's
 * {@code DataSource}: the transactional mode. The PostgreSQL store is one, and so is the
 * tiered store whose claims PostgreSQL holds (the durable claim).
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public interface TransactionalStore {

	/**
	 * Return the data source whose transactions this store's claims join, after checking
	 * that they can.
	 * @return the data source
	 * @throws IllegalStateException if this store, as configured, cannot make a claim
	 * part of a transaction (the message says why and what to change)
	 */
	DataSource getTransactionalDataSource();

	/**
	 * Prepare for claims held by transactions not yet committed: from now on every claim
	 * of the store makes sure that it never waits for such a transaction to end (the
	 * PostgreSQL store takes an advisory lock on the key).
	 */
	void enableTransactionalClaims();

}
