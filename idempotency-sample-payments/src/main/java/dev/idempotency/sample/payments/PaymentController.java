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

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.spring.Idempotent;
import dev.idempotency.spring.web.IdempotencyFilter;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestAttribute;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Takes and reads the caller's payments.
 *
 * @author Idempotency contributors
 */
@RestController
@RequestMapping("/payments")
class PaymentController {

	private final PaymentService payments;

	PaymentController(PaymentService payments) {
		this.payments = payments;
	}

	// the "payments" policy of application.yml: a key is required, records kept 48 hours
	@PostMapping
	@Idempotent("payments")
	ResponseEntity<Payment> pay(@RequestBody PaymentService.PaymentRequest request,
			@RequestAttribute(IdempotencyFilter.KEY_ATTRIBUTE) IdempotencyKey key, Principal principal) {
		Payment payment = this.payments.pay(principal.getName(), key.key(), request);
		return ResponseEntity.status(HttpStatus.CREATED)
			.location(URI.create("/payments/" + payment.id()))
			.body(payment);
	}

	@GetMapping("/{id}")
	Payment get(@PathVariable UUID id, Principal principal) {
		return this.payments.find(id, principal.getName())
			.orElseThrow(() -> PaymentException.notFound("Payment " + id));
	}

	@GetMapping
	List<Payment> list(@RequestParam UUID accountId, Principal principal) {
		return this.payments.list(accountId, principal.getName());
	}

}
