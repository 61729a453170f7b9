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

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.TypeMismatchException;
import org.springframework.core.convert.ConversionException;
import org.springframework.core.convert.support.DefaultConversionService;
import org.springframework.http.HttpMethod;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.ModelAndView;

/**
 * Reads the demo headers of {@code POST /payments} into a {@link DemoBehaviour}, and
 * holds the response for {@code Demo-Delay-After-Commit-Ms} once the payment is
 * committed: the moment between the commit and the stored response that the crash tests
 * kill the process at. The response is still in the idempotency filter's buffer then, so
 * neither the client nor the store has seen it.
 * <p>
 * A malformed header is refused with a 400, before the payment runs.
 *
 * @author Idempotency contributors
 * @see DemoConfiguration
 */
class DemoHeadersInterceptor implements HandlerInterceptor {

	static final String GATEWAY_DELAY = "Demo-Gateway-Delay-Ms";

	static final String GATEWAY_FAULT = "Demo-Gateway-Fault";

	static final String DELAY_AFTER_COMMIT = "Demo-Delay-After-Commit-Ms";

	private static final long MAX_DELAY_MILLIS = Duration.ofSeconds(60).toMillis();

	@Override
	public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler) {
		// GET /payments lists payments: only taking one has a gateway to slow down
		if (HttpMethod.POST.matches(request.getMethod())) {
			request.setAttribute(DemoBehaviour.ATTRIBUTE, read(request));
		}
		return true;
	}

	@Override
	public void postHandle(HttpServletRequest request, HttpServletResponse response, Object handler,
			@Nullable ModelAndView modelAndView) {
		if (request.getAttribute(DemoBehaviour.ATTRIBUTE) instanceof DemoBehaviour demo
				&& !demo.delayAfterCommit().isZero()) {
			try {
				Thread.sleep(demo.delayAfterCommit().toMillis());
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

	static DemoBehaviour read(HttpServletRequest request) {
		Long gatewayDelay = header(request, GATEWAY_DELAY, Long.class);
		Integer gatewayFault = header(request, GATEWAY_FAULT, Integer.class);
		Long delayAfterCommit = header(request, DELAY_AFTER_COMMIT, Long.class);
		if (gatewayFault != null && (gatewayFault < 500 || gatewayFault > 599)) {
			throw PaymentException.invalid(GATEWAY_FAULT + " must be a 5xx status");
		}
		return new DemoBehaviour(delay(gatewayDelay), (gatewayFault != null) ? gatewayFault : 0,
				delay(delayAfterCommit));
	}

	// converted as a @RequestHeader argument is, so that a malformed value gets the same
	// 400 problem from Spring MVC's exception handling
	static <T> @Nullable T header(HttpServletRequest request, String name, Class<T> type) {
		String value = request.getHeader(name);
		if (value == null) {
			return null;
		}
		try {
			return DefaultConversionService.getSharedInstance().convert(value, type);
		}
		catch (ConversionException ex) {
			TypeMismatchException mismatch = new TypeMismatchException(value, type, ex);
			mismatch.initPropertyName(name);
			throw mismatch;
		}
	}

	static Duration delay(@Nullable Long millis) {
		return Duration.ofMillis((millis != null) ? Math.min(Math.max(0, millis), MAX_DELAY_MILLIS) : 0);
	}

}
