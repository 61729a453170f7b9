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

import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.mock;

/**
 * Tests for {@link DemoConfiguration}.
 *
 * @author Idempotency contributors
 */
class DemoConfigurationTests {

	private final WebApplicationContextRunner contextRunner = new WebApplicationContextRunner()
		.withBean(FakePaymentGateway.class,
				() -> new FakePaymentGateway(mock(JdbcClient.class), SampleDatabase.POSTGRESQL))
		.withUserConfiguration(DemoConfiguration.class);

	@Test
	void offByDefault() {
		this.contextRunner.run((context) -> {
			assertThat(context).doesNotHaveBean(DemoConfiguration.class);
			assertThat(context.getBean(PaymentGateway.class)).isInstanceOf(FakePaymentGateway.class);
		});
	}

	@Test
	void offWhenDisabled() {
		this.contextRunner.withPropertyValues("payments.demo.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(DemoConfiguration.class));
	}

	@Test
	void whenEnabledTheDemoGatewayWrapsTheFakeOne() {
		this.contextRunner.withPropertyValues("payments.demo.enabled=true").run((context) -> {
			assertThat(context).hasSingleBean(DemoConfiguration.class);
			assertThat(context.getBean(PaymentGateway.class)).isInstanceOf(DemoPaymentGateway.class);
		});
	}

}
