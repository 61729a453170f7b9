-- Completed records of :table expiring one every 1/:rate seconds from now on, as many as live
-- at once (:rate x :ttl), each with a stored response of 180 bytes.
INSERT INTO :table (created_at, lease_expires_at, expires_at, owner_token, status, id, fingerprint,
		scope, idem_key, response, purge_after)
SELECT e - make_interval(secs => :ttl), NULL, e, md5(g::text)::uuid, 'C', sha256(int8send(-g)),
		sha256(int8send(g)), 'POST /payments', md5(g::text), convert_to(repeat('x', 180), 'UTF8'),
		e + make_interval(secs => :lease)
FROM (SELECT g, now() + make_interval(secs => g::double precision / :rate) AS e
		FROM generate_series(1, (:rate * :ttl)::bigint) AS g) AS s;
VACUUM ANALYZE :table;
