-- The tiered transactional claim of a key Redis granted: INSERT_CLAIM_GUARDED (the lock
-- and the insert alone), the payment, COMPLETE.
\set k random(1, 4000000000000)
BEGIN;
WITH guard AS (
	SELECT pg_try_advisory_xact_lock(:k) AS held,
		set_config('idle_in_transaction_session_timeout', (10000)::text, true) AS idle_limit
)
INSERT INTO idem (id, scope, idem_key, fingerprint, status, owner_token,
		created_at, lease_expires_at, expires_at, purge_after)
	SELECT decode(md5(:k::text) || md5(:k::text || 'x'), 'hex'), '', 'k-' || :k, decode(md5(:k::text) || md5(:k::text || 'x'), 'hex'), 'P', gen_random_uuid(), now(),
		now() + 30000 * INTERVAL '1 millisecond', now() + 30000 * INTERVAL '1 millisecond',
		now() + (30000 + 30000) * INTERVAL '1 millisecond'
	FROM guard WHERE guard.held
	ON CONFLICT (id) DO NOTHING;
INSERT INTO payment (account, amount, currency, reference) VALUES ('acc-42', 1299, 'EUR', 'order-1') RETURNING id;
UPDATE idem
SET status = 'C', response = '\x010100c9010c436f6e74656e742d54797065106170706c69636174696f6e2f6a736f6e6a7b226964223a227061792d33222c22737461747573223a224143434550544544222c226163636f756e74223a226163632d3432222c22616d6f756e74223a313239392c2263757272656e6379223a22455552222c227265666572656e6365223a226f726465722d31227d'::bytea, lease_expires_at = NULL,
	expires_at = now() + 30000 * INTERVAL '1 millisecond', takeover_at = NULL,
	purge_after = CASE WHEN now() + 30000 * INTERVAL '1 millisecond' < expires_at
		THEN now() + 30000 * INTERVAL '1 millisecond'
		ELSE GREATEST(purge_after, now() + 30000 * INTERVAL '1 millisecond') END
WHERE id = decode(md5(:k::text) || md5(:k::text || 'x'), 'hex') AND status = 'P' AND expires_at > now();
COMMIT;
