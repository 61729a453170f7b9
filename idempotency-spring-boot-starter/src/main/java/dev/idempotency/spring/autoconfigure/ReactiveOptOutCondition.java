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

package dev.idempotency.spring.autoconfigure;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.boot.autoconfigure.condition.NoneNestedConditions;

/**
 * Matches every application but a reactive (WebFlux) one that opted out of the WebFlux
 * filter with {@code idempotency.reactive.enabled=false}: such an application gets no
 * engine and no store, as before the filter existed, and
 * {@link IdempotencyReactiveAutoConfiguration} refuses its {@code @Idempotent} handlers.
 *
 * @author Idempotency contributors
 */
class ReactiveOptOutCondition extends NoneNestedConditions {

	ReactiveOptOutCondition() {
		super(ConfigurationPhase.PARSE_CONFIGURATION);
	}

	@ConditionalOnWebApplication(type = Type.REACTIVE)
	@ConditionalOnBooleanProperty(name = "idempotency.reactive.enabled", havingValue = false)
	static class ReactiveOptedOut {

	}

}
