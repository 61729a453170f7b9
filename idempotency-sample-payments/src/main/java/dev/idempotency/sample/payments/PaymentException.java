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

import org.springframework.http.HttpStatus;

/**
 * A request the service refuses, answered as a problem detail.
 *
 * @author Idempotency contributors
 */
public class PaymentException extends RuntimeException {

	private final HttpStatus status;

	private final String type;

	PaymentException(HttpStatus status, String type, String detail) {
		super(detail);
		this.status = status;
		this.type = type;
	}

	static PaymentException notFound(String what) {
		return new PaymentException(HttpStatus.NOT_FOUND, "not-found", what + " not found");
	}

	static PaymentException invalid(String detail) {
		return new PaymentException(HttpStatus.BAD_REQUEST, "invalid-request", detail);
	}

	static PaymentException insufficientFunds(long balance, long amount) {
		return new PaymentException(HttpStatus.PAYMENT_REQUIRED, "insufficient-funds",
				"Balance " + balance + " does not cover " + amount);
	}

	HttpStatus getStatus() {
		return this.status;
	}

	String getType() {
		return this.type;
	}

}
