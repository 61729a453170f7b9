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

package dev.idempotency.bench.webflux;

import dev.idempotency.spring.Idempotent;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/**
 * The WebFlux half of the HTTP benchmark ({@code src/bench/run-wrk.sh}): the same handler
 * bare ({@code /bare}) and under {@code @Idempotent} ({@code /idem}), answering at once,
 * so that what is measured is the filter's own cost on Reactor Netty, as cases 1, 3 and 4
 * of the servlet benchmark measure it on Tomcat.
 *
 * @author Idempotency contributors
 */
@SpringBootApplication
public class WebFluxBenchApplication {

	/**
	 * Run the application.
	 * @param args the command line arguments
	 */
	public static void main(String[] args) {
		SpringApplication.run(WebFluxBenchApplication.class, args);
	}

	@RestController
	static class BenchController {

		@PostMapping("/bare")
		@ResponseStatus(HttpStatus.CREATED)
		Mono<Receipt> bare(@RequestBody Mono<PaymentRequest> request) {
			return request.map(Receipt::of);
		}

		@PostMapping("/idem")
		@ResponseStatus(HttpStatus.CREATED)
		@Idempotent
		Mono<Receipt> idempotent(@RequestBody Mono<PaymentRequest> request) {
			return request.map(Receipt::of);
		}

	}

	/**
	 * Body of every benchmarked request.
	 *
	 * @param account the account charged
	 * @param amount the amount in minor units
	 * @param currency the ISO currency code
	 * @param reference the client's reference
	 */
	record PaymentRequest(String account, long amount, String currency, String reference) {
	}

	/**
	 * Body of every benchmarked response.
	 *
	 * @param id the payment id
	 * @param status the payment status
	 * @param account the account charged
	 * @param amount the amount in minor units
	 * @param currency the ISO currency code
	 * @param reference the client's reference
	 */
	record Receipt(String id, String status, String account, long amount, String currency, String reference) {

		static Receipt of(PaymentRequest request) {
			return new Receipt("pay-1", "ACCEPTED", request.account(), request.amount(), request.currency(),
					request.reference());
		}

	}

}
