#!/usr/bin/env bash
#
# A/B run of the HTTP benchmarks (docs/benchmarks.md, "Before and after"): the benchmark
# application of two commits side by side, on one machine at one time, each endpoint loaded
# on one version and then on the other, the order swapped every round.
#
# Usage: run-http-ab.sh BEFORE [AFTER]
#   BEFORE, AFTER: commits (AFTER defaults to the work tree as it is, uncommitted changes
#   included). Each commit is checked out into a worktree under the output folder and built
#   there (test-compile only; nothing is installed).
# Environment (defaults in brackets):
#   AB_ROUNDS [6]  AB_DURATION [6] (s, c=16)  AB_C1_DURATION [4] (s, c=1)  AB_WARMUP [8] (s)
#   AB_HEAP [512m]  AB_POOL [16] (each application's PostgreSQL pool: 2 x modes x pool connections
#   in all, within the server's max_connections)  AB_MODES ["redis tiered"] (also jdbc, and tx and jdbctx: the tiered and jdbc
#   stores with the transactional policy of /payment/idem-tx; and webflux: the WebFlux bench
#   application of idempotency-sample-webflux on the Redis store, cases W1, W3 and W4, the
#   reactive twins of 1, 3 and 4)  AB_REDIS_PORT [16380] (a private server)
#   AB_REDIS_SERVER [redis-server] (the executable of that server: valkey-server, say)
#   AB_CASES [all] (an extended regular expression on the case names, "^(1|3|4) " say: more
#   rounds of fewer cases in the same time)
#   BENCH_PG_HOST [127.0.0.1]  BENCH_PG_PORT [5432]  BENCH_PG_USER [postgres]  PGPASSWORD []
#   AB_PG_DATABASE [httpbench_ab] (created if missing; its tables are dropped at the end)
#   AB_OUT [idempotency-sample-payments/target/httpbench-ab]
#   AB_ARGS_BEFORE, AB_ARGS_AFTER [none]: more arguments of each version's application, split
#   on spaces ("--idempotency.tiered.claim-commit=asynchronous" say: one commit against itself
#   with a setting changed)
# Prints two tables: per case, the median over the rounds of each version's req/s, p50, and
# the median of the per-round ratio after/before; and the CPU time per request of the
# application's JVM and of the PostgreSQL server processes, read from /proc around each run,
# with the median of the per-round ratio after/before (steadier than req/s on a shared host:
# it does not depend on how the scheduler shares the cores between wrk and the servers).
set -euo pipefail

MODULE=$(cd "$(dirname "$0")/../.." && pwd)
ROOT=$(cd "$MODULE/.." && pwd)
LUA=$MODULE/src/bench/httpbench.lua
OUT=${AB_OUT:-$MODULE/target/httpbench-ab}
ROUNDS=${AB_ROUNDS:-6}
DURATION=${AB_DURATION:-6}
C1_DURATION=${AB_C1_DURATION:-4}
WARMUP=${AB_WARMUP:-8}
HEAP=${AB_HEAP:-512m}
POOL=${AB_POOL:-16}
REDIS_PORT=${AB_REDIS_PORT:-16380}
PG_HOST=${BENCH_PG_HOST:-127.0.0.1}
PG_PORT=${BENCH_PG_PORT:-5432}
PG_USER=${BENCH_PG_USER:-postgres}
PG_DB=${AB_PG_DATABASE:-httpbench_ab}
read -r -a MODES <<< "${AB_MODES:-redis tiered}"
read -r -a ARGS_BEFORE <<< "${AB_ARGS_BEFORE:-}"
read -r -a ARGS_AFTER <<< "${AB_ARGS_AFTER:-}"
BEFORE=${1:?usage: run-http-ab.sh BEFORE [AFTER]}
AFTER=${2:-}
REDIS_SERVER=${AB_REDIS_SERVER:-redis-server}
for tool in wrk java curl psql redis-cli "$REDIS_SERVER" python3 git; do
	command -v "$tool" > /dev/null || { echo "$tool is required" >&2; exit 1; }
