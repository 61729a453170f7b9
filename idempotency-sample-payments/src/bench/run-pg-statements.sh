#!/usr/bin/env bash
#
# The PostgreSQL statements of a transactional first request, without the application:
# pgbench runs each script of pg-statements/ (one transaction: claim, payment, completion)
# in interleaved rounds against a scratch database, and prints the median transactions per
# second of each. Commits do not wait for the WAL flush (synchronous_commit=off), so that
# the figures follow the CPU the statements cost rather than the disk. docs/benchmarks/transactional.md,
# "The statements of the transactional mode", says what the scripts are and what came out.
#
# Usage: run-pg-statements.sh
# Environment (defaults in brackets): PG_ROUNDS [4]  PG_SECONDS [5]  PG_CLIENTS [8]
#   BENCH_PG_HOST [127.0.0.1]  BENCH_PG_PORT [5432]  BENCH_PG_USER [postgres]  PGPASSWORD []
#   PG_DATABASE [pgbench_idem] (created if missing, its tables dropped at the end)
set -euo pipefail

DIR=$(cd "$(dirname "$0")/pg-statements" && pwd)
ROUNDS=${PG_ROUNDS:-4}
SECONDS_PER_RUN=${PG_SECONDS:-5}
CLIENTS=${PG_CLIENTS:-8}
PG=(-h "${BENCH_PG_HOST:-127.0.0.1}" -p "${BENCH_PG_PORT:-5432}" -U "${BENCH_PG_USER:-postgres}")
DB=${PG_DATABASE:-pgbench_idem}
for tool in psql pgbench; do
	command -v "$tool" > /dev/null || { echo "$tool is required" >&2; exit 1; }
done
if [[ -z $(psql -X -q -A -t "${PG[@]}" -d postgres -c "SELECT 1 FROM pg_database WHERE datname = '$DB'") ]]; then
	psql -X -q "${PG[@]}" -d postgres -c "CREATE DATABASE $DB"
fi
# the record table as the store's migrations create it, and the two tables of the baseline
psql -X -q "${PG[@]}" -d "$DB" <<'SQL'
DROP TABLE IF EXISTS idem, raw_record, payment;
CREATE TABLE idem (
	created_at timestamptz NOT NULL, lease_expires_at timestamptz, expires_at timestamptz NOT NULL,
	owner_token uuid NOT NULL, status char(1) NOT NULL, id bytea NOT NULL PRIMARY KEY,
	fingerprint bytea NOT NULL, scope text NOT NULL, idem_key text NOT NULL, response bytea,
	CONSTRAINT idem_id_check CHECK (octet_length(id) = 32),
	CONSTRAINT idem_fingerprint_check CHECK (octet_length(fingerprint) = 32),
	CONSTRAINT idem_status_check CHECK ((status = 'P' AND lease_expires_at IS NOT NULL AND response IS NULL)
		OR (status = 'C' AND lease_expires_at IS NULL AND response IS NOT NULL)),
	takeover_at timestamptz, purge_after timestamptz);
CREATE INDEX idem_purge_after_idx ON idem (purge_after);
CREATE TABLE raw_record (id text PRIMARY KEY, value bytea NOT NULL, expires_at timestamptz NOT NULL);
CREATE TABLE payment (id bigserial PRIMARY KEY, account text, amount bigint, currency text, reference text);
SQL
trap 'psql -X -q "${PG[@]}" -d "$DB" -c "DROP TABLE IF EXISTS idem, raw_record, payment" > /dev/null 2>&1 || true' EXIT

declare -A RESULTS=()
SCRIPTS=(hand-written claim-combined claim-insert-first write-once)
for round in $(seq 1 "$ROUNDS"); do
	for script in "${SCRIPTS[@]}"; do
		tps=$(PGOPTIONS="-c synchronous_commit=off" pgbench -n "${PG[@]}" -M prepared -c "$CLIENTS" -j 2 \
			-T "$SECONDS_PER_RUN" -f "$DIR/$script.sql" "$DB" 2>&1 | awk '/^tps/ { printf "%.0f", $3 }')
		echo "round $round  $script: $tps tps"
		RESULTS[$script]+="$tps "
	done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
base=$(echo "${RESULTS[hand-written]}" | median)
echo
echo "| script | median tps | against hand-written |"
echo "|---|---|---|"
for script in "${SCRIPTS[@]}"; do
	m=$(echo "${RESULTS[$script]}" | median)
	echo "| $script | $m | $(awk -v a="$m" -v b="$base" 'BEGIN { printf "%.2f", a / b }') |"
done
