#!/usr/bin/env bash
# Deleting expired rows against dropping whole partitions (see docs/benchmarks/scale.md, "Time
# partitions against the cleanup"). For each layout in PART_LAYOUTS, prefills a table of its
# own with PART_RATE x PART_TTL completed records expiring at PART_RATE per second, then has
# pgbench claim and complete PART_RATE fresh keys a second for PART_SECONDS from PART_CLIENTS
# connections, while a maintenance loop runs every PART_CLEANUP_INTERVAL seconds:
#
#   rows        the library's table (its migrations) and cleanup (batches of 1,000 deletes with pauses),
#               from PART_BASELINE seconds on;
#   partitions  a table partitioned by creation time, PART_WIDTH seconds per partition, whose
#               claim is a function that takes an advisory lock on the key and looks for it in
#               every partition before it inserts; the loop attaches the partitions ahead and,
#               from PART_BASELINE seconds on, detaches (CONCURRENTLY) and drops expired ones.
#
# It prints, per layout: the pairs' latency (claim and completion, without pgbench's schedule
# lag) while the maintenance ran and between its runs, the machine's CPU per pair, and the
# tables' sizes over time. Results go to PART_OUT (default a new directory under /tmp).
#
#   idempotency-spring-boot-starter/src/bench/partitioning/run-partitioning-benchmark.sh
#
# Needs psql and pgbench, a PostgreSQL server (PGHOST, PGPORT, PGUSER, PGDATABASE; default
# 127.0.0.1, 5432, postgres, test) with autovacuum on and room for about 1 KB per record; drops
# and recreates the tables idem_rows and idem_parts* in it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
migrations=$here/../../main/resources/dev/idempotency/spring/store/jdbc/migration/postgresql

: "${PGHOST:=127.0.0.1}" "${PGPORT:=5432}" "${PGUSER:=postgres}" "${PGDATABASE:=test}"
export PGHOST PGPORT PGUSER PGDATABASE
export PGOPTIONS="${PGOPTIONS:-} -c client_min_messages=warning"
: "${PART_LAYOUTS:=rows partitions}"
: "${PART_RATE:=2500}"
: "${PART_TTL:=400}"
: "${PART_LEASE:=30}"
: "${PART_WIDTH:=60}"
: "${PART_CLIENTS:=16}"
: "${PART_SECONDS:=480}"
: "${PART_BASELINE:=60}"
: "${PART_CLEANUP_INTERVAL:=60}"
: "${PART_WINDOW:=60}"
: "${PART_OUT:=$(mktemp -d /tmp/partitioning.XXXXXX)}"
mkdir -p "$PART_OUT"

q() { psql -X -q -A -t -v ON_ERROR_STOP=1 "$@"; }
now_us() { date +%s%6N; }
busy_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat; }

if [[ "$(q -c 'SHOW autovacuum')" != on && -z "${PART_ALLOW_AUTOVACUUM_OFF:-}" ]]; then
  echo "autovacuum is off on this server: the rows layout would grow by every deleted row." >&2
  echo "Turn it on (ALTER SYSTEM SET autovacuum = on; SELECT pg_reload_conf()) or set PART_ALLOW_AUTOVACUUM_OFF=1." >&2
  exit 1
fi

vars=(-v rate="$PART_RATE" -v ttl="$PART_TTL" -v lease="$PART_LEASE" -v width="$PART_WIDTH")

sizes() {
  local layout=$1 pattern
  if [[ $layout == rows ]]; then pattern='idem_rows'; else pattern='idem_parts\_%'; fi
  q -c "SELECT round(sum(pg_table_size(relid)) / 1048576.0) || ' MB table, ' || round(sum(pg_indexes_size(relid)) / 1048576.0)
      || ' MB indexes, ' || sum(n_dead_tup) || ' dead row versions, ' || count(*) || ' table(s)'
      FROM pg_stat_user_tables WHERE relname LIKE '$pattern'"
}

maintain() {
  local layout=$1 started=$2 log=$3 start end what
  while true; do
    sleep "$PART_CLEANUP_INTERVAL"
    start=$(now_us)
    what=""
    if [[ $layout == partitions ]]; then
      what="attached $(q -c "SELECT idem_parts_ensure(now(), now() + make_interval(secs => 3 * $PART_WIDTH), $PART_WIDTH)")"
    fi
    if (( $(date +%s) - started >= PART_BASELINE )); then
      if [[ $layout == rows ]]; then
        q -f "$here/cleanup-rows.sql"
        what="$what deleted $(q -c "SELECT n_tup_del FROM pg_stat_user_tables WHERE relname = 'idem_rows'") in all"
      else
        dropped=0
        if ! candidates=$(q "${vars[@]}" -f "$here/droppable-partitions.sql"); then
          what="$what FAILED to list the partitions"
        fi
        for part in $candidates; do
          if [[ $(q -c "SELECT coalesce(max(purge_after) <= now(), true) FROM $part") == t ]]; then
            q -c "ALTER TABLE idem_parts DETACH PARTITION $part CONCURRENTLY"
            q -c "DROP TABLE $part"
            dropped=$((dropped + 1))
          fi
        done
        what="$what dropped $dropped"
      fi
    fi
    end=$(now_us)
    # a loop that did nothing (the library's layout before PART_BASELINE) is no run
    if [[ -n $what ]]; then
      echo "$start $end $what" >> "$log"
    fi
  done
}

