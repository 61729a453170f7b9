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

/**
 * What the filter does with a request to an idempotent endpoint that has no authenticated
 * principal (and no scope header value), whose key therefore falls into the global scope
 * that every such caller shares. Applied only when Spring Security is on the class path,
 * where a missing principal usually means an anonymous request to an endpoint that should
 * have required authentication, or an authentication filter of the application's own that
 * runs after this filter.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 * @see dev.idempotency.spring.web.IdempotencyFilter#setAnonymousRequests(AnonymousRequests)
 */
public enum AnonymousRequests {

	/**
	 * Handle the request in the global scope, silently.
	 */
	ALLOW,

	/**
	 * Handle the request in the global scope, and log a warning the first time an
	 * endpoint policy sees such a request.
	 */
	WARN,

	/**
	 * Refuse the request with the {@link IdempotencyProblem#UNAUTHENTICATED} problem
	 * (403), before its key is looked at.
	 */
	REJECT

}
