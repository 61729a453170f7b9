-- The library's layout (V1 to V3 of the PostgreSQL migrations, as one table): one row per
-- key, the key unique by its primary key, the cleanup's index on purge_after.
DROP TABLE IF EXISTS idem_rows;
CREATE TABLE idem_rows (
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
	takeover_at timestamptz,
	purge_after timestamptz
);
-- completed records expiring one every 1/rate seconds from now on, as many as live at once
INSERT INTO idem_rows (created_at, lease_expires_at, expires_at, owner_token, status, id, fingerprint,
		scope, idem_key, response, purge_after)
SELECT e - make_interval(secs => :ttl), NULL, e, md5(g::text)::uuid, 'C', sha256(int8send(-g)),
		sha256(int8send(g)), 'POST /payments', md5(g::text), convert_to(repeat('x', 180), 'UTF8'),
		e + make_interval(secs => :lease)
FROM (SELECT g, now() + make_interval(secs => g::double precision / :rate) AS e
		FROM generate_series(1, (:rate * :ttl)::bigint) AS g) AS s;
CREATE INDEX idem_rows_purge_after_idx ON idem_rows (purge_after);
VACUUM ANALYZE idem_rows;
