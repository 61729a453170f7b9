#!/usr/bin/env bash
#
# A/B run of the HTTP benchmarks (docs/benchmarks/http.md, "Before and after"): the benchmark
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
#   AB_DB [postgresql] (the database of both versions' JDBC and tiered stores and of the payment:
#   postgresql or mariadb)  AB_DB_BEFORE, AB_DB_AFTER [AB_DB] (one version's database: one commit
#   on both databases side by side, "AB_DB_AFTER=mariadb run-http-ab.sh HEAD HEAD" say)
#   AB_TWINS [1 when a version runs on MariaDB, else 0] (1: each application is started as
#   dev.idempotency.bench.store.StoreTwinApplication of src/bench/java, compiled for each version,
#   which adds the hand-written twins of the JDBC store's round trips, and the cases 8r jdbc
#   replay, 8w and 8wr (their jdbc twins) and 6w (the tiered twin) run too)
#   BENCH_MARIADB_HOST [127.0.0.1]  BENCH_MARIADB_PORT [3306]  BENCH_MARIADB_USER [root]
#   MARIADB_PASSWORD []  AB_MARIADB_DATABASE [httpbench_ab] (created at the start, which fails if it
#   exists, and dropped at the end); the MariaDB driver and flyway-mysql come from the sample's
#   class path, or else from the starter's, where they are optional dependencies
#   AB_OUT [idempotency-sample-payments/target/httpbench-ab]
#   AB_PAGE [request-path.md] (the page of docs/benchmarks/ that the result rows name)
#   AB_JAVA_HOME [the JDK of JAVA_HOME and the PATH] (the JDK that builds and runs both versions:
#   /usr/lib/jvm/temurin-25-jdk-amd64 say, for "--spring.threads.virtual.enabled=true" in
#   AB_ARGS_AFTER against platform threads; docs/benchmarks/virtual-threads.md)
#   AB_ARGS_BEFORE, AB_ARGS_AFTER [none]: more arguments of each version's application, split
#   on spaces ("--idempotency.tiered.claim-commit=asynchronous" say: one commit against itself
#   with a setting changed)
# Prints four tables: per case, the median over the rounds of each version's req/s, p50, and
# the median of the per-round ratio after/before; the CPU time per request of the
# application's JVM and of the database server's processes (each version's own: PostgreSQL's
# or MariaDB's), read from /proc around each run,
# with the median of the per-round ratio after/before (steadier than req/s on a shared host:
# it does not depend on how the scheduler shares the cores between wrk and the servers); each
# version's latency percentiles (medians over the rounds); and, with AB_TWINS, each version's
# ratio of the library's case to its twin's, per round in the same JVM.
# The after/before ratios also go to AB_OUT/http-ab.csv, in the format of
# docs/benchmarks/data/http-ab.csv (see its README.md); with BENCH_RECORD=1 and BENCH_MACHINE
# (the machine's id in docs/benchmarks/data/machines.csv) they are appended to that file.
set -euo pipefail

if [[ -n ${AB_JAVA_HOME:-} ]]; then
	[[ -x $AB_JAVA_HOME/bin/java ]] || { echo "AB_JAVA_HOME has no bin/java: $AB_JAVA_HOME" >&2; exit 2; }
	export JAVA_HOME=$AB_JAVA_HOME PATH=$AB_JAVA_HOME/bin:$PATH
fi
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
MARIADB_HOST=${BENCH_MARIADB_HOST:-127.0.0.1}
MARIADB_PORT=${BENCH_MARIADB_PORT:-3306}
MARIADB_USER=${BENCH_MARIADB_USER:-root}
MARIADB_DB=${AB_MARIADB_DATABASE:-httpbench_ab}
declare -A DBS=([a]=${AB_DB_BEFORE:-${AB_DB:-postgresql}} [b]=${AB_DB_AFTER:-${AB_DB:-postgresql}})
for version in a b; do
	[[ ${DBS[$version]} == postgresql || ${DBS[$version]} == mariadb ]] \
		|| { echo "unknown database: ${DBS[$version]} (postgresql or mariadb)" >&2; exit 2; }
