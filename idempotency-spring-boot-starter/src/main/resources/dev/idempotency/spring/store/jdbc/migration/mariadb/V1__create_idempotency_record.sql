-- Idempotency records (dev.idempotency.spring.store.jdbc.JdbcIdempotencyStore) on MariaDB
-- 10.6+ and MySQL 8.0.16+, InnoDB. ${table_name} is the configured, optionally
-- database-qualified table name and ${table_simple_name} the same without its database.
-- Instants are UTC (the store writes UTC_TIMESTAMP(6)), so the session's time zone never
-- matters; binary columns compare byte by byte.
CREATE TABLE IF NOT EXISTS ${table_name} (
	id BINARY(32) NOT NULL,
	created_at DATETIME(6) NOT NULL,
	lease_expires_at DATETIME(6) NULL,
	expires_at DATETIME(6) NOT NULL,
	-- when a lapsed lease may be taken over: set by the first request that finds the lease
	-- lapsed, cleared by the owner's next renewal (JdbcIdempotencyStore#setConfirmTakeover)
	takeover_at DATETIME(6) NULL,
	-- when the cleanup may delete the record: at or after its expiry
	purge_after DATETIME(6) NULL,
	owner_token BINARY(16) NOT NULL,
	status CHAR(1) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
	fingerprint BINARY(32) NOT NULL,
	scope TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	idem_key TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
	response LONGBLOB NULL,
	PRIMARY KEY (id),
	KEY ${table_simple_name}_purge_after_idx (purge_after),
	CONSTRAINT ${table_simple_name}_status_check CHECK (
		(status = 'P' AND lease_expires_at IS NOT NULL AND response IS NULL)
		OR (status = 'C' AND lease_expires_at IS NULL AND response IS NOT NULL))
) ENGINE=InnoDB;
