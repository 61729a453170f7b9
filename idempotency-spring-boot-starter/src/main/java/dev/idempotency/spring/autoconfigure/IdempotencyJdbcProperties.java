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

import dev.idempotency.spring.store.jdbc.JdbcIdempotencyCleaner;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.sql.init.DatabaseInitializationMode;

/**
 * Settings of the JDBC store (PostgreSQL, MariaDB, MySQL), under
 * {@code idempotency.jdbc}. Bound only where the JDBC or tiered store can be configured,
 * so that an application without JDBC never loads them.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
@ConfigurationProperties("idempotency.jdbc")
public class IdempotencyJdbcProperties {

	/**
	 * When the store's table is created and migrated at start-up: always (with a Flyway
	 * history table of its own when Flyway is on the class path, else by running the
	 * shipped scripts), only for an embedded database, or never (the table is managed by
	 * hand or by the application's own migrations).
	 */
	private DatabaseInitializationMode initializeSchema = DatabaseInitializationMode.ALWAYS;

	/**
	 * Name of the table of idempotency records.
	 */
	private String tableName = "idempotency_record";

	/**
	 * Whether a lapsed lease is taken over only once it has stayed lapsed for one more
	 * lock-timeout after a request first found it lapsed, so that a database that hung
	 * longer than the lease never lets a duplicate run while the first request still
	 * runs. Off, a crashed owner's key is free one lock-timeout sooner.
	 */
	private boolean confirmTakeover = true;

	private final Cleanup cleanup = new Cleanup();

	public DatabaseInitializationMode getInitializeSchema() {
		return this.initializeSchema;
	}

	public void setInitializeSchema(DatabaseInitializationMode initializeSchema) {
		this.initializeSchema = initializeSchema;
	}

	public String getTableName() {
		return this.tableName;
	}

	public void setTableName(String tableName) {
		this.tableName = tableName;
	}

	public boolean isConfirmTakeover() {
		return this.confirmTakeover;
	}

	public void setConfirmTakeover(boolean confirmTakeover) {
		this.confirmTakeover = confirmTakeover;
	}

	public Cleanup getCleanup() {
		return this.cleanup;
	}

	/**
	 * Deletion of expired rows.
	 */
	public static class Cleanup {

		/**
		 * Whether expired rows are deleted by a scheduled job.
		 */
		private boolean enabled = true;

		/**
		 * Time between two runs of the cleanup job.
		 */
		private Duration interval = Duration.ofMinutes(1);

		/**
		 * Largest number of rows deleted by one statement of the cleanup job.
		 */
		private int batchSize = JdbcIdempotencyCleaner.DEFAULT_BATCH_SIZE;

		/**
		 * Pause after each batch of the cleanup job, as a multiple of the time the batch
		 * took: 1 keeps the database busy with deletes at most half of the time a run
		 * lasts, 0 runs the batches back to back.
		 */
		private double pauseFactor = JdbcIdempotencyCleaner.DEFAULT_PAUSE_FACTOR;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public Duration getInterval() {
			return this.interval;
		}

		public void setInterval(Duration interval) {
			this.interval = interval;
		}

		public int getBatchSize() {
			return this.batchSize;
		}

		public void setBatchSize(int batchSize) {
			this.batchSize = batchSize;
		}

		public double getPauseFactor() {
			return this.pauseFactor;
		}

		public void setPauseFactor(double pauseFactor) {
			this.pauseFactor = pauseFactor;
		}

	}

}