done
uses_db() { [[ ${DBS[a]} == "$1" || ${DBS[b]} == "$1" ]]; }
TWINS=${AB_TWINS:-$(uses_db mariadb && echo 1 || echo 0)}
read -r -a MODES <<< "${AB_MODES:-redis tiered}"
read -r -a ARGS_BEFORE <<< "${AB_ARGS_BEFORE:-}"
read -r -a ARGS_AFTER <<< "${AB_ARGS_AFTER:-}"
BEFORE=${1:?usage: run-http-ab.sh BEFORE [AFTER]}
AFTER=${2:-}
REDIS_SERVER=${AB_REDIS_SERVER:-redis-server}
TOOLS=(wrk java curl redis-cli "$REDIS_SERVER" python3 git)
uses_db postgresql && TOOLS+=(psql)
uses_db mariadb && TOOLS+=(mariadb)
[[ $TWINS == 1 ]] && TOOLS+=(javac)
for tool in "${TOOLS[@]}"; do
	command -v "$tool" > /dev/null || { echo "$tool is required" >&2; exit 1; }
done
if [[ ${BENCH_RECORD:-0} == 1 && -z ${BENCH_MACHINE:-} ]]; then
	echo "BENCH_RECORD=1 needs BENCH_MACHINE, an id of docs/benchmarks/data/machines.csv" >&2
	exit 2
