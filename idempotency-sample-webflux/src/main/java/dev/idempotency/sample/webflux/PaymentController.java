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

package dev.idempotency.sample.webflux;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import dev.idempotency.spring.Idempotent;
import reactor.core.publisher.Mono;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The payments endpoint. A charge takes a while (the gateway's round trip, here a timer),
 * long enough for a retry to arrive while it runs.
 *
 * @author Idempotency contributors
 */
@RestController
class PaymentController {

	private static final Duration GATEWAY_TIME = Duration.ofMillis(300);

	private final AtomicLong charges = new AtomicLong();

	@PostMapping("/payments")
	@Idempotent
	Mono<ResponseEntity<Object>> pay(@RequestBody Mono<PaymentRequest> body) {
		return body.flatMap((request) -> {
			if (request.amount() <= 0 || request.account() == null || request.currency() == null) {
				// a rejection is stored too: a retry of the same request gets the same
				// answer
				return Mono.just(ResponseEntity.unprocessableContent()
					.body(Map.of("error", "account, currency and a positive amount are required")));
			}
			return Mono.delay(GATEWAY_TIME).map((tick) -> {
				this.charges.incrementAndGet();
				Payment payment = new Payment("pay-" + UUID.randomUUID(), request.account(), request.amount(),
						request.currency(), "ACCEPTED");
				return ResponseEntity.status(HttpStatus.CREATED).body(payment);
			});
		});
	}

	@GetMapping("/charges")
	Mono<Map<String, Long>> charges() {
		return Mono.fromSupplier(() -> Map.of("charges", this.charges.get()));
	}

	/**
	 * A payment to make.
	 *
	 * @param account the account charged
	 * @param amount the amount, in minor units
	 * @param currency the ISO 4217 currency
	 */
	record PaymentRequest(String account, long amount, String currency) {
	}

	/**
	 * A payment made.
	 *
	 * @param id the payment's id
	 * @param account the account charged
	 * @param amount the amount, in minor units
	 * @param currency the ISO 4217 currency
	 * @param status the gateway's answer
	 */
	record Payment(String id, String account, long amount, String currency, String status) {
	}

}
