#!/usr/bin/env bash
# The PostgreSQL store at volume (see PostgresVolumeBenchmark.java and docs/benchmarks/scale.md):
# prefills a table of its own with VOLUME_ROWS completed records expiring at VOLUME_RATE per
# second, adds VOLUME_RATE new records per second through the store, and runs the library's
# cleanup every VOLUME_CLEANUP_INTERVAL seconds after a baseline phase without it.
#
#   idempotency-spring-boot-starter/src/bench/run-volume-benchmark.sh
#   VOLUME_ROWS=2000000 VOLUME_RATE=2000 VOLUME_SECONDS=600 .../run-volume-benchmark.sh
#
# Needs a PostgreSQL server (VOLUME_URL, default jdbc:postgresql://127.0.0.1:5432/test, user
# postgres) with room for about 500 bytes per record, and drops and recreates the table
# idempotency_volume_bench in it.
set -euo pipefail
cd "$(dirname "$0")/../../.."

: "${VOLUME_URL:=jdbc:postgresql://127.0.0.1:5432/test}"
: "${VOLUME_USERNAME:=postgres}"
: "${VOLUME_PASSWORD:=}"
: "${VOLUME_ROWS:=10000000}"
: "${VOLUME_RATE:=5000}"
: "${VOLUME_THREADS:=16}"
: "${VOLUME_BASELINE:=120}"
: "${VOLUME_SECONDS:=900}"
: "${VOLUME_WINDOW:=60}"
: "${VOLUME_CLEANUP_INTERVAL:=60}"
: "${VOLUME_BATCH_SIZE:=1000}"
: "${VOLUME_PAUSE_FACTOR:=1}"
: "${VOLUME_LAYOUT_SQL:=}"

classpath_file=$(mktemp)
trap 'rm -f "$classpath_file"' EXIT
# in one reactor build, so that the starter's classpath names the core module's fresh jar;
# every module writes the file, the starter (built last) wins
./mvnw -q -B -ntp -pl idempotency-spring-boot-starter -am package dependency:build-classpath -DskipTests \
  -Dmaven.javadoc.skip -Dmaven.source.skip -Dcheckstyle.skip -Dspring-javaformat.skip \
  -Dmdep.outputFile="$classpath_file" >/dev/null

# the output goes to idempotency-spring-boot-starter/target/volume/volume.txt too, and its
# windows in the format of docs/benchmarks/data/volume.csv to volume.csv beside it; with
# BENCH_RECORD=1 (and BENCH_MACHINE, an id of docs/benchmarks/data/machines.csv) they are
# appended to docs/benchmarks/data/volume.csv
out=idempotency-spring-boot-starter/target/volume
mkdir -p "$out"
command=$(for name in $(compgen -e | grep '^VOLUME_' | grep -v PASSWORD | sort); do printf '%s=%q ' "$name" "${!name}"; done)
java -Xmx4g -cp "idempotency-spring-boot-starter/target/classes:$(cat "$classpath_file")" \
  -Dvolume.url="$VOLUME_URL" -Dvolume.username="$VOLUME_USERNAME" -Dvolume.password="$VOLUME_PASSWORD" \
  -Dvolume.rows="$VOLUME_ROWS" -Dvolume.rate="$VOLUME_RATE" -Dvolume.threads="$VOLUME_THREADS" \
  -Dvolume.baseline-seconds="$VOLUME_BASELINE" -Dvolume.seconds="$VOLUME_SECONDS" \
  -Dvolume.window-seconds="$VOLUME_WINDOW" -Dvolume.cleanup-interval-seconds="$VOLUME_CLEANUP_INTERVAL" \
  -Dvolume.batch-size="$VOLUME_BATCH_SIZE" -Dvolume.pause-factor="$VOLUME_PAUSE_FACTOR" -Dvolume.layout-sql="$VOLUME_LAYOUT_SQL" \
  idempotency-spring-boot-starter/src/bench/PostgresVolumeBenchmark.java 2>&1 | tee "$out/volume.txt"
python3 etc/docs/results.py volume "$out/volume.txt" --out "$out/volume.csv" \
  --command "${command}idempotency-spring-boot-starter/src/bench/run-volume-benchmark.sh"
if [ "${BENCH_RECORD:-0}" = 1 ]; then
  python3 etc/docs/results.py append "$out/volume.csv"
fi
