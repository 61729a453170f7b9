#!/usr/bin/env bash
#
# HTTP benchmark of the WebFlux filter (docs/benchmarks/http.md, "WebFlux"): the bench application
# of this module (WebFluxBenchApplication, Reactor Netty, the Redis store on a private Redis
# server) measured with wrk on /bare, /idem with a new key per request (the first request)
# and /idem with one key (the replay), interleaved over rounds, at c=16 and c=1, with the
# wrk script of the servlet benchmark. Prints one line per run and a table of medians.
#
# Usage: run-wrk.sh   Environment: ROUNDS [3] DURATION [10] (s, c=16) C1_DURATION [5] WARMUP [10]
#   REDIS_PORT [16392] APP_PORT [18190]
set -euo pipefail
MODULE=$(cd "$(dirname "$0")/../.." && pwd)
ROOT=$(cd "$MODULE/.." && pwd)
LUA=$ROOT/idempotency-sample-payments/src/bench/httpbench.lua
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
C1_DURATION=${C1_DURATION:-5}
WARMUP=${WARMUP:-10}
REDIS_PORT=${REDIS_PORT:-16392}
APP_PORT=${APP_PORT:-18190}
OUT=$MODULE/target/wrk
mkdir -p "$OUT"
for tool in wrk java redis-server redis-cli; do
	command -v "$tool" > /dev/null || { echo "$tool is required" >&2; exit 1; }
done
(cd "$ROOT" && ./mvnw -q -B -pl idempotency-sample-webflux -am -DskipTests install -Dmaven.javadoc.skip \
	&& ./mvnw -q -B -pl idempotency-sample-webflux dependency:build-classpath -Dmdep.outputFile="$OUT/classpath.txt" \
		-Dmdep.includeScope=test)
CLASSPATH=$MODULE/target/test-classes:$MODULE/target/classes:$(cat "$OUT/classpath.txt")
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2> /dev/null || true; done; wait 2> /dev/null || true; }
trap cleanup EXIT
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --logfile "$OUT/redis.log" &
PIDS+=($!)
java -Xms512m -Xmx512m -XX:+UseG1GC -XX:+AlwaysPreTouch -cp "$CLASSPATH" \
	dev.idempotency.bench.webflux.WebFluxBenchApplication --server.port="$APP_PORT" \
	--idempotency.store.type=redis --spring.data.redis.host=127.0.0.1 --spring.data.redis.port="$REDIS_PORT" \
	> "$OUT/app.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 60); do
	curl -s -o /dev/null -X POST "http://127.0.0.1:$APP_PORT/bare" -H 'Content-Type: application/json' \
		-d '{"account":"a","amount":1,"currency":"EUR","reference":"r"}' && break
	sleep 1
done
RUN=$(date +%s)
run() { # label path key connections seconds
	local out
	out=$(BENCH_KEY=$3 BENCH_RUN="$RUN-$1-$4-$RANDOM" wrk -t"$(( $4 > 1 ? 2 : 1 ))" -c"$4" -d"$5s" -s "$LUA" \
		"http://127.0.0.1:$APP_PORT$2" | grep '^RESULT')
	echo "$1 c=$4 $out"
}
# the replay's key, completed once
curl -s -o /dev/null -X POST "http://127.0.0.1:$APP_PORT/idem" -H 'Content-Type: application/json' \
	-H 'Idempotency-Key: replay-key' -d '{"account":"acc-42","amount":1299,"currency":"EUR","reference":"order-2026-11-23-0001"}'
for case in "bare /bare none" "first /idem unique" "replay /idem replay-key"; do
	read -r label path key <<< "$case"
	run "$label" "$path" "$key" 16 "$WARMUP" > /dev/null
done
for round in $(seq 1 "$ROUNDS"); do
	for case in "bare /bare none" "first /idem unique" "replay /idem replay-key"; do
		read -r label path key <<< "$case"
		run "$label" "$path" "$key" 16 "$DURATION" | tee -a "$OUT/results.txt"
		run "$label" "$path" "$key" 1 "$C1_DURATION" | tee -a "$OUT/results.txt"
	done
done
python3 - "$OUT/results.txt" "$RUN" <<'PY'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    m = re.match(r'(\S+) c=(\d+) RESULT requests=(\d+) duration_us=(\d+) non2xx=(\d+).* p50_us=(\d+)', line)
    if m:
        label, c, req, dur, non2xx, p50 = m.groups()
        rows.setdefault((label, int(c)), []).append((int(req) / (int(dur) / 1e6), int(p50), int(non2xx)))
print("| case | c=16 req/s | c=16 p50 ms | c=1 req/s | c=1 p50 ms | non-2xx |")
print("|---|---|---|---|---|---|")
for label in ("bare", "first", "replay"):
    cells = []
    for c in (16, 1):
        runs = rows.get((label, c), [])
        cells.append("{:,.0f}".format(statistics.median(r[0] for r in runs)) if runs else "-")
        cells.append("{:.2f}".format(statistics.median(r[1] for r in runs) / 1000) if runs else "-")
    errors = sum(r[2] for c in (16, 1) for r in rows.get((label, c), []))
    print("| {} | {} | {} | {} | {} | {} |".format(label, *cells, errors))
PY
