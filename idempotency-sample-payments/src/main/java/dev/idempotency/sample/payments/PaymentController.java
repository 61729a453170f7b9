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
import java.time.Duration;
import java.util.List;
import java.util.UUID;

import dev.idempotency.core.IdempotencyKey;
import dev.idempotency.spring.web.IdempotencyFilter;
import dev.idempotency.spring.web.Idempotent;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestAttribute;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
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

	private static final Duration MAX_PAUSE = Duration.ofSeconds(60);

	private final PaymentService payments;

	private final DemoProperties demo;

	PaymentController(PaymentService payments, DemoProperties demo) {
		this.payments = payments;
		this.demo = demo;
	}

	// the "payments" policy (application.yml) requires a key and keeps records for 48
	// hours
	@PostMapping
	@Idempotent("payments")
	ResponseEntity<Payment> pay(@RequestBody PaymentService.PaymentRequest request,
			@RequestAttribute(IdempotencyFilter.KEY_ATTRIBUTE) IdempotencyKey key, Principal principal,
			@RequestHeader(name = "Demo-Gateway-Delay-Ms", required = false) @Nullable Long delayMillis,
			@RequestHeader(name = "Demo-Gateway-Fault", required = false) @Nullable Integer faultStatus,
			@RequestHeader(name = "Demo-Delay-After-Commit-Ms", required = false) @Nullable Long afterCommitMillis) {
		Payment payment = this.payments.pay(principal.getName(), key.key(), request,
				demoBehaviour(delayMillis, faultStatus));
		pauseAfterCommit(afterCommitMillis);
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

	// Demo only: the payment is committed but the response is not yet stored, the
	// moment a crash test kills the process at. Ignored unless payments.demo.enabled.
	private void pauseAfterCommit(@Nullable Long millis) {
		if (!this.demo.enabled() || millis == null || millis <= 0) {
			return;
		}
		try {
			Thread.sleep(Math.min(millis, MAX_PAUSE.toMillis()));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private PaymentGateway.DemoBehaviour demoBehaviour(@Nullable Long delayMillis, @Nullable Integer faultStatus) {
		if (!this.demo.enabled()) {
			return PaymentGateway.DemoBehaviour.NONE;
		}
		if (faultStatus != null && (faultStatus < 500 || faultStatus > 599)) {
			throw PaymentException.invalid("Demo-Gateway-Fault must be a 5xx status");
		}
		long delay = (delayMillis != null) ? Math.max(0, delayMillis) : 0;
		return new PaymentGateway.DemoBehaviour(Duration.ofMillis(delay), (faultStatus != null) ? faultStatus : 0);
	}

}
