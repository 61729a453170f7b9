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

package dev.idempotency.spring.store.jdbc;

import java.sql.SQLException;
import java.util.Objects;

import javax.sql.DataSource;

import dev.idempotency.core.store.IdempotencyStoreException;
import dev.idempotency.spring.store.jdbc.JdbcOperationRunner.Operation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Deletes expired records from the table of {@link JdbcIdempotencyStore}, in batches.
 * <p>
 * Expired records already behave as absent, so deleting them only reclaims space; how
 * often to call {@link #purgeExpired()} is a matter of table size, not of correctness.
 * Each batch is one auto-committed statement, on a connection of its own outside any
 * transaction of the application as for the store. On PostgreSQL it locks the rows it
 * deletes with {@code FOR UPDATE SKIP LOCKED}: any number of cleaners (one per
 * application instance) may run at the same time without waiting for each other or
 * deleting a row twice, and a row that a store operation is taking over at that moment is
 * left alone. On MariaDB and MySQL, which cannot skip locked rows in a {@code DELETE}, a
 * batch is {@code DELETE ... ORDER BY purge_after LIMIT n} at READ COMMITTED: it locks
 * the rows it deletes and no gaps between them, so that claims of new keys never wait for
 * it, and two cleaners at once wait for each other's rows, a batch at a time. A record
 * whose lease is still live is never deleted, even past its expiry.
 * <p>
 * Between two batches the cleaner pauses for a multiple of the time the batch took
 * ({@link #setPauseFactor(double)}), so that a run occupies the database at most a share
 * of its duration and backs off by itself when the database is busy (its batches take
 * longer, and so do its pauses). Claims then meet a cleanup that deletes a little at a
 * time rather than one that takes a CPU for seconds.
 * <p>
 * This class is thread-safe once configured. No argument may be {@code null}.
 *
 * @author Idempotency contributors
 * @since 0.1.0
 */
public class JdbcIdempotencyCleaner {

	/**
	 * Default number of rows deleted per statement.
	 */
	public static final int DEFAULT_BATCH_SIZE = 1000;

	/**
	 * Default pause after each batch, as a multiple of the time the batch took.
	 */
	public static final double DEFAULT_PAUSE_FACTOR = 1.0;

	private static final Log logger = LogFactory.getLog(JdbcIdempotencyCleaner.class);

	private final JdbcOperationRunner jdbc;

	private volatile TableName tableName = TableName.parse(TableName.DEFAULT);

	private volatile @Nullable RecordTable table;

	private volatile int batchSize = DEFAULT_BATCH_SIZE;

	private volatile double pauseFactor = DEFAULT_PAUSE_FACTOR;

	/**
	 * Create a cleaner.
	 * @param dataSource the data source of the store, never {@code null}
	 */
	public JdbcIdempotencyCleaner(DataSource dataSource) {
		this.jdbc = new JdbcOperationRunner(Objects.requireNonNull(dataSource, "'dataSource' must not be null"));
	}

	/**
	 * Set the name of the records table, as given to
	 * {@link JdbcIdempotencyStore#setTableName(String)}.
	 * @param tableName the table name, never {@code null}
	 * @throws IllegalArgumentException if the name is not a plain, optionally
	 * schema-qualified SQL identifier
	 */
	public void setTableName(String tableName) {
		this.tableName = TableName.parse(tableName);
		this.table = null;
	}

	/**
	 * Set the dialect of the database, instead of reading it from the metadata of the
	 * first connection.
	 * @param dialect the dialect, never {@code null}
	 */
	public void setDialect(JdbcDialect dialect) {
		this.jdbc.setDialect(dialect);
		this.table = null;
	}

	/**
	 * Set how many rows one statement deletes at most. Smaller batches hold row locks for
	 * less time; larger ones need fewer round trips. Defaults to
	 * {@value #DEFAULT_BATCH_SIZE}.
	 * @param batchSize the batch size, at least 1
	 */
	public void setBatchSize(int batchSize) {
		if (batchSize < 1) {
			throw new IllegalArgumentException("'batchSize' must be at least 1");
		}
		this.batchSize = batchSize;
	}

	/**
	 * Set how long the cleaner pauses after each batch, as a multiple of the time the
	 * batch took: {@code 1} (the default) keeps the database busy with deletes at most
	 * half of the time a run lasts, {@code 3} a quarter, {@code 0} deletes batch after
	 * batch. A run with a factor of {@code f} deletes at most {@code 1 / (1 + f)} of the
	 * rows per second that back-to-back batches would, which must stay above the rate at
	 * which records expire.
	 * @param pauseFactor the factor, at least 0 and finite
	 */
	public void setPauseFactor(double pauseFactor) {
		if (!(pauseFactor >= 0) || Double.isInfinite(pauseFactor)) {
			throw new IllegalArgumentException("'pauseFactor' must be at least 0 and finite, not " + pauseFactor);
		}
		this.pauseFactor = pauseFactor;
	}

	/**
	 * Delete every record that has expired, batch after batch, until a batch comes back
	 * short, pausing between batches as {@link #setPauseFactor(double)} says. Rows that
	 * have no {@code purge_after} yet (written before the column existed, or by an older
	 * version of the library) first get one from their expiry, in batches as well. An
	 * interrupt during a pause ends the call early, with the interrupt status kept; the
	 * next call deletes the rest.
	 * @return the number of rows this call deleted
	 * @throws IdempotencyStoreException if the database cannot be reached or fails; rows
	 * deleted by earlier batches stay deleted
	 */
	public int purgeExpired() {
		int scheduled = inBatches(RecordTable::scheduleUnscheduled);
		if (scheduled > 0 && logger.isDebugEnabled()) {
			logger.debug("Set when to delete " + scheduled + " idempotency record(s) written without it");
		}
		if (Thread.currentThread().isInterrupted()) {
			return 0;
		}
		int deleted = inBatches(RecordTable::purgeExpired);
		if (deleted > 0 && logger.isDebugEnabled()) {
			logger.debug("Deleted " + deleted + " expired idempotency record(s)");
		}
		return deleted;
	}

	// runs the statement until it changes fewer rows than a batch, pausing in between;
	// returns how many rows it changed in all
	private int inBatches(Batch batch) {
		int batchSize = this.batchSize;
		double pauseFactor = this.pauseFactor;
		int total = 0;
		int changed;
		do {
			long start = System.nanoTime();
			changed = this.jdbc.run("cleanup", (operation) -> batch.run(table(operation), operation, batchSize));
			total += changed;
			if (changed == batchSize && !pause((long) ((System.nanoTime() - start) * pauseFactor))) {
				break;
			}
		}
		while (changed == batchSize);
		return total;
	}

	private RecordTable table(Operation operation) {
		RecordTable kept = this.table;
		RecordTable table = RecordTable.of(kept, operation, this.tableName);
		if (table != kept) {
			this.table = table;
		}
		return table;
	}

	// false when interrupted
	private static boolean pause(long nanos) {
		if (nanos <= 0) {
			return true;
		}
		try {
			Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	// one batch of a cleanup statement
	@FunctionalInterface
	private interface Batch {

		int run(RecordTable table, Operation operation, int batchSize) throws SQLException;

	}

}
