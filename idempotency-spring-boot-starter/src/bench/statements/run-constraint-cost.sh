#!/usr/bin/env bash
# What the table's CHECK constraints cost PostgreSQL, counted in instructions rather than
# seconds, so that a busy machine gives the same answer as a quiet one (see
# docs/stores/postgresql.md, "The CHECK constraints, and what they cost").
#
# For each form of the table, a private single-user PostgreSQL backend (postgres --single, on a
# cluster this script creates with initdb in a temporary folder) runs under
# valgrind --tool=callgrind: the store's migrations, the form's change to the table, then the
# store's plain claim and completion (the statements of plain.pgbench, prepared once) for
# CONSTRAINT_BASE fresh keys, and again for CONSTRAINT_PAIRS fresh keys. The difference
# between the two runs, divided by the difference in keys, is the instructions one
# claim-and-completion pair costs the backend, start-up and shutdown left out. For the shipped
# form it also prints the share of a pair's instructions spent in ExecConstraints (checking the
# constraints) and in stringToNode (reading each constraint's stored expression, which
# PostgreSQL does again for every statement).
#
#   idempotency-spring-boot-starter/src/bench/statements/run-constraint-cost.sh
#   CONSTRAINT_FORMS="shipped unchecked" .../run-constraint-cost.sh
#
# CONSTRAINT_FORMS [shipped merged status lengths domains unchecked] names the forms:
#   shipped    the table as the store's migrations create it (three CHECK constraints)
#   merged     the three constraints replaced by one that states all of them
#   status     only the status constraint
#   lengths    only the two 32-byte length constraints
#   domains    the status constraint, and id and fingerprint of a domain type whose own CHECK
#              states the length
#   unchecked  no CHECK constraint
#
# Needs valgrind (callgrind_annotate comes with it) and PostgreSQL's server binaries (initdb,
# postgres: PG_BINDIR, else pg_config --bindir, else the newest /usr/lib/postgresql/*/bin).
# Run as root, it runs PostgreSQL as the postgres user. Takes about 20 s per form.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
migrations=$here/../../main/resources/dev/idempotency/spring/store/jdbc/migration/postgresql

: "${CONSTRAINT_BASE:=200}"
: "${CONSTRAINT_PAIRS:=1200}"
: "${CONSTRAINT_FORMS:=shipped merged status lengths domains unchecked}"
read -r -a FORMS <<< "$CONSTRAINT_FORMS"
if ((CONSTRAINT_PAIRS <= CONSTRAINT_BASE)); then
  echo "CONSTRAINT_PAIRS ($CONSTRAINT_PAIRS) must be larger than CONSTRAINT_BASE ($CONSTRAINT_BASE)" >&2
  exit 1
fi
for tool in valgrind callgrind_annotate; do
  command -v "$tool" > /dev/null || { echo "$tool not found (Debian: apt-get install valgrind)" >&2; exit 1; }
done
if [[ -z ${PG_BINDIR:-} ]]; then
  if command -v pg_config > /dev/null && [[ -x $(pg_config --bindir)/postgres ]]; then
    PG_BINDIR=$(pg_config --bindir)
  else
    PG_BINDIR=$(find /usr/lib/postgresql -maxdepth 2 -name bin -type d 2> /dev/null | sort -V | tail -n 1)
  fi
fi
[[ -x ${PG_BINDIR:-}/postgres && -x $PG_BINDIR/initdb ]] || {
  echo "PostgreSQL's server binaries not found: set PG_BINDIR to the folder of initdb and postgres" >&2
  exit 1
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
as_server() {
  if ((EUID == 0)); then runuser -u postgres -- "$@"; else "$@"; fi
}
if ((EUID == 0)); then chown postgres "$work"; fi
as_server "$PG_BINDIR/initdb" -D "$work/data" -A trust > /dev/null

drop_constraints='ALTER TABLE t DROP CONSTRAINT t_id_check, DROP CONSTRAINT t_fingerprint_check, DROP CONSTRAINT t_status_check;'
status_rule="(status = 'P' AND lease_expires_at IS NOT NULL AND response IS NULL) OR (status = 'C' AND lease_expires_at IS NULL AND response IS NOT NULL)"

# the form's change to the table, one statement per line
form_sql() {
  case $1 in
    shipped) ;;
    merged)
      echo "$drop_constraints"
      echo "ALTER TABLE t ADD CONSTRAINT t_check CHECK (octet_length(id) = 32 AND octet_length(fingerprint) = 32 AND ($status_rule));" ;;
    status)
      echo 'ALTER TABLE t DROP CONSTRAINT t_id_check, DROP CONSTRAINT t_fingerprint_check;' ;;
    lengths)
      echo 'ALTER TABLE t DROP CONSTRAINT t_status_check;' ;;
    domains)
      echo 'CREATE DOMAIN t_digest AS bytea CHECK (octet_length(VALUE) = 32);'
      echo 'ALTER TABLE t DROP CONSTRAINT t_id_check, DROP CONSTRAINT t_fingerprint_check, ALTER COLUMN id TYPE t_digest, ALTER COLUMN fingerprint TYPE t_digest;' ;;
    unchecked) echo "$drop_constraints" ;;
    *) echo "unknown form in CONSTRAINT_FORMS: $1" >&2; return 1 ;;
  esac
}