done

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
RESULTS=$OUT/results.tsv
RUN_ID=ab$(date +%s)
PIDS=()
PSQL=(psql -X -q -A -t -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER")

cleanup() {
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2> /dev/null || true
	done
	wait 2> /dev/null || true
	local tables=()
	for version in a b; do
		for mode in "${MODES[@]}"; do
			tables+=("ab_idem_${version}_$mode" "ab_idem_${version}_${mode}_schema_history")
		done
	done
	"${PSQL[@]}" -d "$PG_DB" -c "DROP TABLE IF EXISTS httpbench_payment, httpbench_raw_record, $(IFS=,; echo "${tables[*]}")" \
		> /dev/null 2>&1 || true
}
trap cleanup EXIT

build() { # version commit-or-empty -> prints the classpath of that version's benchmark application
	local version=$1 commit=$2 tree
	if [[ -z $commit ]]; then
		tree=$ROOT
	else
		tree=$OUT/tree-$version
		if [[ ! -d $tree ]]; then
			git -C "$ROOT" worktree add -q --detach "$tree" "$commit" >&2
		else
			git -C "$tree" checkout -q --detach "$commit" >&2
		fi
	fi
	# a failed build must stop the run (errexit does not reach into the command
	# substitution that calls this function); each module writes its class path into its
	# own target/ (a relative outputFile is the module's)
	(cd "$tree" && ./mvnw -B -q -pl "$(IFS=,; echo "${APPS[*]}")" -am -DskipTests test-compile \
		dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/ab-classpath.txt) >&2 \
		|| { echo "the build of ${commit:-the work tree} failed" >&2; return 1; }
	echo "$tree"
}
classpath() { # tree module -> the class path of that module's benchmark application
	local module=$1/$2
	echo "$module/target/test-classes:$module/target/classes:$(cat "$module/target/ab-classpath.txt")"
}
APPS=(idempotency-sample-payments)
[[ " ${MODES[*]} " == *" webflux "* ]] && APPS+=(idempotency-sample-webflux)

echo "Building before ($BEFORE) and after (${AFTER:-work tree})..."
declare -A TREES
TREES[a]=$(build a "$BEFORE") || exit 1
TREES[b]=$(build b "$AFTER") || exit 1
declare -A LABELS=([a]="before $(git -C "$ROOT" rev-parse --short "$BEFORE")" \
	[b]="after ${AFTER:+$(git -C "$ROOT" rev-parse --short "$AFTER")}")
[[ -n $AFTER ]] || LABELS[b]="after $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD || echo '+changes')"
[[ -z ${AB_ARGS_BEFORE:-} ]] || LABELS[a]+=" ${AB_ARGS_BEFORE}"
[[ -z ${AB_ARGS_AFTER:-} ]] || LABELS[b]+=" ${AB_ARGS_AFTER}"

if redis-cli -p "$REDIS_PORT" ping > /dev/null 2>&1; then
	echo "Port $REDIS_PORT is taken: set AB_REDIS_PORT to a free port" >&2
	exit 1
fi
"$REDIS_SERVER" --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$OUT" \
	--logfile "$OUT/redis.log" &
PIDS+=($!)
if [[ -z $("${PSQL[@]}" -d postgres -c "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'") ]]; then
	"${PSQL[@]}" -d postgres -c "CREATE DATABASE $PG_DB"
fi
# Each application creates the benchmark's tables as it starts (HttpBenchApplication), with
# CREATE TABLE IF NOT EXISTS, which two sessions racing on a missing table can fail (a duplicate
# key in pg_type): create them before the applications start, as the versions compared define them.
"${PSQL[@]}" -d "$PG_DB" \
	-c "CREATE TABLE IF NOT EXISTS httpbench_payment (id BIGSERIAL PRIMARY KEY, account TEXT NOT NULL,
		amount BIGINT NOT NULL, currency TEXT NOT NULL, reference TEXT NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now())" \
	-c "CREATE TABLE IF NOT EXISTS httpbench_raw_record (id TEXT PRIMARY KEY, value BYTEA NOT NULL,
		expires_at TIMESTAMPTZ NOT NULL)"

# one JVM per version and store mode
declare -A PORTS APP_PIDS
port=18090
for version in a b; do
	if [[ $version == a ]]; then extra=("${ARGS_BEFORE[@]}"); else extra=("${ARGS_AFTER[@]}"); fi
	for mode in "${MODES[@]}"; do
		port=$((port + 1))
		PORTS[$version-$mode]=$port
		# tx and jdbctx: the tiered and the jdbc store with the policy "tx" of /payment/idem-tx
		# transactional (the applications of run-http-benchmarks.sh of those names)
		module=idempotency-sample-payments main=dev.idempotency.sample.bench.HttpBenchApplication
		case $mode in
			tx) type=tiered transactional=true ;;
			jdbctx) type=jdbc transactional=true ;;
			webflux) type=redis transactional=false module=idempotency-sample-webflux
				main=dev.idempotency.bench.webflux.WebFluxBenchApplication ;;
			*) type=$mode transactional=false ;;
		esac
		java -Xms"$HEAP" -Xmx"$HEAP" -XX:+UseG1GC -XX:+AlwaysPreTouch -cp "$(classpath "${TREES[$version]}" "$module")" \
			"$main" \
			--server.port="$port" --idempotency.store.type="$type" \
			--idempotency.policies.tx.transactional="$transactional" \
			--idempotency.redis.key-prefix="ab:$version:$mode:" \
			--idempotency.jdbc.table-name="ab_idem_${version}_$mode" \
			--spring.data.redis.host=127.0.0.1 --spring.data.redis.port="$REDIS_PORT" \
			--spring.datasource.url="jdbc:postgresql://$PG_HOST:$PG_PORT/$PG_DB" \
			--spring.datasource.username="$PG_USER" --spring.datasource.password="${PGPASSWORD:-}" \
			--spring.datasource.hikari.maximum-pool-size="$POOL" "${extra[@]}" \
			> "$OUT/app-$version-$mode.log" 2>&1 &
		PIDS+=($!)
		APP_PIDS[$version-$mode]=$!
	done