sample() {
  local layout=$1
  while true; do
    sleep "$PART_WINDOW"
    echo "$(date +%T) $(sizes "$layout")" >> "$PART_OUT/$layout-sizes.txt"
  done
}

percentiles() {
  # p50 p99 p99.9 of the numbers on stdin, in milliseconds
  sort -n | awk '{ v[NR] = $1 } END {
    if (NR == 0) { print "n=0"; exit }
    printf "n=%d p50 %.2f p99 %.2f p99.9 %.2f max %.2f ms", NR, v[int(NR * 0.5) + 1] / 1000,
      v[int(NR * 0.99) + 1] / 1000, v[int(NR * 0.999) + 1] / 1000, v[NR] / 1000 }'
}

for layout in $PART_LAYOUTS; do
  echo "== $layout"
  rm -f "$PART_OUT/$layout"-*
  t0=$(date +%s)
  if [[ $layout == rows ]]; then
    table=idem_rows
    # the library's own table, from its migrations
    q -c 'DROP TABLE IF EXISTS idem_rows'
    for migration in "$migrations"/V*.sql; do
      # shellcheck disable=SC2016 # the placeholders are the migrations' own, not the shell's
      sed 's/\${table_name}/idem_rows/g; s/\${table_simple_name}/idem_rows/g' "$migration" | q >/dev/null
    done
  else
    table=idem_parts
    q "${vars[@]}" -f "$here/partitions-schema.sql" >/dev/null
  fi
  q "${vars[@]}" -v table="$table" -f "$here/prefill.sql" >/dev/null
  echo "prefilled $((PART_RATE * PART_TTL)) records in $(( $(date +%s) - t0 )) s: $(sizes "$layout")"
  started=$(date +%s)
  maintain "$layout" "$started" "$PART_OUT/$layout-maintenance.txt" &
  maintainer=$!
  sample "$layout" &
  sampler=$!
  ticks_before=$(busy_ticks)
  pgbench -n -M prepared -c "$PART_CLIENTS" -j 2 -R "$PART_RATE" -T "$PART_SECONDS" \
    -D lease_ms=$((PART_LEASE * 1000)) -D ttl_ms=$((PART_TTL * 1000)) \
    -l --log-prefix="$PART_OUT/$layout-tx" -f "$here/claim-$layout.pgbench" > "$PART_OUT/$layout-pgbench.txt" 2>&1 \
    || { cat "$PART_OUT/$layout-pgbench.txt" >&2; kill "$maintainer" "$sampler"; exit 1; }
  ticks_after=$(busy_ticks)
  kill "$maintainer" "$sampler" 2>/dev/null || true
  wait "$maintainer" "$sampler" 2>/dev/null || true
  pairs=$(grep -h '^number of transactions actually processed' "$PART_OUT/$layout-pgbench.txt" | awk '{print $NF}' | cut -d/ -f1)
  failed=$(grep -h '^number of failed transactions' "$PART_OUT/$layout-pgbench.txt" | awk '{print $5}')
  hz=$(getconf CLK_TCK)
  echo "pairs $pairs ($((pairs / PART_SECONDS)) a second of the $PART_RATE asked), failed ${failed:-0}, machine CPU per pair $(( (ticks_after - ticks_before) * 1000000 / hz / pairs )) µs"
  echo "maintenance runs (start, time taken, what):"
  awk '{ printf "  +%d s  %d ms  %s\n", ($1 / 1000000) - '"$started"', ($2 - $1) / 1000, substr($0, index($0, $3)) }' \
    "$PART_OUT/$layout-maintenance.txt" 2>/dev/null || true
  # each logged pair: end of the pair and its latency without the schedule lag; it overlapped
  # a maintenance run if it began before the run ended and ended after the run began
  cat "$PART_OUT/$layout"-tx.* | awk -v runs="$PART_OUT/$layout-maintenance.txt" -v out="$PART_OUT/$layout" '
    BEGIN { n = 0; while ((getline line < runs) > 0) { split(line, f, " "); s[++n] = f[1]; e[n] = f[2] } }
    { took = $3 - $7; stop = $5 * 1000000 + $6; begin = stop - took; during = 0
      for (i = 1; i <= n; i++) if (begin < e[i] && stop > s[i]) { during = 1; break }
      print took > (out (during ? "-during.txt" : "-between.txt")) }'
  echo "pairs while a maintenance run ran: $(percentiles < "$PART_OUT/$layout-during.txt" 2>/dev/null || echo n=0)"
  echo "pairs between runs:               $(percentiles < "$PART_OUT/$layout-between.txt")"
  echo "sizes every $PART_WINDOW s:"
  sed 's/^/  /' "$PART_OUT/$layout-sizes.txt"
done
echo "raw results in $PART_OUT"