fi
# the command as given, for the result files: the settings, then the arguments
COMMAND=$(for name in $(compgen -e | grep -E '^(AB_|BENCH_PG_|BENCH_MARIADB_)' | grep -v '^AB_OUT$' | sort); do
	printf '%s=%q ' "$name" "${!name}"
done)"idempotency-sample-payments/src/bench/run-http-ab.sh $*"

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
RESULTS=$OUT/results.tsv
RUN_ID=ab$(date +%s)
PIDS=()
PSQL=(psql -X -q -A -t -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER")
MARIADB=(mariadb -N -B -h "$MARIADB_HOST" -P "$MARIADB_PORT" -u "$MARIADB_USER" ${MARIADB_PASSWORD:+"-p$MARIADB_PASSWORD"})
MARIADB_CREATED=0
PG_READY=0

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
	# only the tables of a run that got as far as making them: a run that stopped before
	# (a port taken, a build failed) leaves another run's tables on the same database alone
	if [[ $PG_READY == 1 ]]; then
		"${PSQL[@]}" -d "$PG_DB" -c "DROP TABLE IF EXISTS httpbench_payment, httpbench_raw_record, $(IFS=,; echo "${tables[*]}")" \
			> /dev/null 2>&1 || true
	fi
	if [[ $MARIADB_CREATED == 1 ]]; then
		"${MARIADB[@]}" -e "DROP DATABASE IF EXISTS \`$MARIADB_DB\`" > /dev/null 2>&1 || true
	fi
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
classpath() { # version module -> the class path of that version's benchmark application
	local tree=${TREES[$1]} version=$1
	local module=$tree/$2 path jar
	path="$module/target/test-classes:$module/target/classes:$(cat "$module/target/ab-classpath.txt")"
	if [[ ${DBS[$version]} == mariadb ]]; then
		# the driver and Flyway's MySQL module, from the starter's class path if the sample lacks them
		for jar in mariadb-java-client flyway-mysql; do
			[[ :$path: == *"/$jar-"*.jar:* ]] && continue
			path+=:$(tr ':' '\n' < "$tree/idempotency-spring-boot-starter/target/ab-classpath.txt" \
				| grep -m1 "/$jar-[^/]*\.jar$") || { echo "no $jar on the class path of $tree" >&2; return 1; }
		done
	fi
	[[ $TWINS == 1 && $2 == idempotency-sample-payments ]] && path="$OUT/twin-classes-$version:$path"
	echo "$path"
}
twins() { # version -> compiles the twin application (src/bench/java) against that version
	local version=$1 sources
	rm -rf "$OUT/twin-classes-$version"
	mkdir -p "$OUT/twin-classes-$version"
	mapfile -t sources < <(find "$MODULE/src/bench/java" -name '*.java')
	javac --release 17 -nowarn -proc:none -d "$OUT/twin-classes-$version" \
		-cp "$(TWINS=0 classpath "$version" idempotency-sample-payments)" "${sources[@]}" >&2 || true
	[[ -n $(find "$OUT/twin-classes-$version" -name StoreTwinApplication.class) ]] \
		|| { echo "the twin application did not compile against version $version" >&2; return 1; }
}
APPS=(idempotency-sample-payments)
[[ " ${MODES[*]} " == *" webflux "* ]] && APPS+=(idempotency-sample-webflux)

echo "Building before ($BEFORE) and after (${AFTER:-work tree})..."
declare -A TREES
TREES[a]=$(build a "$BEFORE") || exit 1
TREES[b]=$(build b "$AFTER") || exit 1
if [[ $TWINS == 1 ]]; then
	twins a || exit 1
	twins b || exit 1
fi
declare -A LABELS=([a]="before $(git -C "$ROOT" rev-parse --short "$BEFORE")" \
	[b]="after ${AFTER:+$(git -C "$ROOT" rev-parse --short "$AFTER")}")
[[ -n $AFTER ]] || LABELS[b]="after $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD || echo '+changes')"
if [[ ${DBS[a]} != "${DBS[b]}" || ${DBS[a]} != postgresql ]]; then
	LABELS[a]+=" on ${DBS[a]}"
	LABELS[b]+=" on ${DBS[b]}"
fi
[[ -z ${AB_ARGS_BEFORE:-} ]] || LABELS[a]+=" ${AB_ARGS_BEFORE}"
[[ -z ${AB_ARGS_AFTER:-} ]] || LABELS[b]+=" ${AB_ARGS_AFTER}"

if redis-cli -p "$REDIS_PORT" ping > /dev/null 2>&1; then
	echo "Port $REDIS_PORT is taken: set AB_REDIS_PORT to a free port" >&2
	exit 1
fi
"$REDIS_SERVER" --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$OUT" \
	--logfile "$OUT/redis.log" &
PIDS+=($!)
if uses_db postgresql; then
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
	PG_READY=1
fi
if uses_db mariadb; then
	# a database of the run's own, dropped at the end: one that exists already is not this run's
	if [[ -n $("${MARIADB[@]}" -e "SHOW DATABASES LIKE '$MARIADB_DB'") ]]; then
		echo "MariaDB database $MARIADB_DB exists: set AB_MARIADB_DATABASE to a new name" >&2
		exit 1
	fi
	"${MARIADB[@]}" -e "CREATE DATABASE \`$MARIADB_DB\`"
	MARIADB_CREATED=1
	# the tables of StoreTwinApplication, in MariaDB's SQL, before the applications start
	"${MARIADB[@]}" -D "$MARIADB_DB" \
		-e "CREATE TABLE IF NOT EXISTS httpbench_payment (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
			account VARCHAR(255) NOT NULL, amount BIGINT NOT NULL, currency VARCHAR(16) NOT NULL,
			reference VARCHAR(255) NOT NULL, created_at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)) ENGINE=InnoDB;
		CREATE TABLE IF NOT EXISTS httpbench_raw_record (id VARCHAR(255) NOT NULL PRIMARY KEY, value BLOB NOT NULL,
			expires_at DATETIME(6) NOT NULL) ENGINE=InnoDB"
