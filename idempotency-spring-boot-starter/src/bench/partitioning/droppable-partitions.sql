-- The partitions that may hold only records to delete: created more than a time to live and
-- a lease ago. The caller checks each one's records before it detaches it, since a renewed
-- lease or a longer time to live moves purge_after on.
SELECT c.relname
FROM pg_inherits i
JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = 'idem_parts'::regclass
	-- the CASE keeps the name's parse from rows of pg_class that are not partitions
	AND CASE WHEN c.relname ~ '^idem_parts_[0-9]+$' THEN to_timestamp(split_part(c.relname, '_', 3)::bigint) END
		+ make_interval(secs => :width + :ttl + :lease) <= now()
ORDER BY c.relname;
