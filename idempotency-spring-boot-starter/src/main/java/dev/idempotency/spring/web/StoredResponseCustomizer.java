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

package dev.idempotency.spring.web;

import dev.idempotency.core.StoredResponse;
import jakarta.servlet.http.HttpServletRequest;

/**
 * Redaction of a response before it is stored: sees what an idempotent endpoint answered
 * a first request, after the stored headers were selected, and returns what is to be kept
 * for replay instead. It may drop or replace headers, replace the body (for example with
 * the same JSON without card numbers), or keep no body at all
 * ({@link StoredResponse#withoutBody}, after which a retry is answered with the
 * {@code response-not-replayable} problem).
 * <p>
 * Only the stored copy changes: the client of the first request gets the handler's whole
 * response, and every retry gets the stored one. Keep what a retry needs to act as the
 * first client would (status, {@code Location}, identifiers) and drop only what must not
 * rest in the store.
 * <p>
 * The response given already leaves out the headers never stored (hop-by-hop headers,
 * {@code Date}, {@code Content-Length}, {@code Set-Cookie}) and those of
 * {@code idempotency.response-headers.default-exclude} and {@code exclude} (credentials
 * and CORS headers by default). The auto-configuration applies every bean of this type,
 * in {@code @Order}, each to the result of the previous one. Called on the request's
 * thread once the response is complete; must be thread-safe and must not return
 * {@code null}. If it throws, the error is logged and only the status is stored, so that
 * nothing unredacted is kept.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
@FunctionalInterface
public interface StoredResponseCustomizer {

	/**
	 * Return the response to store in place of the given one.
	 * @param request the first request
	 * @param policy the name of the endpoint's policy
	 * @param response the response as it would be stored
	 * @return the response to store, never {@code null}; {@code response} itself to keep
	 * it
	 */
	StoredResponse customize(HttpServletRequest request, String policy, StoredResponse response);

}
