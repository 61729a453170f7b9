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
 * Settings for reactive (WebFlux) applications, under {@code idempotency.reactive}. The
 * library protects Spring MVC (servlet) handlers only; these settings say what happens
 * when a reactive application has {@code @Idempotent} handlers that nothing protects.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
@ConfigurationProperties("idempotency.reactive")
public class IdempotencyReactiveProperties {

	/**
	 * Whether start-up fails when a reactive (WebFlux) application has handlers annotated
	 * with {@code @Idempotent}, which the servlet filter cannot protect. When false, a
	 * warning names them instead and they run unprotected.
	 */
	private boolean failOnUnprotectedHandlers = true;

	public boolean isFailOnUnprotectedHandlers() {
		return this.failOnUnprotectedHandlers;
	}

	public void setFailOnUnprotectedHandlers(boolean failOnUnprotectedHandlers) {
		this.failOnUnprotectedHandlers = failOnUnprotectedHandlers;
	}

}
