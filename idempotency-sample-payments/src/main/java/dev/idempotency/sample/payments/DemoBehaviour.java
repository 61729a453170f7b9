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

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;

/**
 * What the demo headers of one payment request ask for. {@link DemoHeadersInterceptor}
 * keeps it in a request attribute, where {@link DemoPaymentGateway} finds it.
 *
 * @param gatewayDelay how long the gateway takes before it answers
 * @param gatewayFault a 5xx status the gateway fails with, or 0 to charge as usual
 * @param delayAfterCommit how long the response waits once the payment is committed
 * @author Idempotency contributors
 */
record DemoBehaviour(Duration gatewayDelay, int gatewayFault, Duration delayAfterCommit) {

	static final String ATTRIBUTE = DemoBehaviour.class.getName();

	DemoBehaviour {
		if (gatewayDelay.isNegative() || delayAfterCommit.isNegative()) {
			throw new IllegalArgumentException("Delays must not be negative");
		}
		if (gatewayFault != 0 && (gatewayFault < 500 || gatewayFault > 599)) {
			throw new IllegalArgumentException("Gateway fault must be 0 or a 5xx status");
		}
	}

	/**
	 * Return the behaviour asked for by the request this thread serves.
	 * @return the behaviour, or {@code null} outside a request or when the request did
	 * not go through the interceptor
	 */
	static @Nullable DemoBehaviour current() {
		RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
		return (attributes != null)
				? (DemoBehaviour) attributes.getAttribute(ATTRIBUTE, RequestAttributes.SCOPE_REQUEST) : null;
	}

}