fi
datasource() { # version -> the Spring Boot arguments of that version's DataSource
	if [[ ${DBS[$1]} == mariadb ]]; then
		echo "--spring.datasource.url=jdbc:mariadb://$MARIADB_HOST:$MARIADB_PORT/$MARIADB_DB"
		echo "--spring.datasource.username=$MARIADB_USER"
		echo "--spring.datasource.password=${MARIADB_PASSWORD:-}"
	else
		echo "--spring.datasource.url=jdbc:postgresql://$PG_HOST:$PG_PORT/$PG_DB"
		echo "--spring.datasource.username=$PG_USER"
		echo "--spring.datasource.password=${PGPASSWORD:-}"
	fi
}

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
		[[ $TWINS == 1 ]] && main=dev.idempotency.bench.store.StoreTwinApplication
		case $mode in
			tx) type=tiered transactional=true ;;
			jdbctx) type=jdbc transactional=true ;;
			webflux) type=redis transactional=false module=idempotency-sample-webflux
				main=dev.idempotency.bench.webflux.WebFluxBenchApplication ;;
			*) type=$mode transactional=false ;;
		esac
		mapfile -t datasource_args < <(datasource "$version")
		app_classpath=$(classpath "$version" "$module") || exit 1
		java -Xms"$HEAP" -Xmx"$HEAP" -XX:+UseG1GC -XX:+AlwaysPreTouch -cp "$app_classpath" \
			"$main" \
			--server.port="$port" --idempotency.store.type="$type" \
			--idempotency.policies.tx.transactional="$transactional" \
			--idempotency.redis.key-prefix="ab:$version:$mode:" \
			--idempotency.jdbc.table-name="ab_idem_${version}_$mode" \
			--spring.data.redis.host=127.0.0.1 --spring.data.redis.port="$REDIS_PORT" \
			"${datasource_args[@]}" \
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
	if [[ $TWINS == 1 && $app == *-jdbc ]]; then
		[[ $(post "${PORTS[$app]}" /raw/store "$RUN_ID-twin-replay") == 201 ]] \
			|| { echo "cannot prime $app's twin replay key" >&2; exit 1; }
	fi
done

# name | mode | path | key (unique, none or the fixed replay key)
CASES=()
for mode in "${MODES[@]}"; do
	case $mode in
		redis) CASES+=("1 bare|redis|/bare|none" "3 redis first|redis|/idem|unique" "4 redis replay|redis|/idem/replay|$RUN_ID-replay"
			"7 payment|redis|/payment|none" "7i payment @Idempotent redis|redis|/payment/idem|unique") ;;
		tiered) CASES+=("6 tiered first|tiered|/idem|unique" "6r tiered replay|tiered|/idem/replay|$RUN_ID-replay"
			"7ti payment @Idempotent tiered|tiered|/payment/idem|unique")
			[[ $TWINS == 1 ]] && CASES+=("6w twin of 6, tiered round trips|tiered|/raw/store/tiered|unique") ;;
		jdbc) CASES+=("8 jdbc first|jdbc|/idem|unique")
			[[ $TWINS == 1 ]] && CASES+=("8w twin of 8, jdbc round trips|jdbc|/raw/store|unique"
				"8r jdbc replay|jdbc|/idem/replay|$RUN_ID-replay"
				"8wr twin of 8r, jdbc replay round trips|jdbc|/raw/store|$RUN_ID-twin-replay") ;;
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
	# the CPU time of the version's database server: PostgreSQL's processes or MariaDB's one
	if [[ ${DBS[$version]} == mariadb ]]; then
		pg_pids=$(pgrep -d ' ' -x 'mariadbd|mysqld' || true)
	else
		pg_pids=$(pgrep -d ' ' -x postgres || true)
	fi
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
	servers=()
	uses_db postgresql && servers+=("PostgreSQL $("${PSQL[@]}" -d "$PG_DB" -c 'SHOW server_version')")
	uses_db mariadb && servers+=("MariaDB $("${MARIADB[@]}" -e 'SELECT VERSION()')")
	echo "# $(nproc) cores, $(java -version 2>&1 | head -1), $("$REDIS_SERVER" --version | cut -d' ' -f1-3), $(IFS=,; echo "${servers[*]}" | sed 's/,/, /g')"
	echo "# databases: a ${DBS[a]}, b ${DBS[b]}; twins $TWINS"
	echo "# rounds=$ROUNDS c16=${DURATION}s c1=${C1_DURATION}s warmup=${WARMUP}s heap=$HEAP pool=$POOL"
} > "$OUT/environment.txt"
# what differs between the two versions besides their commits, for the result file
VARIANT=
[[ ${DBS[a]} == postgresql && ${DBS[b]} == postgresql ]] || VARIANT="databases: before ${DBS[a]}, after ${DBS[b]}"
[[ -z ${AB_ARGS_BEFORE:-}${AB_ARGS_AFTER:-} ]] \
	|| VARIANT+="${VARIANT:+; }arguments: before ${AB_ARGS_BEFORE:-none}, after ${AB_ARGS_AFTER:-none}"
