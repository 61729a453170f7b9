-- The hand-written baseline of the transactional payment (BenchController /raw/tx-jdbc):
-- a claim insert guarded by the key's advisory lock, the payment, an update of the record.
\set k random(1, 4000000000000)
BEGIN;
WITH guard AS (SELECT pg_try_advisory_xact_lock(hashtextextended(:k::text, 0)) AS held) INSERT INTO raw_record (id, value, expires_at) SELECT :k::text, '\x00'::bytea, now() + interval '30 seconds' FROM guard WHERE held ON CONFLICT (id) DO NOTHING;
INSERT INTO payment (account, amount, currency, reference) VALUES ('acc-42', 1299, 'EUR', 'order-1') RETURNING id;
UPDATE raw_record SET value = '\x010100c9010c436f6e74656e742d54797065106170706c69636174696f6e2f6a736f6e6a7b226964223a227061792d33222c22737461747573223a224143434550544544222c226163636f756e74223a226163632d3432222c22616d6f756e74223a313239392c2263757272656e6379223a22455552222c227265666572656e6365223a226f726465722d31227d'::bytea, expires_at = now() + interval '30 seconds' WHERE id = :k::text;
COMMIT;
