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

import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * Fault injection for demos and the sample's own tests, on when
 * {@code payments.demo.enabled=true}; never enable it in production. Three request
 * headers of {@code POST /payments} are honoured then:
 * <ul>
 * <li>{@code Demo-Gateway-Delay-Ms}: the gateway takes this long (at most a minute);
 * <li>{@code Demo-Gateway-Fault}: the gateway fails with this 5xx status;
 * <li>{@code Demo-Delay-After-Commit-Ms}: the response waits this long (at most a minute)
 * once the payment is committed, before the idempotency layer stores it.
 * </ul>
 * Three headers of {@code POST /accounts} and {@code POST /webhooks/gateway} pause the
 * opening of an account or the settlement of an event before the handler, before the
 * commit and after the commit of its transaction, for crash tests
 * ({@link DemoTransactionPauses}). Without the property the headers are ignored, and the
 * application runs the plain {@link PaymentController}, {@link PaymentService} and
 * gateway.
 *
 * @author Idempotency contributors
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnBooleanProperty("payments.demo.enabled")
class DemoConfiguration implements WebMvcConfigurer {

	@Override
	public void addInterceptors(InterceptorRegistry registry) {
		registry.addInterceptor(new DemoHeadersInterceptor()).addPathPatterns("/payments");
		registry.addInterceptor(new DemoTransactionPauses()).addPathPatterns("/accounts", "/webhooks/gateway");
	}

	// takes the fake gateway's place wherever a PaymentGateway is injected
	@Bean
	@Primary
	DemoPaymentGateway demoPaymentGateway(FakePaymentGateway gateway) {
		return new DemoPaymentGateway(gateway);
	}

}