AB_BEFORE_COMMIT=$(git -C "$ROOT" rev-parse --short "$BEFORE") \
	AB_AFTER_COMMIT=${LABELS[b]#after } AB_COMMAND=$COMMAND AB_VARIANT=$VARIANT AB_PAGE=${AB_PAGE:-request-path.md} \
	python3 - "$RESULTS" "$OUT/environment.txt" "$OUT/http-ab.csv" << 'PY' | tee "$OUT/report.md"
import collections
import csv
import datetime
import os
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
print("| pass | case | JVM us/req before | after | after/before (median, range) | database us/req before | after "
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

# latency percentiles, and each version's ratio of a library case to its hand-written twin
latency = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    pass_, round_, version, case, result, *_ = line.rstrip("\n").split("\t")
    if pass_ == "warmup" or not result:
        continue
    fields = dict(f.split("=") for f in result.split()[1:])
    latency[(pass_, case)].setdefault(version, []).append(
        tuple(int(fields[k]) / 1000 for k in ("p50_us", "p90_us", "p99_us", "max_us")))
print()
print("| pass | case | before p50 / p90 / p99 / max ms | after p50 / p90 / p99 / max ms |")
print("|---|---|---|---|")
for pass_, case in order:
    cells = []
    for version in ("a", "b"):
        runs = latency[(pass_, case)].get(version, [])
        cells.append(" / ".join(f"{statistics.median([r[i] for r in runs]):.2f}" for i in range(4)) if runs else "-")
    print(f"| {pass_} | {case} | {cells[0]} | {cells[1]} |")
number = {case.split()[0]: case for _, case in order}
twins = [(lib, twin) for lib, twin in (("8", "8w"), ("8r", "8wr"), ("6", "6w")) if lib in number and twin in number]
if twins:
    print()
    print("| pass | library / twin | before: median (range) | after: median (range) |")
    print("|---|---|---|---|")
    for pass_ in ("c16", "c1"):
        for lib, twin in twins:
            cells = []
            for version in ("a", "b"):
                ratios = [rows[(p, r, number[lib])][version][0] / rows[(p, r, number[twin])][version][0]
                          for (p, r, c) in list(rows) if p == pass_ and c == number[lib]
                          and version in rows[(p, r, c)] and version in rows.get((p, r, number[twin]), {})]
                cells.append(f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})" if ratios else "-")
            print(f"| {pass_} | ({lib}) / ({twin}) | {cells[0]} | {cells[1]} |")

# the after/before ratios in the format of docs/benchmarks/data/http-ab.csv
after = os.environ["AB_AFTER_COMMIT"].split(" on ")[0].split(" --")[0]
with open(sys.argv[3], "w", encoding="utf-8", newline="") as out:
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["date", "commit", "recorded_in", "machine", "command", "page", "before", "after", "variant", "case",
                "concurrency", "median", "min", "max", "jvm_cpu"])
    today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    for pass_, case in order:
        if pass_ not in ("c16", "c1"):
            continue
        pairs = [v for (p, _, c), v in rows.items() if p == pass_ and c == case and "a" in v and "b" in v]
        if not pairs:
            continue
        ratios = [v["b"][0] / v["a"][0] for v in pairs]
        jvm = [v["b"][4] / v["a"][4] for v in pairs if v["a"][4] > 0]
        w.writerow([today, after, "", os.environ.get("BENCH_MACHINE", ""), os.environ["AB_COMMAND"], os.environ["AB_PAGE"],
                    os.environ["AB_BEFORE_COMMIT"], after, os.environ["AB_VARIANT"], case, pass_[1:],
                    f"{statistics.median(ratios):.2f}", f"{min(ratios):.2f}", f"{max(ratios):.2f}",
                    f"{statistics.median(jvm):.2f}" if jvm else ""])
PY
if [[ ${BENCH_RECORD:-0} == 1 ]]; then
	python3 "$ROOT/etc/docs/results.py" append "$OUT/http-ab.csv"
fi
