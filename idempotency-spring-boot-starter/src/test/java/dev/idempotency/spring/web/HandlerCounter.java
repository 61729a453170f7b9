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

import dev.idempotency.spring.VirtualThreads;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

/**
 * Counts handler invocations per handler and idempotency key, and records whether the
 * last of them ran on a virtual thread.
 *
 * @author Idempotency contributors
 */
class HandlerCounter {

	private final Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();

	private final Map<String, Boolean> virtual = new ConcurrentHashMap<>();

	int increment(String handler, HttpServletRequest request) {
		return increment(handler, request.getHeader("Idempotency-Key"));
	}

	int increment(String handler, String key) {
		String name = handler + " " + key;
		this.virtual.put(name, VirtualThreads.current());
		return this.counts.computeIfAbsent(name, (counted) -> new AtomicInteger()).incrementAndGet();
	}

	/**
	 * Whether the last run of a handler for a key ran on a virtual thread.
	 * @param handler the handler
	 * @param keyHeader the key
	 * @return {@code true} if it did, {@code false} if it ran on a platform thread, or
	 * {@code null} if it never ran
	 */
	@Nullable Boolean ranOnVirtualThread(String handler, String keyHeader) {
		return this.virtual.get(handler + " " + keyHeader);
	}

	int count(String handler, String keyHeader) {
		AtomicInteger count = this.counts.get(handler + " " + keyHeader);
		return (count != null) ? count.get() : 0;
	}

}