done

BODY='{"account":"acc-42","amount":1299,"currency":"EUR","reference":"order-2026-11-23-0001"}'
post() { # port path [key] -> status code
	local key=()
	[[ -n ${3:-} ]] && key=(-H "Idempotency-Key: $3")
	curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' "${key[@]}" \
		--data "$BODY" "http://127.0.0.1:$1$2" || true
}
for app in "${!PORTS[@]}"; do
	for _ in $(seq 1 180); do
		[[ $(post "${PORTS[$app]}" /bare) == 201 ]] && break
		sleep 1
	done
	[[ $(post "${PORTS[$app]}" /bare) == 201 ]] || { echo "$app did not start: $OUT/app-$app.log" >&2; exit 1; }
	# the WebFlux application has one idempotent endpoint, /idem
	replay_path=/idem/replay
	[[ $app == *-webflux ]] && replay_path=/idem
	[[ $(post "${PORTS[$app]}" $replay_path "$RUN_ID-replay") == 201 ]] || { echo "cannot prime $app's replay key" >&2; exit 1; }
done

# name | mode | path | key (unique, none or the fixed replay key)
CASES=()
for mode in "${MODES[@]}"; do
	case $mode in
		redis) CASES+=("1 bare|redis|/bare|none" "3 redis first|redis|/idem|unique" "4 redis replay|redis|/idem/replay|$RUN_ID-replay"
			"7 payment|redis|/payment|none" "7i payment @Idempotent redis|redis|/payment/idem|unique") ;;
		tiered) CASES+=("6 tiered first|tiered|/idem|unique" "6r tiered replay|tiered|/idem/replay|$RUN_ID-replay"
			"7ti payment @Idempotent tiered|tiered|/payment/idem|unique") ;;
		jdbc) CASES+=("8 jdbc first|jdbc|/idem|unique") ;;
		tx) CASES+=("7xi payment transactional tiered|tx|/payment/idem-tx|unique"
			"7xr raw transactional tiered|tx|/raw/tx|unique") ;;
		jdbctx) CASES+=("7ji payment transactional jdbc|jdbctx|/payment/idem-tx|unique"
			"7jr raw transactional jdbc|jdbctx|/raw/tx-jdbc|unique") ;;
		webflux) CASES+=("W1 webflux bare|webflux|/bare|none" "W3 webflux redis first|webflux|/idem|unique"
			"W4 webflux redis replay|webflux|/idem|$RUN_ID-replay") ;;
		*) echo "unknown mode in AB_MODES: $mode" >&2; exit 2 ;;
	esac