# the input of one backend: the store's migrations, the form, then the pairs (postgres --single
# ends a statement at each line's end)
backend_input() {
  local migration
  for migration in "$migrations"/V*.sql; do
    # shellcheck disable=SC2016 # the migrations' own placeholders, not shell expansions
    sed 's/--.*//; s/\${table_name}/t/g; s/\${table_simple_name}/t/g' "$migration"
  done | tr '\n\t' '  ' | sed 's/;/;\n/g' | sed 's/^ *//; /^$/d'
  form_sql "$1"
  echo "PREPARE claim(bigint) AS INSERT INTO t (id, scope, idem_key, fingerprint, status, owner_token, created_at, lease_expires_at, expires_at, purge_after) VALUES (sha256(int8send(\$1)), 'POST /payments', md5(\$1::text), sha256(int8send(-\$1)), 'P', md5(\$1::text)::uuid, now(), now() + 30000 * INTERVAL '1 millisecond', now() + 86400000 * INTERVAL '1 millisecond', now() + (86400000 + 30000) * INTERVAL '1 millisecond') ON CONFLICT (id) DO NOTHING;"
  echo "PREPARE complete(bigint) AS UPDATE t SET status = 'C', response = convert_to(repeat('x', 180), 'UTF8'), lease_expires_at = NULL, expires_at = now() + 86400000 * INTERVAL '1 millisecond', takeover_at = NULL, purge_after = CASE WHEN now() + 86400000 * INTERVAL '1 millisecond' < expires_at THEN now() + 86400000 * INTERVAL '1 millisecond' ELSE GREATEST(purge_after, now() + 86400000 * INTERVAL '1 millisecond') END WHERE id = sha256(int8send(\$1)) AND owner_token = md5(\$1::text)::uuid AND status = 'P' AND expires_at > now();"
  seq 1 "$2" | awk '{ printf "EXECUTE claim(%d);\nEXECUTE complete(%d);\n", $1, $1 }'
  echo 'DROP TABLE t;'
  echo 'DROP DOMAIN IF EXISTS t_digest;'
}

# runs one backend under callgrind; prints the instructions it executed
instructions() {
  local form=$1 pairs=$2 input=$work/$1.$2.sql out=$work/callgrind.$1.$2
  backend_input "$form" "$pairs" > "$input"
  if ((EUID == 0)); then chown postgres "$input"; fi
  as_server valgrind --tool=callgrind --callgrind-out-file="$out" \
    "$PG_BINDIR/postgres" --single -D "$work/data" postgres < "$input" > "$work/log" 2>&1
  if grep -q 'ERROR:' "$work/log"; then
    echo "the backend reported an error for form $form:" >&2
    grep -m 3 -A 1 'ERROR:' "$work/log" >&2
    return 1
  fi
  awk '/^summary:/ { print $2 }' "$out"
}

# inclusive instructions of one function in a callgrind output
inclusive() {
  callgrind_annotate --inclusive=yes "$1" 2> /dev/null |
    awk -v fn=":$2 " '!found && index($0, fn) { gsub(",", "", $1); print $1; found = 1 }'
}

printf 'form\tinstructions per pair\tExecConstraints\tstringToNode\n'
pairs=$((CONSTRAINT_PAIRS - CONSTRAINT_BASE))
for form in "${FORMS[@]}"; do
  base=$(instructions "$form" "$CONSTRAINT_BASE")
  total=$(instructions "$form" "$CONSTRAINT_PAIRS")
  per_pair=$(((total - base) / pairs))
  checking=-
  reading=-
  if [[ $form == shipped ]]; then
    # the two functions' share of a pair's instructions, start-up left out as above
    small=$work/callgrind.$form.$CONSTRAINT_BASE
    large=$work/callgrind.$form.$CONSTRAINT_PAIRS
    checking="$((100 * ($(inclusive "$large" ExecConstraints) - $(inclusive "$small" ExecConstraints)) / (total - base)))%"
    reading="$((100 * ($(inclusive "$large" stringToNode) - $(inclusive "$small" stringToNode)) / (total - base)))%"
  fi
  printf '%s\t%s\t%s\t%s\n' "$form" "$per_pair" "$checking" "$reading"
done
