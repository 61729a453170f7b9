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

import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * Input rules shared by accounts and payments.
 *
 * @author Idempotency contributors
 */
final class PaymentValidation {

	private static final Pattern CURRENCY = Pattern.compile("[A-Z]{3}");

	static final int MAX_DESCRIPTION = 140;

	private PaymentValidation() {
	}

	static void checkCurrency(@Nullable String currency) {
		if (currency == null || !CURRENCY.matcher(currency).matches()) {
			throw PaymentException.invalid("currency must be three upper-case letters (ISO 4217)");
		}
	}

}
