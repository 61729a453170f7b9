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

package dev.idempotency.spring.openapi;

import java.util.List;
import java.util.Map;

import dev.idempotency.spring.Idempotent;
import io.swagger.v3.oas.annotations.responses.ApiResponse;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PatchMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/**
 * Application whose OpenAPI document the OpenAPI tests read.
 *
 * @author Idempotency contributors
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({ OpenApiTestApplication.PaymentController.class, OpenApiTestApplication.OrderController.class,
		OpenApiTestApplication.LegacyController.class })
class OpenApiTestApplication {

	/**
	 * Annotated methods, one of them with an optional key, and a plain GET.
	 */
	@RestController
	static class PaymentController {

		@PostMapping("/payments")
		@ResponseStatus(HttpStatus.CREATED)
		@Idempotent
		Map<String, Object> pay(@RequestBody Map<String, Object> payment) {
			return payment;
		}

		@PatchMapping("/payments/{id}")
		@Idempotent(required = false)
		Map<String, Object> update(@PathVariable String id, @RequestBody Map<String, Object> changes) {
			return changes;
		}

		@GetMapping("/payments/{id}")
		Map<String, Object> get(@PathVariable String id) {
			return Map.of("id", id);
		}

		@PostMapping("/webhooks/deliveries")
		@Idempotent("deliveries")
		Map<String, Object> delivery(@RequestBody Map<String, Object> event) {
			return event;
		}

		@PostMapping("/webhooks/events")
		@Idempotent("events")
		Map<String, Object> event(@RequestBody Map<String, Object> event) {
			return event;
		}

		@PostMapping("/payments/{id}/refunds")
		@Idempotent("open")
		@ApiResponse(responseCode = "409", description = "The payment cannot be refunded")
		Map<String, Object> refund(@PathVariable String id) {
			return Map.of("id", id);
		}

	}

	/**
	 * {@code @Idempotent} on the class: covers the POST, not the GET.
	 */
	@RestController
	@Idempotent
	static class OrderController {

		@PostMapping("/orders")
		Map<String, Object> create(@RequestBody Map<String, Object> order) {
			return order;
		}

		@GetMapping("/orders")
		List<String> list() {
			return List.of();
		}

	}

	/**
	 * Not annotated: made idempotent by an {@code idempotency.endpoints} rule.
	 */
	@RestController
	static class LegacyController {

		@PutMapping("/legacy/orders/{id}")
		Map<String, Object> replace(@PathVariable String id, @RequestBody Map<String, Object> order) {
			return order;
		}

		@PutMapping("/legacy/customers/{id}")
		Map<String, Object> replaceCustomer(@PathVariable String id, @RequestBody Map<String, Object> customer) {
			return customer;
		}

	}

}
