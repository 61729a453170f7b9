-- When the cleanup may delete a record: at or after its expiry, and, unlike expires_at,
-- left as it is by a completion within the claim's lease. The cleanup's index moves from
-- expires_at to this column, so that a completion changes no indexed column and
-- PostgreSQL can make it a heap-only (HOT) update: no new index entries, less WAL.
-- Rows written without it (before this migration, or by an older release during a
-- rolling upgrade) get it from the cleanup (JdbcIdempotencyCleaner#purgeExpired).
-- ${table_name}_expires_at_idx is the old index, named in the table's schema.
ALTER TABLE ${table_name} ADD COLUMN IF NOT EXISTS purge_after timestamptz;
CREATE INDEX IF NOT EXISTS ${table_simple_name}_purge_after_idx ON ${table_name} (purge_after);
DROP INDEX IF EXISTS ${table_name}_expires_at_idx;
