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

import java.net.URI;
import java.security.Principal;
import java.util.List;
import java.util.UUID;

import dev.idempotency.spring.Idempotent;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Opens and reads the caller's accounts.
 *
 * @author Idempotency contributors
 */
@RestController
@RequestMapping("/accounts")
class AccountController {

	private final AccountService accounts;

	AccountController(AccountService accounts) {
		this.accounts = accounts;
	}

	// Database-only work: the "accounts" policy is transactional, so the account row, the
	// key and the stored response commit together, and a retried "open account" never
	// opens a second account, even after a crash between the insert and the response.
	@PostMapping
	@Idempotent("accounts")
	ResponseEntity<Account> open(@RequestBody OpenAccountRequest request, Principal principal) {
		Account account = this.accounts.open(principal.getName(), request.currency(), request.initialBalance());
		return ResponseEntity.status(HttpStatus.CREATED)
			.location(URI.create("/accounts/" + account.id()))
			.body(account);
	}

	@GetMapping("/{id}")
	Account get(@PathVariable UUID id, Principal principal) {
		return this.accounts.find(id, principal.getName())
			.orElseThrow(() -> PaymentException.notFound("Account " + id));
	}

	@GetMapping
	List<Account> list(Principal principal) {
		return this.accounts.list(principal.getName());
	}

	/**
	 * Body of {@code POST /accounts}.
	 *
	 * @param currency ISO 4217 code
	 * @param initialBalance opening balance in minor units
	 */
	record OpenAccountRequest(@Nullable String currency, long initialBalance) {

	}

}
