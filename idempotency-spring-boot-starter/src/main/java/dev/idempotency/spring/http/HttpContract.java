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

import java.util.List;

/**
 * The names and defaults of the HTTP contract: its headers, the base of its problem
 * {@code type} URIs, and the response headers that are not stored by default. The servlet
 * filter publishes them as its own constants.
 *
 * @author Idempotency contributors
 */
public final class HttpContract {

	/**
	 * Default name of the header that carries the key.
	 */
	public static final String KEY_HEADER = "Idempotency-Key";

	/**
	 * Header set to {@code true} on replayed responses.
	 */
	public static final String REPLAYED_HEADER = "Idempotent-Replayed";

	/**
	 * Header that advertises when the record of a key expires (an HTTP date).
	 */
	public static final String EXPIRES_HEADER = "Idempotency-Expires";

	/**
	 * Default base of the problem {@code type} URIs.
	 */
	public static final String PROBLEM_TYPE_BASE = "https://idempotency.dev/problems/";

	/**
	 * Media type of the problem details that refusals are answered with.
	 */
	public static final String PROBLEM_CONTENT_TYPE = "application/problem+json";

	/**
	 * Response headers that are not stored nor replayed unless configured otherwise:
	 * {@code Access-Control-*} and headers that carry credentials or authentication
	 * challenges.
	 */
	public static final List<String> EXCLUDED_RESPONSE_HEADERS = List.of("Access-Control-*", "Authorization",
			"WWW-Authenticate", "X-Auth-Token", "X-Access-Token", "X-Refresh-Token", "X-Api-Key",
			"X-Amz-Security-Token", "X-CSRF-Token", "X-XSRF-Token");

	private HttpContract() {
	}

}
