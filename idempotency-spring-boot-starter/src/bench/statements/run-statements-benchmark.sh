#!/usr/bin/env bash
# The claim and completion statements of a tiered first request, in their combined (CTE) and
# plain forms, with pgbench (see docs/benchmarks/postgresql.md, "Plain statements for the tiered first
# request"). Each round recreates the table from the store's own migrations (as
# idem_statements), then runs each form for STMT_SECONDS from STMT_CLIENTS connections
# (-M prepared, a fresh key per transaction), alternating which goes first, and prints its
# transactions a second and the CPU time of the PostgreSQL server's processes per transaction,
# read from /proc (so the server must run on this machine, as the postgres user).
#
#   idempotency-spring-boot-starter/src/bench/statements/run-statements-benchmark.sh
#   STMT_FORMS="plain unchecked unindexed baseline" .../run-statements-benchmark.sh
#
# STMT_FORMS [combined plain] names the forms to run:
#   combined, plain  the store's statements in each form (combined.pgbench, plain.pgbench)
#   unchecked        the plain form on the store's table without its three CHECK constraints
#   unindexed        the plain form on the store's table without its purge_after index
#   baseline         the hand-written baseline of the HTTP benchmark's case 5d (baseline.pgbench):
#                    an INSERT ... ON CONFLICT DO NOTHING and an UPDATE of a three-column table
#                    keyed by the key's text
#
# Needs psql and pgbench and a PostgreSQL server (PGHOST, PGPORT, PGUSER, PGDATABASE; default
# 127.0.0.1, 5432, postgres, test); drops and recreates the table idem_statements in it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
migrations=$here/../../main/resources/dev/idempotency/spring/store/jdbc/migration/postgresql

: "${PGHOST:=127.0.0.1}" "${PGPORT:=5432}" "${PGUSER:=postgres}" "${PGDATABASE:=test}"
export PGHOST PGPORT PGUSER PGDATABASE
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
: "${STMT_ROUNDS:=4}"
: "${STMT_SECONDS:=10}"
: "${STMT_CLIENTS:=16}"
: "${STMT_FORMS:=combined plain}"
read -r -a FORMS <<< "$STMT_FORMS"

q() { psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }

# clock ticks of every process of the postgres user
server_ticks() {
  local total=0 pid fields
  for pid in $(pgrep -u postgres); do
    read -r -a fields < "/proc/$pid/stat" 2> /dev/null || continue
    total=$((total + fields[13] + fields[14] + fields[15] + fields[16]))
  done
  echo "$total"
}

create_table() {
  q -c 'DROP TABLE IF EXISTS idem_statements'
  for migration in "$migrations"/V*.sql; do
    # shellcheck disable=SC2016 # the migrations' own placeholders, not shell expansions
    sed 's/\${table_name}/idem_statements/g; s/\${table_simple_name}/idem_statements/g' "$migration" | q > /dev/null
  done
}

# creates the table of a form and sets SCRIPT to the pgbench script it runs
setup_form() {
  case $1 in
    combined) create_table; SCRIPT=$here/combined.pgbench ;;
    plain) create_table; SCRIPT=$here/plain.pgbench ;;
    unchecked)
      create_table
      q -c 'ALTER TABLE idem_statements DROP CONSTRAINT idem_statements_id_check,
        DROP CONSTRAINT idem_statements_fingerprint_check, DROP CONSTRAINT idem_statements_status_check'
      SCRIPT=$here/plain.pgbench ;;
    unindexed)
      create_table
      q -c 'DROP INDEX idem_statements_purge_after_idx'
      SCRIPT=$here/plain.pgbench ;;
    baseline)
      q -c 'DROP TABLE IF EXISTS idem_statements'
      q -c 'CREATE TABLE idem_statements (id text PRIMARY KEY, value bytea NOT NULL, expires_at timestamptz NOT NULL)'
      SCRIPT=$here/baseline.pgbench ;;
    *) echo "unknown form in STMT_FORMS: $1" >&2; return 1 ;;
  esac
}

hz=$(getconf CLK_TCK)
printf 'round\tform\ttransactions/s\tPostgreSQL CPU us/transaction\n'
for round in $(seq 1 "$STMT_ROUNDS"); do
  # the order is reversed every other round
  forms=("${FORMS[@]}")
  if ((round % 2 == 0)); then
    forms=()
    for ((i = ${#FORMS[@]} - 1; i >= 0; i--)); do forms+=("${FORMS[$i]}"); done
  fi
  for form in "${forms[@]}"; do
    setup_form "$form"
    q -c 'CHECKPOINT'
    before=$(server_ticks)
    out=$(pgbench -n -M prepared -c "$STMT_CLIENTS" -j 2 -T "$STMT_SECONDS" -f "$SCRIPT" 2>&1)
    after=$(server_ticks)
    done_count=$(awk '/number of transactions actually processed/ {split($NF, n, "/"); print n[1]}' <<< "$out")
    tps=$(awk '/^tps/ {printf "%.0f", $3}' <<< "$out")
    printf '%s\t%s\t%s\t%s\n' "$round" "$form" "$tps" \
      "$(( (after - before) * 1000000 / hz / done_count ))"
  done
done
q -c 'DROP TABLE IF EXISTS idem_statements'
