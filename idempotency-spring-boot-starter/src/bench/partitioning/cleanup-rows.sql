-- One run of the library's cleanup (JdbcIdempotencyCleaner) with its defaults: batches of 1,000 rows,
-- each committed, with a pause as long as the batch took, until a batch finds fewer.
DO $$
DECLARE
	deleted integer;
	started timestamptz;
BEGIN
	LOOP
		started := clock_timestamp();
		DELETE FROM idem_rows
		WHERE id IN (
			SELECT id FROM idem_rows
			WHERE purge_after <= now() AND expires_at <= now() AND NOT (status = 'P' AND lease_expires_at > now())
			ORDER BY purge_after
			LIMIT 1000
			FOR UPDATE SKIP LOCKED);
		GET DIAGNOSTICS deleted = ROW_COUNT;
		COMMIT;
		EXIT WHEN deleted < 1000;
		PERFORM pg_sleep(extract(epoch FROM clock_timestamp() - started));
	END LOOP;
END $$;
