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

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Demo controls of the sample's fake payment gateway.
 *
 * @param enabled whether the demo request headers are honoured:
 * {@code Demo-Gateway-Delay-Ms} and {@code Demo-Gateway-Fault} (the gateway's delay and
 * failure) and {@code Demo-Delay-After-Commit-Ms} (a pause after the payment is committed
 * and before the response is written, the moment crash tests kill the process at); for
 * demos and tests only
 * @author Idempotency contributors
 */
@ConfigurationProperties("payments.demo")
public record DemoProperties(boolean enabled) {

}
