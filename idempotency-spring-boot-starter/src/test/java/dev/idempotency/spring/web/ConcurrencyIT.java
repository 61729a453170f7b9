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

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.idempotency.spring.VirtualThreads;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.core.env.Environment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Many concurrent duplicates of one request on a real server, on the threads the
 * application turns on: the compatibility lane runs it on virtual threads
 * (docs/testing.md).
 *
 * @author Idempotency contributors
 */
@Tag("compatibility")
class ConcurrencyIT extends AbstractWebIT {

	private static final int REQUESTS = 100;

	@Autowired
	Environment environment;

	/**
	 * Whether the handlers run on virtual threads: Tomcat's are when the application
	 * turns them on.
	 * @return {@code true} if they should run on virtual threads
	 */
	protected boolean handlersOnVirtualThreads() {
		return VirtualThreads.expected(this.environment);
	}

	@Test
	void concurrentDuplicatesRunTheHandlerOnce() throws Exception {
		String key = newKey();
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService executor = Executors.newFixedThreadPool(REQUESTS);
		List<HttpResponse<byte[]>> responses = new ArrayList<>();
		try {
			List<Future<HttpResponse<byte[]>>> futures = new ArrayList<>();
			for (int i = 0; i < REQUESTS; i++) {
				futures.add(executor.submit(() -> {
					start.await();
					return post("/slow?millis=200", key, "same body");
				}));
			}
			start.countDown();
			for (Future<HttpResponse<byte[]>> future : futures) {
				responses.add(future.get(60, TimeUnit.SECONDS));
			}
		}
		finally {
			executor.shutdownNow();
		}
		assertThat(this.counter.count("slow", key)).isEqualTo(1);
		boolean virtual = handlersOnVirtualThreads();
		assertThat(this.counter.ranOnVirtualThread("slow", key))
			.as("the handler ran on a %s thread", VirtualThreads.kind(virtual))
			.isEqualTo(virtual);
		List<HttpResponse<byte[]>> originals = responses.stream().filter((r) -> r.statusCode() == 200).toList();
		List<HttpResponse<byte[]>> inProgress = responses.stream().filter((r) -> r.statusCode() == 409).toList();
		assertThat(originals.size() + inProgress.size()).isEqualTo(REQUESTS);
		assertThat(originals).isNotEmpty();
		byte[] original = originals.get(0).body();
		assertThat(new String(original)).startsWith("slow 1 ");
		assertThat(originals).allSatisfy((r) -> assertThat(r.body()).isEqualTo(original));
		assertThat(originals.stream()
			.filter((r) -> r.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER).isEmpty())
			.count()).isEqualTo(1);
		assertThat(inProgress).allSatisfy((r) -> {
			assertThat(r.headers().firstValueAsLong("Retry-After").orElse(0)).isPositive();
			assertThat(text(r)).contains("request-in-progress");
		});
		for (int i = 0; i < 5; i++) {
			HttpResponse<byte[]> retry = post("/slow?millis=200", key, "same body");
			assertThat(retry.statusCode()).isEqualTo(200);
			assertThat(retry.body()).isEqualTo(original);
			assertThat(retry.headers().firstValue(IdempotencyFilter.REPLAYED_HEADER)).hasValue("true");
		}
		assertThat(this.counter.count("slow", key)).isEqualTo(1);
	}

}
