-- A design not taken (docs/benchmarks/transactional.md): the lock and a read of the row in one
-- statement, the payment, and the record written once, completed, at the end.
\set k random(1, 4000000000000)
BEGIN;
SELECT g.held, t.fingerprint, t.status::text, t.owner_token, t.response, t.expires_at, t.expires_at <= now()
FROM (SELECT pg_try_advisory_xact_lock(:k) AS held, set_config('idle_in_transaction_session_timeout', (10000)::text, true) AS idle_limit) g
LEFT JOIN idem t ON t.id = decode(md5(:k::text) || md5(:k::text || 'x'), 'hex');
INSERT INTO payment (account, amount, currency, reference) VALUES ('acc-42', 1299, 'EUR', 'order-1') RETURNING id;
INSERT INTO idem AS t (id, scope, idem_key, fingerprint, status, owner_token, created_at, lease_expires_at, expires_at, response, purge_after)
VALUES (decode(md5(:k::text) || md5(:k::text || 'x'), 'hex'), '', 'k-' || :k, decode(md5(:k::text) || md5(:k::text || 'x'), 'hex'), 'C', gen_random_uuid(), now(), NULL, now() + 30000 * INTERVAL '1 millisecond', '\x010100c9010c436f6e74656e742d54797065106170706c69636174696f6e2f6a736f6e6a7b226964223a227061792d33222c22737461747573223a224143434550544544222c226163636f756e74223a226163632d3432222c22616d6f756e74223a313239392c2263757272656e6379223a22455552222c227265666572656e6365223a226f726465722d31227d'::bytea, now() + 30000 * INTERVAL '1 millisecond')
ON CONFLICT (id) DO UPDATE SET status = 'C', response = EXCLUDED.response WHERE t.expires_at <= now();
COMMIT;