done
if [[ -n ${AB_CASES:-} ]]; then
	selected=()
	for spec in "${CASES[@]}"; do
		[[ ${spec%%|*} =~ $AB_CASES ]] && selected+=("$spec")
	done
	((${#selected[@]} > 0)) || { echo "AB_CASES matches no case of AB_MODES: $AB_CASES" >&2; exit 2; }
	CASES=("${selected[@]}")
fi

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
TICK_US=$((1000000 / $(getconf CLK_TCK)))

measure() { # pass round version case connections threads duration
	local pass=$1 round=$2 version=$3 spec=$4 connections=$5 threads=$6 duration=$7
	local name mode path key output result
	IFS='|' read -r name mode path key <<< "$spec"
	local app_pid=${APP_PIDS[$version-$mode]} app_before pg_before pg_pids
	pg_pids=$(pgrep -d ' ' -x postgres || true)
	app_before=$(proc_ticks "$app_pid")
	# shellcheck disable=SC2086
	pg_before=$(proc_ticks $pg_pids)
	output=$(BENCH_KEY=$key BENCH_RUN="$RUN_ID-$pass-$round-$version-${name%% *}" \
		wrk -t"$threads" -c"$connections" -d"${duration}s" -s "$LUA" \
		"http://127.0.0.1:${PORTS[$version-$mode]}$path" 2>&1 || true)
	result=$(grep '^RESULT' <<< "$output" || true)
	local app_us pg_us
	app_us=$((($(proc_ticks "$app_pid") - app_before) * TICK_US))
	# shellcheck disable=SC2086
	pg_us=$((($(proc_ticks $pg_pids) - pg_before) * TICK_US))
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$pass" "$round" "$version" "$name" "$result" \
		"$(cut -d' ' -f1 /proc/loadavg)" "$app_us" "$pg_us" >> "$RESULTS"
	echo "  $pass round $round ${LABELS[$version]}  $name: $result"
}

: > "$RESULTS"
echo "JIT warm-up: ${WARMUP}s per endpoint and version at c=16"
for spec in "${CASES[@]}"; do
	for version in a b; do
		measure warmup 0 "$version" "$spec" 16 2 "$WARMUP"
	done
done
for pass in c16 c1; do
	for round in $(seq 1 "$ROUNDS"); do
		# the version loaded first alternates, so that drift favours neither
		order=(a b)
		((round % 2 == 0)) && order=(b a)
		for spec in "${CASES[@]}"; do
			for version in "${order[@]}"; do
				if [[ $pass == c16 ]]; then
					measure c16 "$round" "$version" "$spec" 16 2 "$DURATION"
				else
					measure c1 "$round" "$version" "$spec" 1 1 "$C1_DURATION"
				fi
			done
		done
	done
done

{
	echo "# $(date -u '+%Y-%m-%d %H:%M UTC'): a = ${LABELS[a]}, b = ${LABELS[b]}"
	echo "# $(nproc) cores, $(java -version 2>&1 | head -1), $("$REDIS_SERVER" --version | cut -d' ' -f1-3), $("${PSQL[@]}" -d "$PG_DB" -c 'SHOW server_version')"
	echo "# rounds=$ROUNDS c16=${DURATION}s c1=${C1_DURATION}s warmup=${WARMUP}s heap=$HEAP pool=$POOL"
} > "$OUT/environment.txt"
python3 - "$RESULTS" "$OUT/environment.txt" << 'PY' | tee "$OUT/report.md"
import collections
import statistics
import sys

# (pass, round, case) -> version -> (rps, p50 ms, errors, p99 ms, JVM us/request, PostgreSQL us/request)
rows = collections.defaultdict(dict)
order = []
for line in open(sys.argv[1]):
    pass_, round_, version, case, result, _load, app_us, pg_us = line.rstrip("\n").split("\t")
    if pass_ == "warmup" or not result:
        continue
    fields = dict(f.split("=") for f in result.split()[1:])
    requests = max(1, int(fields["requests"]))
    rps = requests / (int(fields["duration_us"]) / 1e6)
    errors = int(fields["non2xx"]) + int(fields["socket_errors"])
    rows[(pass_, round_, case)][version] = (rps, int(fields["p50_us"]) / 1000, errors, int(fields["p99_us"]) / 1000,
                                            int(app_us) / requests, int(pg_us) / requests)
    if (pass_, case) not in order:
        order.append((pass_, case))
print("\n".join(l.rstrip() for l in open(sys.argv[2])))
print()
print("| pass | case | before req/s | after req/s | after/before (median, range) | before p50 ms | after p50 ms | errors |")
print("|---|---|---|---|---|---|---|---|")
for pass_, case in order:
    pairs = [v for (p, _, c), v in rows.items() if p == pass_ and c == case and "a" in v and "b" in v]
    if not pairs:
        continue
    ratios = [v["b"][0] / v["a"][0] for v in pairs]
    med = lambda xs: statistics.median(xs)
    print(f"| {pass_} | {case} | {med([v['a'][0] for v in pairs]):,.0f} | {med([v['b'][0] for v in pairs]):,.0f} "
          f"| {med(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}) | {med([v['a'][1] for v in pairs]):.2f} "
          f"| {med([v['b'][1] for v in pairs]):.2f} | {sum(v['a'][2] + v['b'][2] for v in pairs)} |")
print()
print("| pass | case | JVM us/req before | after | after/before (median, range) | PostgreSQL us/req before | after "
      "| after/before | p99 ms before | after |")
print("|---|---|---|---|---|---|---|---|---|---|")
for pass_, case in order:
    pairs = [v for (p, _, c), v in rows.items() if p == pass_ and c == case and "a" in v and "b" in v]
    if not pairs:
        continue
    med = lambda xs: statistics.median(xs)
    jvm = [v["b"][4] / v["a"][4] for v in pairs if v["a"][4] > 0]
    pg = [v["b"][5] / v["a"][5] for v in pairs if v["a"][5] > 0]
    ratio = lambda xs: f"{med(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})" if xs else "-"
    print(f"| {pass_} | {case} | {med([v['a'][4] for v in pairs]):.0f} | {med([v['b'][4] for v in pairs]):.0f} "
          f"| {ratio(jvm)} | {med([v['a'][5] for v in pairs]):.0f} | {med([v['b'][5] for v in pairs]):.0f} "
          f"| {ratio(pg)} | {med([v['a'][3] for v in pairs]):.2f} | {med([v['b'][3] for v in pairs]):.2f} |")
PY
