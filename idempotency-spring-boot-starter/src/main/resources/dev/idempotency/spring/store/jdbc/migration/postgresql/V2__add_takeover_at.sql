-- When a lapsed lease may be taken over: set by the first request that finds the lease
-- lapsed, cleared by the owner's next renewal (see JdbcIdempotencyStore#setConfirmTakeover).
ALTER TABLE ${table_name} ADD COLUMN IF NOT EXISTS takeover_at timestamptz;
