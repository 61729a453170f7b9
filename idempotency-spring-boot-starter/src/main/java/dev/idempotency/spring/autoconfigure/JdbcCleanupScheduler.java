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

package dev.idempotency.spring.autoconfigure;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import dev.idempotency.spring.store.jdbc.JdbcIdempotencyCleaner;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;

/**
 * Runs the cleaner of expired rows periodically on one daemon thread. Every instance of
 * the application runs one; the cleaner itself is safe when several run at once
 * ({@code FOR UPDATE SKIP LOCKED}), and a random initial delay spreads them out.
 *
 * @author Idempotency contributors
 */
class JdbcCleanupScheduler implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(JdbcCleanupScheduler.class);

	private final JdbcIdempotencyCleaner cleaner;

	private final Duration interval;

	private volatile @Nullable ScheduledExecutorService executor;

	JdbcCleanupScheduler(JdbcIdempotencyCleaner cleaner, Duration interval) {
		if (interval.isZero() || interval.isNegative()) {
			throw new IllegalArgumentException("idempotency.jdbc.cleanup.interval must be positive, not " + interval);
		}
		this.cleaner = cleaner;
		this.interval = interval;
	}

	@Override
	public void start() {
		ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor((runnable) -> {
			Thread thread = new Thread(runnable, "idempotency-cleanup");
			thread.setDaemon(true);
			return thread;
		});
		long period = this.interval.toMillis();
		long initialDelay = ThreadLocalRandom.current().nextLong(period) + 1;
		executor.scheduleWithFixedDelay(this::purge, initialDelay, period, TimeUnit.MILLISECONDS);
		this.executor = executor;
	}

	void purge() {
		try {
			int deleted = this.cleaner.purgeExpired();
			if (deleted > 0 && logger.isDebugEnabled()) {
				logger.debug("Deleted " + deleted + " expired idempotency records");
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Cleanup of expired idempotency records failed; will try again in " + this.interval, ex);
		}
	}

	@Override
	public void stop() {
		ScheduledExecutorService executor = this.executor;
		if (executor != null) {
			executor.shutdownNow();
			this.executor = null;
		}
	}

	@Override
	public boolean isRunning() {
		return this.executor != null;
	}

}
