#!/usr/bin/env bash
#
# HTTP benchmarks of the idempotency starter (docs/benchmarks/http.md).
#
# Starts dev.idempotency.sample.bench.HttpBenchApplication once per store mode (redis,
# tiered, jdbc, tiered with the lookup claim, and tiered and jdbc with the transactional
# policy "tx" of /payment/idem-tx), each JVM with every endpoint, on
# a private Redis and a PostgreSQL database of its own. Then it measures the endpoints one
# after the other, interleaved over several rounds, at concurrency 16 and at concurrency 1,
# reads the CPU time each process spent, counts the Redis commands (sent by the application,
# and run by the server) of each run and, in a last pass of its own, the PostgreSQL
# transactions and rows written of each case, and prints markdown tables with the ratios
# against the performance budget (docs/benchmarks/budget.md).
#
# Usage: run-http-benchmarks.sh [--no-build] [--quick]
# Environment (defaults in brackets):
#   BENCH_ROUNDS [3]  BENCH_DURATION [10] (s, c=16)  BENCH_C1_DURATION [5] (s, c=1)
#   BENCH_COUNT_DURATION [2] (s, c=1, the pass that counts the round trips of each case)
#   BENCH_PG_STATS_DELAY [11] (s: how long that pass waits for PostgreSQL's statistics)
#   BENCH_WARMUP [5] (s per endpoint)  BENCH_HEAP [512m]  BENCH_JFR [0] (1: JFR profile per JVM)
#   BENCH_REDIS_SERVER [redis-server]  BENCH_REDIS_PORT [16379] (a private server is started there)
#   BENCH_REDIS_CLUSTER [0] (1: a private Redis Cluster of 3 masters on BENCH_REDIS_PORT and the next two ports)
#   BENCH_REDIS_CLIENT [lettuce] (jedis: Spring Data Redis on Jedis, a pool of 32 connections that
#   waits at most 2 s for one; Jedis has no command metric, so the round trips the applications
#   sent are not counted, only the commands Redis ran)
#   BENCH_PG_HOST [127.0.0.1]  BENCH_PG_PORT [5432]  BENCH_PG_USER [postgres]  PGPASSWORD []
#   BENCH_PG_DATABASE [httpbench] (created if missing; its bench tables are dropped at the end)
#   BENCH_OUT [idempotency-sample-payments/target/httpbench]
#   BENCH_APPS ["redis tiered jdbc lookup tx jdbctx"] (the applications to start)
#   BENCH_CASES [.] (an extended regex on the case numbers, e.g. '^(1|2|2b|3|4)$'; cases
#   whose application is not started are left out)
#   BENCH_RATE [none] (req/s offered in the c=16 pass: each connection waits a random time, of
#   mean 16/BENCH_RATE s, before each request, so that the machine is not saturated and the
#   latencies are each request's own rather than the queue's; none: back to back)
#   BENCH_RECORD [0] (1: append the ratios to docs/benchmarks/data/http-ratios.csv; they are
#   always written to BENCH_OUT/http-ratios.csv)  BENCH_MACHINE [] (the machine's id in
#   docs/benchmarks/data/machines.csv; needed with BENCH_RECORD=1)  BENCH_VARIANT [] (what
#   differs from the shipped defaults, for that file: "Jedis", say)
set -euo pipefail

MODULE=$(cd "$(dirname "$0")/../.." && pwd)
ROOT=$(cd "$MODULE/.." && pwd)
LUA=$MODULE/src/bench/httpbench.lua
OUT=${BENCH_OUT:-$MODULE/target/httpbench}
ROUNDS=${BENCH_ROUNDS:-3}
DURATION=${BENCH_DURATION:-10}
C1_DURATION=${BENCH_C1_DURATION:-5}
COUNT_DURATION=${BENCH_COUNT_DURATION:-2}
WARMUP=${BENCH_WARMUP:-5}
HEAP=${BENCH_HEAP:-512m}
RATE=${BENCH_RATE:-}
REDIS_SERVER=${BENCH_REDIS_SERVER:-redis-server}
REDIS_PORT=${BENCH_REDIS_PORT:-16379}
REDIS_CLUSTER=${BENCH_REDIS_CLUSTER:-0}
REDIS_CLIENT=${BENCH_REDIS_CLIENT:-lettuce}
case $REDIS_CLIENT in
	lettuce) CLIENT_ARGS=() ;;
	jedis) CLIENT_ARGS=(--spring.data.redis.client-type=jedis --spring.data.redis.jedis.pool.max-active=32
		--spring.data.redis.jedis.pool.max-idle=32 --spring.data.redis.jedis.pool.max-wait=2s) ;;
	*) echo "unknown BENCH_REDIS_CLIENT: $REDIS_CLIENT (lettuce or jedis)" >&2; exit 2 ;;
