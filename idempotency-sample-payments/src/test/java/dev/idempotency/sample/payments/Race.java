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

package dev.idempotency.sample.payments;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * Requests sent all at once, for the race tests of one instance and of several: one
 * thread each, released together by a latch.
 *
 * @author Idempotency contributors
 */
public final class Race {

	private Race() {
	}

	/**
	 * Send requests all at once and wait for every answer, two minutes at most each.
	 * @param count how many requests
	 * @param request sends the request of the given index
	 * @return the responses, in index order
	 * @throws Exception if a request failed or did not end in time
	 */
	public static List<HttpResponse<byte[]>> of(int count, IntFunction<HttpResponse<byte[]>> request) throws Exception {
		ExecutorService executor = Executors.newFixedThreadPool(count);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<HttpResponse<byte[]>>> futures = new ArrayList<>();
			for (int i = 0; i < count; i++) {
				int n = i;
				futures.add(executor.submit(() -> {
					start.await();
					return request.apply(n);
				}));
			}
			start.countDown();
			List<HttpResponse<byte[]>> responses = new ArrayList<>();
			for (Future<HttpResponse<byte[]>> future : futures) {
				responses.add(future.get(2, TimeUnit.MINUTES));
			}
			return responses;
		}
		finally {
			executor.shutdownNow();
		}
	}

}
