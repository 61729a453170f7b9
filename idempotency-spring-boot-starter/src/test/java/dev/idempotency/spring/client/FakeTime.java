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

package dev.idempotency.spring.client;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Fake time for an {@link IdempotentRetryInterceptor}: a wall clock, a monotonic time
 * source and a sleeper that records each wait and moves time forward by it instead of
 * blocking.
 *
 * @author Idempotency contributors
 */
final class FakeTime {

	static final Instant EPOCH = Instant.parse("2026-03-02T10:15:30Z");

	private final AtomicLong nanos = new AtomicLong();

	private final List<Duration> sleeps = Collections.synchronizedList(new ArrayList<>());

	void applyTo(IdempotentRetryInterceptor interceptor) {
		interceptor.setClock(clock());
		interceptor.setNanoTimeSource(this::nanoTime);
		interceptor.setSleeper(this::sleep);
	}

	long nanoTime() {
		return this.nanos.get();
	}

	Instant now() {
		return EPOCH.plusNanos(this.nanos.get());
	}

	void advance(Duration duration) {
		this.nanos.addAndGet(duration.toNanos());
	}

	void sleep(Duration duration) {
		this.sleeps.add(duration);
		advance(duration);
	}

	List<Duration> sleeps() {
		synchronized (this.sleeps) {
			return List.copyOf(this.sleeps);
		}
	}

	Clock clock() {
		return new Clock() {

			@Override
			public ZoneId getZone() {
				return ZoneOffset.UTC;
			}

			@Override
			public Clock withZone(ZoneId zone) {
				throw new UnsupportedOperationException();
			}

			@Override
			public Instant instant() {
				return now();
			}

		};
	}

}
