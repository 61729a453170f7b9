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

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.servlet.http.HttpServletRequest;

/**
 * Counts handler invocations per handler and idempotency key.
 *
 * @author Idempotency contributors
 */
class HandlerCounter {

	private final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();

	int increment(String handler, HttpServletRequest request) {
		return this.counts
			.computeIfAbsent(handler + " " + request.getHeader("Idempotency-Key"), (name) -> new AtomicInteger())
			.incrementAndGet();
	}

	int increment(String handler, String key) {
		return this.counts.computeIfAbsent(handler + " " + key, (name) -> new AtomicInteger()).incrementAndGet();
	}

	int count(String handler, String keyHeader) {
		AtomicInteger count = this.counts.get(handler + " " + keyHeader);
		return (count != null) ? count.get() : 0;
	}

}