esac
PG_HOST=${BENCH_PG_HOST:-127.0.0.1}
PG_PORT=${BENCH_PG_PORT:-5432}
PG_USER=${BENCH_PG_USER:-postgres}
PG_DB=${BENCH_PG_DATABASE:-httpbench}
BUILD=1
for arg in "$@"; do
	case $arg in
		--no-build) BUILD=0 ;;
		--quick) ROUNDS=1 DURATION=3 C1_DURATION=2 WARMUP=2 ;;
		*) echo "unknown argument: $arg" >&2; exit 2 ;;
	esac
done
if [[ ${BENCH_RECORD:-0} == 1 && -z ${BENCH_MACHINE:-} ]]; then
	echo "BENCH_RECORD=1 needs BENCH_MACHINE, an id of docs/benchmarks/data/machines.csv" >&2
	exit 2
fi
# the command as given, for the result files: the settings, then the arguments
COMMAND=$(for name in $(compgen -e | grep '^BENCH_' | grep -Ev '^BENCH_(RECORD|MACHINE|VARIANT|OUT)$' | sort); do
	printf '%s=%q ' "$name" "${!name}"
done)"idempotency-sample-payments/src/bench/run-http-benchmarks.sh${*:+ $*}"
for tool in wrk java curl psql redis-cli python3 "$REDIS_SERVER"; do
	command -v "$tool" > /dev/null || { echo "$tool is required" >&2; exit 1; }
done

