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

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import org.jspecify.annotations.Nullable;

/**
 * An entry of the ledger written through JPA, for the test of the transactional mode
 * under {@code JpaTransactionManager}.
 *
 * @author Idempotency contributors
 */
@Entity
@Table(name = "jpa_entry")
class JpaLedgerEntry {

	static final String DDL = """
			CREATE TABLE IF NOT EXISTS jpa_entry (
				id bigserial PRIMARY KEY,
				idem_key text NOT NULL,
				body text NOT NULL
			)
			""";

	@Id
	@GeneratedValue(strategy = GenerationType.IDENTITY)
	private @Nullable Long id;

	@Column(name = "idem_key", nullable = false)
	private String key;

	@Column(nullable = false)
	private String body;

	protected JpaLedgerEntry() {
		this.key = "";
		this.body = "";
	}

	JpaLedgerEntry(String key, String body) {
		this.key = key;
		this.body = body;
	}

	@Nullable Long getId() {
		return this.id;
	}

}
