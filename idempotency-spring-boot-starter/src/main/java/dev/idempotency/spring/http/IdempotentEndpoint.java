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

package dev.idempotency.spring.http;

import java.util.Objects;

/**
 * How a request that matched an idempotent endpoint is treated: the policy that applies
 * and whether a key is required.
 *
 * @param policy name of the policy, never {@code null}
 * @param required whether a request without a key is rejected
 * @author Idempotency contributors
 * @since 0.1.0
 */
public record IdempotentEndpoint(String policy, boolean required) {

	/**
	 * Create an endpoint description.
	 * @param policy name of the policy, never {@code null}
	 * @param required whether a request without a key is rejected
	 */
	public IdempotentEndpoint {
		Objects.requireNonNull(policy, "'policy' must not be null");
	}

}
