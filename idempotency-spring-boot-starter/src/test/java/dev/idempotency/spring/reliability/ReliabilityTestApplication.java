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

package dev.idempotency.spring.reliability;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.spring.Idempotent;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * An application instance for the reliability tests: one idempotent endpoint whose
 * handler counts its runs per key and, for keys the test holds, waits until the test
 * releases it.
 *
 * @author Idempotency contributors
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
class ReliabilityTestApplication {

	@RestController
	static class WorkController {

		private final String instance;

		private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		private final Map<String, CountDownLatch> entered = new ConcurrentHashMap<>();

		private final Map<String, CountDownLatch> gates = new ConcurrentHashMap<>();

		WorkController(@Value("${reliability.instance}") String instance) {
			this.instance = instance;
		}

		@PostMapping(path = "/work", produces = MediaType.TEXT_PLAIN_VALUE)
		@Idempotent("reliable")
		String work(@RequestHeader("Idempotency-Key") String key, @RequestBody String body)
				throws InterruptedException {
			int run = this.runs.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
			CountDownLatch entered = this.entered.get(key);
			if (entered != null) {
				entered.countDown();
			}
			CountDownLatch gate = this.gates.get(key);
			if (gate != null && !gate.await(60, TimeUnit.SECONDS)) {
				throw new IllegalStateException("The test never released key " + key);
			}
			return this.instance + " ran " + body + " (run " + run + ")";
		}

		// the next request with this key waits in the handler until released
		void hold(String key) {
			this.entered.put(key, new CountDownLatch(1));
			this.gates.put(key, new CountDownLatch(1));
		}

		boolean awaitEntered(String key, Duration timeout) throws InterruptedException {
			return this.entered.get(key).await(timeout.toMillis(), TimeUnit.MILLISECONDS);
		}

		void release(String key) {
			this.gates.get(key).countDown();
		}

		int runs(String key) {
			AtomicInteger count = this.runs.get(key);
			return (count != null) ? count.get() : 0;
		}

	}

}
