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

package dev.idempotency.sample.payments;

import java.util.List;
import java.util.Optional;
import java.util.UUID;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Service;

/**
 * Opens and reads accounts.
 *
 * @author Idempotency contributors
 */
@Service
public class AccountService {

	private final JdbcClient jdbc;

	AccountService(JdbcClient jdbc) {
		this.jdbc = jdbc;
	}

	/**
	 * Open an account.
	 * @param owner the owner
	 * @param currency the ISO 4217 currency code
	 * @param initialBalance opening balance in minor units
	 * @return the account
	 */
	public Account open(String owner, String currency, long initialBalance) {
		PaymentValidation.checkCurrency(currency);
		if (initialBalance < 0) {
			throw PaymentException.invalid("initialBalance must not be negative");
		}
		Account account = new Account(UUID.randomUUID(), owner, currency, initialBalance);
		this.jdbc.sql("INSERT INTO accounts (id, owner, currency, balance) VALUES (?, ?, ?, ?)")
			.params(account.id(), owner, currency, initialBalance)
			.update();
		return account;
	}

	/**
	 * Find an account of the given owner.
	 * @param id the account's id
	 * @param owner the owner
	 * @return the account, empty if it does not exist or belongs to someone else
	 */
	public Optional<Account> find(UUID id, String owner) {
		return this.jdbc.sql("SELECT id, owner, currency, balance FROM accounts WHERE id = ? AND owner = ?")
			.params(id, owner)
			.query(Account.class)
			.optional();
	}

	/**
	 * List the accounts of an owner.
	 * @param owner the owner
	 * @return the accounts, oldest first
	 */
	public List<Account> list(String owner) {
		return this.jdbc.sql("SELECT id, owner, currency, balance FROM accounts WHERE owner = ? ORDER BY created_at")
			.param(owner)
			.query(Account.class)
			.list();
	}

}
