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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Fake time for an {@link IdempotentRetryInterceptor} or an
 * {@link IdempotentRetryFilter}: a wall clock, a monotonic time source, and a sleeper (or
 * a scheduler's timer) that records each wait and moves time forward by it instead of
 * waiting.
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

	void applyTo(IdempotentRetryFilter filter) {
		filter.setClock(clock());
		filter.setNanoTimeSource(this::nanoTime);
		filter.setScheduler(scheduler());
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

	/**
	 * A scheduler whose timers record their delay and move time forward by it, then run
	 * their task at once on another thread, as a timer would.
	 * @return the scheduler
	 */
	Scheduler scheduler() {
		return new Scheduler() {

			@Override
			public Disposable schedule(Runnable task) {
				return Schedulers.parallel().schedule(task);
			}

			@Override
			public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
				sleep(Duration.ofNanos(unit.toNanos(delay)));
				return Schedulers.parallel().schedule(task);
			}

			@Override
			public Worker createWorker() {
				throw new UnsupportedOperationException("Only timers are faked");
			}

		};
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