mkdir -p "$OUT"
RESULTS=$OUT/results.tsv
RUN_ID=r$(date +%s)
PIDS=()
PSQL=(psql -X -q -A -t -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER")

cleanup() {
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2> /dev/null || true
	done
	wait 2> /dev/null || true
	"${PSQL[@]}" -d "$PG_DB" -c "DROP TABLE IF EXISTS httpbench_payment, httpbench_raw_record,
		httpbench_idem_tiered, httpbench_idem_tiered_schema_history,
		httpbench_idem_jdbc, httpbench_idem_jdbc_schema_history,
		httpbench_idem_lookup, httpbench_idem_lookup_schema_history,
		httpbench_idem_tx, httpbench_idem_tx_schema_history,
		httpbench_idem_jdbctx, httpbench_idem_jdbctx_schema_history" > /dev/null 2>&1 || true
}
trap cleanup EXIT

if [[ $BUILD == 1 ]]; then
	echo "Building (test-compile of the sample and the modules it needs)..."
	(cd "$ROOT" && ./mvnw -B -q -pl idempotency-sample-payments -am -DskipTests test-compile \
		dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$OUT/classpath.txt")
fi
CLASSPATH=$MODULE/target/test-classes:$MODULE/target/classes:$(cat "$OUT/classpath.txt")

# a private Redis: its INFO commandstats count this benchmark's commands only; in cluster
# mode three masters, whose counts are summed
if [[ $REDIS_CLUSTER == 1 ]]; then
	REDIS_PORTS=("$REDIS_PORT" $((REDIS_PORT + 1)) $((REDIS_PORT + 2)))
else
	REDIS_PORTS=("$REDIS_PORT")
fi
for port in "${REDIS_PORTS[@]}"; do
	if redis-cli -p "$port" ping > /dev/null 2>&1; then
		echo "Port $port is taken: set BENCH_REDIS_PORT to a free port" >&2
		exit 1
	fi
done
REDIS_PIDS=()
if [[ $REDIS_CLUSTER == 1 ]]; then
	rm -f "$OUT"/nodes-*.conf
	for port in "${REDIS_PORTS[@]}"; do
		"$REDIS_SERVER" --port "$port" --cluster-enabled yes --cluster-config-file "$OUT/nodes-$port.conf" \
			--cluster-node-timeout 5000 --save "" --appendonly no --bind 127.0.0.1 --dir "$OUT" \
			--logfile "$OUT/redis-$port.log" &
		PIDS+=($!)
		REDIS_PIDS+=($!)
	done
	for i in "${!REDIS_PORTS[@]}"; do
		port=${REDIS_PORTS[$i]}
		for _ in $(seq 1 40); do
			redis-cli -p "$port" ping > /dev/null 2>&1 && break
			kill -0 "${REDIS_PIDS[$i]}" 2> /dev/null || break
			sleep 0.25
		done
		redis-cli -p "$port" ping > /dev/null 2>&1 \
			|| { echo "the Redis node on port $port did not start: $OUT/redis-$port.log" >&2; exit 1; }
	done
	redis-cli --cluster create "${REDIS_PORTS[@]/#/127.0.0.1:}" --cluster-replicas 0 --cluster-yes \
		> "$OUT/redis-cluster-create.log" 2>&1 \
		|| { echo "redis-cli --cluster create failed: $OUT/redis-cluster-create.log" >&2; exit 1; }
	# every node must see the whole cluster: the application may ask any of them for the slots
	for port in "${REDIS_PORTS[@]}"; do
		state=
		for _ in $(seq 1 60); do
			state=$(redis-cli -p "$port" cluster info 2> /dev/null | tr -d '\r' \
				| awk -F: '$1 == "cluster_state" || $1 == "cluster_slots_assigned" { printf "%s ", $2 }')
			[[ $state == "ok 16384 " ]] && break
			sleep 0.5
		done
		[[ $state == "ok 16384 " ]] || { echo "the Redis Cluster is not ready after 30 s (node $port:" \
			"cluster_state and cluster_slots_assigned = ${state:-none}): $OUT/redis-$port.log" >&2; exit 1; }
	done
	REDIS_NODES=$(printf '127.0.0.1:%s,' "${REDIS_PORTS[@]}")
	REDIS_NODES=${REDIS_NODES%,}
	REDIS_ARGS=(--spring.data.redis.cluster.nodes="$REDIS_NODES")
	REDIS_DESCRIPTION="cluster of 3 masters on ports ${REDIS_NODES//127.0.0.1:/}"
else
	"$REDIS_SERVER" --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$OUT" \
		--logfile "$OUT/redis.log" &
	PIDS+=($!)
	REDIS_PIDS+=($!)
	REDIS_ARGS=(--spring.data.redis.host=127.0.0.1 --spring.data.redis.port="$REDIS_PORT")
	REDIS_DESCRIPTION="single server on port $REDIS_PORT"
fi
echo "Redis: $REDIS_DESCRIPTION, client $REDIS_CLIENT"
# a database of its own: pg_stat_database counts this benchmark's transactions only
if [[ -z $("${PSQL[@]}" -d postgres -c "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'") ]]; then
	"${PSQL[@]}" -d postgres -c "CREATE DATABASE $PG_DB"
fi

declare -A PORTS=([redis]=18081 [tiered]=18082 [jdbc]=18083 [lookup]=18084 [tx]=18085 [jdbctx]=18086)
declare -A POOLS=([redis]=16 [tiered]=16 [jdbc]=16 [lookup]=16 [tx]=16 [jdbctx]=16)
# store type of each application; "lookup" is the tiered store with the opt-in lookup
# claim, "tx" and "jdbctx" the tiered and jdbc stores whose policy "tx" is transactional
declare -A TYPES=([redis]=redis [tiered]=tiered [jdbc]=jdbc [lookup]=tiered [tx]=tiered [jdbctx]=jdbc)
declare -A CLAIMS=([redis]=durable [tiered]=durable [jdbc]=durable [lookup]=lookup [tx]=durable [jdbctx]=durable)
declare -A TRANSACTIONAL=([redis]=false [tiered]=false [jdbc]=false [lookup]=false [tx]=true [jdbctx]=true)
read -r -a APPS <<< "${BENCH_APPS:-redis tiered jdbc lookup tx jdbctx}"
declare -A APP_PIDS=()
for app in "${APPS[@]}"; do
	[[ -n ${PORTS[$app]:-} ]] || { echo "unknown application in BENCH_APPS: $app" >&2; exit 2; }
	jfr=()
	if [[ ${BENCH_JFR:-0} == 1 ]]; then
		jfr=("-XX:StartFlightRecording=filename=$OUT/$app.jfr,settings=profile")
	fi
	java -Xms"$HEAP" -Xmx"$HEAP" -XX:+UseG1GC -XX:+AlwaysPreTouch "${jfr[@]}" -cp "$CLASSPATH" \
		dev.idempotency.sample.bench.HttpBenchApplication \
		--server.port="${PORTS[$app]}" \
		--idempotency.store.type="${TYPES[$app]}" --idempotency.tiered.claim="${CLAIMS[$app]}" \
		--idempotency.redis.key-prefix="httpbench:$app:" \
		--idempotency.jdbc.table-name="httpbench_idem_$app" \
		--idempotency.policies.tx.transactional="${TRANSACTIONAL[$app]}" \
		"${REDIS_ARGS[@]}" "${CLIENT_ARGS[@]}" \
		--spring.datasource.url="jdbc:postgresql://$PG_HOST:$PG_PORT/$PG_DB" \
		--spring.datasource.username="$PG_USER" --spring.datasource.password="${PGPASSWORD:-}" \
		--spring.datasource.hikari.maximum-pool-size="${POOLS[$app]}" \
		> "$OUT/app-$app.log" 2>&1 &
	PIDS+=($!)
	APP_PIDS[$app]=$!
done

BODY='{"account":"acc-42","amount":1299,"currency":"EUR","reference":"order-2026-11-23-0001"}'
post() { # port path [key] -> status code
	local key=()
	[[ -n ${3:-} ]] && key=(-H "Idempotency-Key: $3")
	curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' "${key[@]}" \
		--data "$BODY" "http://127.0.0.1:$1$2" || true
}
for app in "${APPS[@]}"; do
	for _ in $(seq 1 180); do
		[[ $(post "${PORTS[$app]}" /bare) == 201 ]] && break
		sleep 1
	done
	[[ $(post "${PORTS[$app]}" /bare) == 201 ]] || { echo "the $app application did not start: $OUT/app-$app.log" >&2; exit 1; }
done
# the keys replayed by the hot-replay runs
for app in redis tiered; do
	[[ -n ${APP_PIDS[$app]:-} ]] || continue
	[[ $(post "${PORTS[$app]}" /idem/replay "$RUN_ID-replay") == 201 ]] || { echo "cannot prime the replay key" >&2; exit 1; }
done
echo "Applications ready: ${APPS[*]} (redis :18081, tiered :18082, jdbc :18083, tiered with lookup claim :18084,"
echo "  transactional tiered :18085, transactional jdbc :18086)"

# name | application | path | key (unique, none or a fixed key) | round trips expected (the performance budget)
ENDPOINTS=(
	"1 bare|redis|/bare|none|redis=0 pg=0 pgw=0"
	"2 raw Redis|redis|/raw/redis|unique|redis=2 pg=0 pgw=0"
	"2b raw Redis GET|redis|/raw/get|none|redis=1 pg=0 pgw=0"
	"3 redis first|redis|/idem|unique|redis=2 pg=0 pgw=0"
	"4 redis replay|redis|/idem/replay|$RUN_ID-replay|redis=1 pg=0 pgw=0"
	"5 raw tiered|tiered|/raw/tiered|unique|redis=2 pg=2 pgw=1"
	"5d raw tiered, durable claim|tiered|/raw/tiered-durable|unique|redis=2 pg=2 pgw=2"
	"6 tiered first|tiered|/idem|unique|redis<=2 pg<=2 pgw<=1"
	"6r tiered replay|tiered|/idem/replay|$RUN_ID-replay|redis=1 pg=0 pgw=0"
	"7 payment|redis|/payment|none|redis=0 pg=1 pgw=1"
	"7i payment @Idempotent redis|redis|/payment/idem|unique|redis=2 pg=1 pgw=1"
	"7t payment|tiered|/payment|none|redis=0 pg=1 pgw=1"
	"7ti payment @Idempotent tiered|tiered|/payment/idem|unique|redis<=2 pg<=3 pgw<=3"
	"8 jdbc first|jdbc|/idem|unique|redis=0 pg<=2 pgw<=2"
	"5L raw tiered|lookup|/raw/tiered|unique|redis=2 pg=2 pgw=1"
	"6L tiered first, lookup claim|lookup|/idem|unique|redis<=2 pg<=2 pgw<=1"
	"7L payment|lookup|/payment|none|redis=0 pg=1 pgw=1"
	"7Li payment @Idempotent tiered lookup|lookup|/payment/idem|unique|redis<=2 pg<=3 pgw<=2"
	"7x payment|tx|/payment|none|redis=0 pg=1 pgw=1"
	"7xi payment transactional tiered|tx|/payment/idem-tx|unique|redis<=2 pg=1 pgw=3"
	"7xr raw transactional tiered|tx|/raw/tx|unique|redis=2 pg=1 pgw=3"
	"7j payment|jdbctx|/payment|none|redis=0 pg=1 pgw=1"
	"7ji payment transactional jdbc|jdbctx|/payment/idem-tx|unique|redis=0 pg=1 pgw=3"
	"7jr raw transactional jdbc|jdbctx|/raw/tx-jdbc|unique|redis=0 pg=1 pgw=3"
)

SELECTED=()
for spec in "${ENDPOINTS[@]}"; do
	IFS='|' read -r name app _ <<< "$spec"
	[[ -n ${APP_PIDS[$app]:-} ]] && [[ ${name%% *} =~ ${BENCH_CASES:-.} ]] && SELECTED+=("$spec")
done
((${#SELECTED[@]} > 0)) || { echo "no case selected (BENCH_APPS, BENCH_CASES)" >&2; exit 2; }

proc_ticks() { # user + system clock ticks of the given processes (gone ones count 0)
	local total=0 pid fields
	for pid in "$@"; do
		fields=$(cat "/proc/$pid/stat" 2> /dev/null) || continue
		fields=${fields##*) }
		read -r -a f <<< "$fields"
		total=$((total + f[11] + f[12]))
	done
	echo "$total"
}
cpu_snapshot() { # "app redis postgres busy" clock ticks; busy is every non-idle tick of the machine
	local app_pid=$1 pg_pids busy
	pg_pids=$(pgrep -d ' ' -x postgres || true)
	busy=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat)
	# shellcheck disable=SC2086
	echo "$(proc_ticks "$app_pid") $(proc_ticks "${REDIS_PIDS[@]}") $(proc_ticks $pg_pids) $busy"
}

lettuce_calls() { # "OPERATION=count ..." of the Redis commands the application has sent
	python3 "$MODULE/src/bench/httpbench-lettuce.py" "$1" 2> /dev/null || true
}

redis_calls() { # "cmd=calls ..." of every command but INFO, summed over the Redis nodes
	local port
	for port in "${REDIS_PORTS[@]}"; do
		redis-cli -p "$port" INFO commandstats
	done | tr -d '\r' | awk -F'[:=,]' '/^cmdstat_/ && $1 != "cmdstat_info" {
		sub("cmdstat_", "", $1)
		if (!($1 in calls)) order[n++] = $1
		calls[$1] += $3
	}
	END { for (i = 0; i < n; i++) printf "%s=%.0f ", order[i], calls[order[i]] }'
}
pg_counts() { # transactions (every library statement runs in a transaction of its own), rows written
	# asked from another database, so that asking does not move the counters; retried, as a
	# connection may fail on a loaded server
	local out
	for _ in 1 2 3 4 5; do
		out=$("${PSQL[@]}" -d postgres -F ' ' -c "SELECT xact_commit + xact_rollback,
			tup_inserted + tup_updated + tup_deleted FROM pg_stat_database WHERE datname = '$PG_DB'" 2> /dev/null) \
			&& [[ -n $out ]] && { echo "$out"; return; }
		sleep 0.5
	done
}
# PostgreSQL (15 and later) publishes a busy backend's statistics at most once a second, and
# those of a backend that has just gone idle up to 10 s later (PGSTAT_IDLE_INTERVAL): its
# counters are right only that long after the last request. The timed passes do not wait that
# long between their runs; the count pass, at the end, waits this long after each of its runs.
PG_STATS_DELAY=${BENCH_PG_STATS_DELAY:-11}

measure() { # pass round endpoint-spec connections threads duration
	# the PostgreSQL counters are read in the count pass only (PG_STATS_DELAY)
	local pass=$1 round=$2 spec=$3 connections=$4 threads=$5 duration=$6
	local name app path key expect
	IFS='|' read -r name app path key expect <<< "$spec"
	local bench_key=$key
	[[ $key == unique ]] && bench_key=unique
	local before_redis before_pg after_redis after_pg result output cpu_before cpu_after wrk_cpu
	local before_sent after_sent
	before_sent=$(lettuce_calls "${PORTS[$app]}")
	before_redis=$(redis_calls)
	before_pg=
	[[ $pass == count ]] && before_pg=$(pg_counts)
	cpu_before=$(cpu_snapshot "${APP_PIDS[$app]}")
	# wrk's own CPU time (user + system seconds) comes from /usr/bin/time, when present
	local timer=()
	[[ -x /usr/bin/time ]] && timer=(/usr/bin/time -f 'WRKCPU %U %S')
	local think=
	[[ $pass == c16 && -n $RATE ]] && think=$((16000 / RATE))
	output=$(BENCH_KEY=$bench_key BENCH_RUN="$RUN_ID-$pass-$round-${name%% *}" BENCH_THINK_MS=$think \
		"${timer[@]}" wrk -t"$threads" -c"$connections" -d"${duration}s" -s "$LUA" \
		"http://127.0.0.1:${PORTS[$app]}$path" 2>&1 || true)
	cpu_after=$(cpu_snapshot "${APP_PIDS[$app]}")
	result=$(grep '^RESULT' <<< "$output" || true)
	wrk_cpu=$(awk '/^WRKCPU/ { printf "%d", ($2 + $3) * 100 }' <<< "$output")
	after_pg=
	if [[ $pass == count ]]; then
		sleep "$PG_STATS_DELAY"
		after_pg=$(pg_counts)
	fi
	after_redis=$(redis_calls)
	after_sent=$(lettuce_calls "${PORTS[$app]}")
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$pass" "$round" "$name" "$expect" \
		"$result" "$before_redis" "$after_redis" "$before_pg" "$after_pg" "$(cut -d' ' -f1 /proc/loadavg)" \
		"$cpu_before" "$cpu_after" "${wrk_cpu:-}" "$before_sent" "$after_sent" >> "$RESULTS"
	echo "  $pass round $round  $name: $result"
}

: > "$RESULTS"
echo "JIT warm-up: ${WARMUP}s per endpoint at c=16"
for spec in "${SELECTED[@]}"; do
	measure warmup 0 "$spec" 16 2 "$WARMUP"
done
# every other round runs the cases in reverse order, so that a machine whose speed drifts
# during a round favours neither side of a ratio
REVERSED=()
for ((i = ${#SELECTED[@]} - 1; i >= 0; i--)); do
	REVERSED+=("${SELECTED[$i]}")
done
in_round_order() { # round -> the cases in that round's order, one per line
	if (($1 % 2 == 1)); then printf '%s\n' "${SELECTED[@]}"; else printf '%s\n' "${REVERSED[@]}"; fi
}
for round in $(seq 1 "$ROUNDS"); do
	echo "Round $round of $ROUNDS at c=16, ${DURATION}s each"
	while IFS= read -r spec; do
		measure c16 "$round" "$spec" 16 2 "$DURATION"
	done < <(in_round_order "$round")
done
for round in $(seq 1 "$ROUNDS"); do
	echo "Round $round of $ROUNDS at c=1, ${C1_DURATION}s each"
	while IFS= read -r spec; do
		measure c1 "$round" "$spec" 1 1 "$C1_DURATION"
	done < <(in_round_order "$round")
done
echo "Counting the round trips of each case: c=1, ${COUNT_DURATION}s each, then ${PG_STATS_DELAY}s for PostgreSQL's statistics"
sleep "$PG_STATS_DELAY"
for spec in "${SELECTED[@]}"; do
	measure count 1 "$spec" 1 1 "$COUNT_DURATION"
done

{
	echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD || echo '+changes')"
	echo "# $(nproc) cores, $(java -version 2>&1 | head -1), $("$REDIS_SERVER" --version | cut -d' ' -f1-3), $("${PSQL[@]}" -d "$PG_DB" -c 'SHOW server_version')"
	echo "# rounds=$ROUNDS c16=${DURATION}s c1=${C1_DURATION}s warmup=${WARMUP}s heap=$HEAP${RATE:+ c16-rate=${RATE}/s}"
	[[ $REDIS_CLUSTER != 1 ]] || echo "# Redis: $REDIS_DESCRIPTION"
	[[ $REDIS_CLIENT == lettuce ]] || echo "# Redis client: $REDIS_CLIENT"
} > "$OUT/environment.txt"
BENCH_COMMAND=$COMMAND python3 "$MODULE/src/bench/httpbench-report.py" "$RESULTS" "$OUT/environment.txt" \
	--csv "$OUT/http-ratios.csv" | tee "$OUT/report.md"
if [[ ${BENCH_RECORD:-0} == 1 ]]; then
	python3 "$ROOT/etc/docs/results.py" append "$OUT/http-ratios.csv"
fi
