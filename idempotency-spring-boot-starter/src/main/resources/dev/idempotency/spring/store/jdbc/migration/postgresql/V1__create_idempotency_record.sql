-- Idempotency records (dev.idempotency.spring.store.jdbc.JdbcIdempotencyStore).
-- ${table_name} is the configured, optionally schema-qualified table name and
-- ${table_simple_name} the same without its schema.
-- Fixed-width columns come first so that rows need no alignment padding.
CREATE TABLE IF NOT EXISTS ${table_name} (
	created_at timestamptz NOT NULL,
	lease_expires_at timestamptz,
	expires_at timestamptz NOT NULL,
	owner_token uuid NOT NULL,
	status char(1) NOT NULL,
	id bytea NOT NULL PRIMARY KEY,
	fingerprint bytea NOT NULL,
	scope text NOT NULL,
	idem_key text NOT NULL,
	response bytea,
	CONSTRAINT ${table_simple_name}_id_check CHECK (octet_length(id) = 32),
	CONSTRAINT ${table_simple_name}_fingerprint_check CHECK (octet_length(fingerprint) = 32),
	CONSTRAINT ${table_simple_name}_status_check CHECK (
		(status = 'P' AND lease_expires_at IS NOT NULL AND response IS NULL)
		OR (status = 'C' AND lease_expires_at IS NULL AND response IS NOT NULL))
);

CREATE INDEX IF NOT EXISTS ${table_simple_name}_expires_at_idx ON ${table_name} (expires_at);
