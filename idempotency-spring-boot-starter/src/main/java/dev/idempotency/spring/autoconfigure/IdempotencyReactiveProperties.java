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

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings for reactive (WebFlux) applications, under {@code idempotency.reactive}:
 * whether the WebFlux filter protects their {@code @Idempotent} handlers, and, for an
 * application that turns it off, what happens to handlers that nothing protects.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
@ConfigurationProperties("idempotency.reactive")
public class IdempotencyReactiveProperties {

	/**
	 * Whether the WebFlux filter protects the @Idempotent handlers of a reactive
	 * application. When false, the application gets no idempotency engine or store, and
	 * its @Idempotent handlers are refused at start-up (see
	 * fail-on-unprotected-handlers).
	 */
	private boolean enabled = true;

	/**
	 * Whether start-up fails when a reactive (WebFlux) application that turned the
	 * WebFlux filter off (enabled=false) has handlers annotated with @Idempotent. When
	 * false, a warning names them instead and they run unprotected.
	 */
	private boolean failOnUnprotectedHandlers = true;

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public boolean isFailOnUnprotectedHandlers() {
		return this.failOnUnprotectedHandlers;
	}

	public void setFailOnUnprotectedHandlers(boolean failOnUnprotectedHandlers) {
		this.failOnUnprotectedHandlers = failOnUnprotectedHandlers;
	}

}
