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

package dev.idempotency.spring.actuate;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.spring.Idempotent;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * Application for the operations tests: idempotent endpoints under the {@code metered}
 * policy, one of which waits until the test lets it finish.
 *
 * @author Idempotency contributors
 */
@SpringBootConfiguration(proxyBeanMethods = false)
@EnableAutoConfiguration
class OpsTestApplication {

	@RestController
	static class OpsController {

		final AtomicInteger runs = new AtomicInteger();

		volatile CountDownLatch entered = new CountDownLatch(1);

		volatile CountDownLatch gate = new CountDownLatch(0);

		@PostMapping(path = "/ops/pay", produces = MediaType.TEXT_PLAIN_VALUE)
		@Idempotent("metered")
		ResponseEntity<String> pay(@RequestBody(required = false) String body) {
			this.runs.incrementAndGet();
			return ResponseEntity.status(HttpStatus.CREATED).body("paid:" + body);
		}

		@PostMapping(path = "/ops/plain", produces = MediaType.TEXT_PLAIN_VALUE)
		String plain(@RequestBody(required = false) String body) {
			return "plain:" + body;
		}

		@PostMapping(path = "/ops/slow", produces = MediaType.TEXT_PLAIN_VALUE)
		@Idempotent("metered")
		String slow(@RequestBody(required = false) String body) throws InterruptedException {
			this.runs.incrementAndGet();
			this.entered.countDown();
			if (!this.gate.await(20, TimeUnit.SECONDS)) {
				throw new IllegalStateException("the test never opened the gate");
			}
			return "slow:" + body;
		}

	}

}
