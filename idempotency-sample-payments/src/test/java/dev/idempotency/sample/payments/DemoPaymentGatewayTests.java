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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.mockito.BDDMockito.given;
import static org.mockito.BDDMockito.then;
import static org.mockito.Mockito.mock;

/**
 * Tests for {@link DemoPaymentGateway}.
 *
 * @author Idempotency contributors
 */
class DemoPaymentGatewayTests {

	private final PaymentGateway fake = mock();

	private final DemoPaymentGateway gateway = new DemoPaymentGateway(this.fake);

	@AfterEach
	void resetRequest() {
		RequestContextHolder.resetRequestAttributes();
	}

	@Test
	void outsideARequestTheChargeGoesStraightThrough() {
		given(this.fake.charge("key", 100, "EUR")).willReturn("ch_1");
		assertThat(this.gateway.charge("key", 100, "EUR")).isEqualTo("ch_1");
	}

	@Test
	void requestWithoutDemoBehaviourIsChargedAsUsual() {
		inRequest(null);
		given(this.fake.charge("key", 100, "EUR")).willReturn("ch_1");
		assertThat(this.gateway.charge("key", 100, "EUR")).isEqualTo("ch_1");
	}

	@Test
	void faultFailsWithItsStatusWithoutCharging() {
		inRequest(new DemoBehaviour(Duration.ZERO, 503, Duration.ZERO));
		assertThatExceptionOfType(GatewayException.class).isThrownBy(() -> this.gateway.charge("key", 100, "EUR"))
			.satisfies((ex) -> assertThat(ex.getStatus()).isEqualTo(503));
		then(this.fake).shouldHaveNoInteractions();
	}

	@Test
	void delayHoldsTheChargeThenCharges() {
		inRequest(new DemoBehaviour(Duration.ofMillis(200), 0, Duration.ZERO));
		given(this.fake.charge("key", 100, "EUR")).willReturn("ch_1");
		long start = System.nanoTime();
		assertThat(this.gateway.charge("key", 100, "EUR")).isEqualTo("ch_1");
		assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(200));
	}

	@Test
	void interruptedDelayIsAGatewayTimeout() {
		inRequest(new DemoBehaviour(Duration.ofMinutes(1), 0, Duration.ZERO));
		Thread.currentThread().interrupt();
		try {
			assertThatExceptionOfType(GatewayException.class).isThrownBy(() -> this.gateway.charge("key", 100, "EUR"))
				.satisfies((ex) -> assertThat(ex.getStatus()).isEqualTo(504));
			assertThat(Thread.currentThread().isInterrupted()).isTrue();
		}
		finally {
			Thread.interrupted();
		}
		then(this.fake).shouldHaveNoInteractions();
	}

	private static void inRequest(@Nullable DemoBehaviour behaviour) {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/payments");
		if (behaviour != null) {
			request.setAttribute(DemoBehaviour.ATTRIBUTE, behaviour);
		}
		RequestContextHolder.setRequestAttributes(new ServletRequestAttributes(request));
	}

}
