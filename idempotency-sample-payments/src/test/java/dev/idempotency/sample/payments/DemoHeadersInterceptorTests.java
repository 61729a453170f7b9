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

import org.junit.jupiter.api.Test;

import org.springframework.beans.TypeMismatchException;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link DemoHeadersInterceptor}.
 *
 * @author Idempotency contributors
 */
class DemoHeadersInterceptorTests {

	private final DemoHeadersInterceptor interceptor = new DemoHeadersInterceptor();

	@Test
	void paymentWithoutDemoHeadersBehavesAsUsual() {
		assertThat(behaviourOf(payment())).isEqualTo(new DemoBehaviour(Duration.ZERO, 0, Duration.ZERO));
	}

	@Test
	void headersAreReadIntoTheBehaviour() {
		MockHttpServletRequest request = payment();
		request.addHeader("Demo-Gateway-Delay-Ms", "250");
		request.addHeader("Demo-Gateway-Fault", "503");
		request.addHeader("Demo-Delay-After-Commit-Ms", "40");
		assertThat(behaviourOf(request))
			.isEqualTo(new DemoBehaviour(Duration.ofMillis(250), 503, Duration.ofMillis(40)));
	}

	@Test
	void delaysAreAtLeastZeroAndAtMostAMinute() {
		MockHttpServletRequest request = payment();
		request.addHeader("Demo-Gateway-Delay-Ms", "-5");
		request.addHeader("Demo-Delay-After-Commit-Ms", "3600000");
		assertThat(behaviourOf(request)).isEqualTo(new DemoBehaviour(Duration.ZERO, 0, Duration.ofMinutes(1)));
	}

	@Test
	void emptyHeaderCountsAsAbsent() {
		MockHttpServletRequest request = payment();
		request.addHeader("Demo-Gateway-Fault", "");
		assertThat(behaviourOf(request).gatewayFault()).isZero();
	}

	@Test
	void faultThatIsNotA5xxIsAnInvalidRequest() {
		MockHttpServletRequest request = payment();
		request.addHeader("Demo-Gateway-Fault", "404");
		assertThatExceptionOfType(PaymentException.class).isThrownBy(() -> preHandle(request))
			.withMessage("Demo-Gateway-Fault must be a 5xx status")
			.satisfies((ex) -> assertThat(ex.getType()).isEqualTo("invalid-request"));
	}

	@Test
	void malformedHeaderIsATypeMismatchNamedAfterTheHeader() {
		MockHttpServletRequest request = payment();
		request.addHeader("Demo-Gateway-Delay-Ms", "soon");
		assertThatExceptionOfType(TypeMismatchException.class).isThrownBy(() -> preHandle(request)).satisfies((ex) -> {
			assertThat(ex.getPropertyName()).isEqualTo("Demo-Gateway-Delay-Ms");
			assertThat(ex.getValue()).isEqualTo("soon");
			assertThat(ex.getRequiredType()).isEqualTo(Long.class);
		});
	}

	@Test
	void requestsOtherThanPostAreLeftAlone() {
		MockHttpServletRequest request = new MockHttpServletRequest("GET", "/payments");
		request.addHeader("Demo-Gateway-Fault", "404");
		preHandle(request);
		assertThat(request.getAttribute(DemoBehaviour.ATTRIBUTE)).isNull();
	}

	@Test
	void delayAfterCommitHoldsTheHandledRequest() {
		MockHttpServletRequest request = payment();
		request.addHeader("Demo-Delay-After-Commit-Ms", "200");
		preHandle(request);
		long start = System.nanoTime();
		this.interceptor.postHandle(request, new MockHttpServletResponse(), new Object(), null);
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(200));
	}

	private DemoBehaviour behaviourOf(MockHttpServletRequest request) {
		preHandle(request);
		return (DemoBehaviour) request.getAttribute(DemoBehaviour.ATTRIBUTE);
	}

	private void preHandle(MockHttpServletRequest request) {
		assertThat(this.interceptor.preHandle(request, new MockHttpServletResponse(), new Object())).isTrue();
	}

	private static MockHttpServletRequest payment() {
		return new MockHttpServletRequest("POST", "/payments");
	}

}
