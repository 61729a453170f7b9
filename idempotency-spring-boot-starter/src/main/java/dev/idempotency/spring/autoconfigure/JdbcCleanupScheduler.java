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
import java.time.Instant;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BooleanSupplier;

import dev.idempotency.spring.store.jdbc.JdbcIdempotencyCleaner;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.context.SmartLifecycle;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * Runs the cleaner of expired rows periodically on a {@link ThreadPoolTaskScheduler} of
 * its own, one daemon thread. Every instance of the application runs one; the cleaner
 * itself is safe when several run at once ({@code FOR UPDATE SKIP LOCKED}), and a random
 * initial delay spreads them out.
 * <p>
 * The scheduler is not a bean: the application's {@code @Scheduled} tasks keep the
 * {@code TaskScheduler} Boot configures for them, a slow cleanup never delays them, and
 * the application need not enable scheduling.
 *
 * @author Idempotency contributors
 */
class JdbcCleanupScheduler implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(JdbcCleanupScheduler.class);

	private final JdbcIdempotencyCleaner cleaner;

	private final Duration interval;

	private final ThreadPoolTaskScheduler scheduler = new ThreadPoolTaskScheduler();

	private final BooleanSupplier enabled;

	private volatile boolean running;

	JdbcCleanupScheduler(JdbcIdempotencyCleaner cleaner, Duration interval) {
		this(cleaner, interval, () -> true);
	}

	// enabled: asked once, at start
	JdbcCleanupScheduler(JdbcIdempotencyCleaner cleaner, Duration interval, BooleanSupplier enabled) {
		if (interval.isZero() || interval.isNegative()) {
			throw new IllegalArgumentException("idempotency.jdbc.cleanup.interval must be positive, not " + interval);
		}
		this.cleaner = cleaner;
		this.interval = interval;
		this.enabled = enabled;
		this.scheduler.setThreadNamePrefix("idempotency-cleanup-");
		this.scheduler.setDaemon(true);
	}

	@Override
	public void start() {
		this.running = true;
		if (!this.enabled.getAsBoolean()) {
			// no table to clean: the store does not use the database
			return;
		}
		this.scheduler.initialize();
		long period = this.interval.toMillis();
		Instant first = this.scheduler.getClock()
			.instant()
			.plusMillis(ThreadLocalRandom.current().nextLong(period) + 1);
		this.scheduler.scheduleWithFixedDelay(this::purge, first, this.interval);
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
		// no wait for a purge in progress: the next run of any instance deletes the rest
		this.scheduler.shutdown();
		this.running = false;
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

}
