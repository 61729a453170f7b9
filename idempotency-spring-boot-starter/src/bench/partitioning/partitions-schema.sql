-- The same records in a table partitioned by creation time, one partition per :width
-- seconds. The primary key must hold the partition column, so it no longer makes a key
-- unique across partitions: idem_parts_claim serializes the claims of one key with an
-- advisory lock taken before it looks for the key in every partition.
DROP TABLE IF EXISTS idem_parts CASCADE;
CREATE TABLE idem_parts (
	created_at timestamptz NOT NULL,
	lease_expires_at timestamptz,
	expires_at timestamptz NOT NULL,
	owner_token uuid NOT NULL,
	status char(1) NOT NULL,
	id bytea NOT NULL,
	fingerprint bytea NOT NULL,
	scope text NOT NULL,
	idem_key text NOT NULL,
	response bytea,
	takeover_at timestamptz,
	purge_after timestamptz,
	PRIMARY KEY (id, created_at)
) PARTITION BY RANGE (created_at);

-- Creates the partitions that cover [from, to), each as a table of its own attached with a
-- matching check constraint, so that attaching takes no lock that would stop the claims.
CREATE OR REPLACE FUNCTION idem_parts_ensure(p_from timestamptz, p_to timestamptz, p_width double precision)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
	lower_bound timestamptz := to_timestamp(floor(extract(epoch FROM p_from) / p_width) * p_width);
	upper_bound timestamptz;
	created integer := 0;
	name text;
BEGIN
	WHILE lower_bound < p_to LOOP
		upper_bound := lower_bound + make_interval(secs => p_width);
		name := 'idem_parts_' || extract(epoch FROM lower_bound)::bigint;
		IF to_regclass(name) IS NULL THEN
			EXECUTE format('CREATE TABLE %I (LIKE idem_parts INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', name);
			EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (created_at >= %L AND created_at < %L)',
				name, name || '_bounds', lower_bound, upper_bound);
			EXECUTE format('ALTER TABLE %I ADD PRIMARY KEY (id, created_at)', name);
			EXECUTE format('ALTER TABLE idem_parts ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
				name, lower_bound, upper_bound);
			created := created + 1;
		END IF;
		lower_bound := upper_bound;
	END LOOP;
	RETURN created;
END $$;

-- The claim in one round trip: each statement of a PL/pgSQL function sees what was committed
-- before it began, so the lookup after the lock sees a claim of the same key committed by
-- the lock's previous holder.
CREATE OR REPLACE FUNCTION idem_parts_claim(p_id bytea, p_lock bigint, p_scope text, p_key text, p_fingerprint bytea,
		p_owner uuid, p_lease_ms bigint, p_ttl_ms bigint)
RETURNS TABLE (inserted boolean, created_at timestamptz, fingerprint bytea, status text, owner_token uuid,
		response bytea, expires_at timestamptz)
LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_advisory_xact_lock(p_lock);
	RETURN QUERY SELECT false, t.created_at, t.fingerprint, t.status::text, t.owner_token, t.response, t.expires_at
		FROM idem_parts t WHERE t.id = p_id;
	IF FOUND THEN
		RETURN;
	END IF;
	RETURN QUERY INSERT INTO idem_parts AS t (id, scope, idem_key, fingerprint, status, owner_token, created_at,
			lease_expires_at, expires_at, purge_after)
		VALUES (p_id, p_scope, p_key, p_fingerprint, 'P', p_owner, now(), now() + p_lease_ms * INTERVAL '1 millisecond',
			now() + p_ttl_ms * INTERVAL '1 millisecond', now() + (p_ttl_ms + p_lease_ms) * INTERVAL '1 millisecond')
		RETURNING true, t.created_at, NULL::bytea, NULL::text, NULL::uuid, NULL::bytea, NULL::timestamptz;
END $$;

SELECT idem_parts_ensure(now() - make_interval(secs => :ttl + :width), now() + make_interval(secs => 3 * :width), :width);
