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

import java.util.Objects;

import javax.sql.DataSource;

import dev.idempotency.core.store.IdempotencyStoreException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Deletes expired records from the table of {@link JdbcIdempotencyStore}, in batches.
 * <p>
 * Expired records already behave as absent, so deleting them only reclaims space; how
 * often to call {@link #purgeExpired()} is a matter of table size, not of correctness.
 * Each batch is one auto-committed statement, on a connection of its own outside any
 * transaction of the application as for the store, that locks the rows it deletes with
 * {@code FOR UPDATE SKIP LOCKED}: any number of cleaners (one per application instance)
 * may run at the same time without waiting for each other or deleting a row twice, and a
 * row that a store operation is taking over at that moment is left alone. A record whose
 * lease is still live is never deleted, even past its expiry.
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

	private static final Log logger = LogFactory.getLog(JdbcIdempotencyCleaner.class);

	private static final String DELETE_EXPIRED = """
			DELETE FROM %TABLE%
			WHERE id IN (
				SELECT id FROM %TABLE%
				WHERE expires_at <= now() AND NOT (status = 'P' AND lease_expires_at > now())
				ORDER BY expires_at
				LIMIT :batchSize
				FOR UPDATE SKIP LOCKED)
			""";

	private final JdbcOperationRunner jdbc;

	private volatile String deleteExpired = TableName.parse(TableName.DEFAULT).substitute(DELETE_EXPIRED);

	private volatile int batchSize = DEFAULT_BATCH_SIZE;

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
		this.deleteExpired = TableName.parse(tableName).substitute(DELETE_EXPIRED);
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
	 * Delete every record that has expired, batch after batch, until a batch comes back
	 * short.
	 * @return the number of rows this call deleted
	 * @throws IdempotencyStoreException if the database cannot be reached or fails; rows
	 * deleted by earlier batches stay deleted
	 */
	public int purgeExpired() {
		String sql = this.deleteExpired;
		int batchSize = this.batchSize;
		int total = 0;
		int deleted;
		do {
			deleted = this.jdbc.execute("cleanup", (client) -> client.sql(sql).param("batchSize", batchSize).update());
			total += deleted;
		}
		while (deleted == batchSize);
		if (total > 0 && logger.isDebugEnabled()) {
			logger.debug("Deleted " + total + " expired idempotency record(s)");
		}
		return total;
	}

}
