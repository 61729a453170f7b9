#!/usr/bin/env bash
#
# What the completion script costs Redis, against the plain commands a completion without the
# owner check would send (docs/benchmarks/redis.md, "The completion script on Redis 7"). Starts a
# private redis-server, so that INFO commandstats and INFO cpu count this program's commands
# only, and runs RedisCompletionCostBenchmark.java beside this script against it.
#
# Environment (defaults in brackets):
#   COST_REDIS_SERVER [redis-server]  COST_PORT [16381] (must be free)
#   COST_REQUESTS [50000] (first requests per pass)  COST_ROUNDS [3]
set -euo pipefail
cd "$(dirname "$0")/../../../.."

: "${COST_REDIS_SERVER:=redis-server}"
: "${COST_PORT:=16381}"
: "${COST_REQUESTS:=50000}"
: "${COST_ROUNDS:=3}"

if redis-cli -p "$COST_PORT" ping > /dev/null 2>&1; then
	echo "Port $COST_PORT is taken: set COST_PORT to a free port" >&2
	exit 1
fi
classpath_file=$(mktemp)
"$COST_REDIS_SERVER" --port "$COST_PORT" --bind 127.0.0.1 --save '' --appendonly no > /dev/null &
redis_pid=$!
trap 'kill "$redis_pid" 2> /dev/null || true; rm -f "$classpath_file"' EXIT
./mvnw -q -B -ntp -pl idempotency-spring-boot-starter -am package dependency:build-classpath -DskipTests \
	-Dmaven.javadoc.skip -Dmaven.source.skip -Dcheckstyle.skip -Dspring-javaformat.skip \
	-Dmdep.outputFile="$classpath_file" > /dev/null
for _ in $(seq 1 50); do
	redis-cli -p "$COST_PORT" ping > /dev/null 2>&1 && break
	sleep 0.1
done

java -cp "idempotency-spring-boot-starter/target/classes:$(cat "$classpath_file")" \
	-Dcost.port="$COST_PORT" -Dcost.requests="$COST_REQUESTS" -Dcost.rounds="$COST_ROUNDS" \
	idempotency-spring-boot-starter/src/bench/redis/RedisCompletionCostBenchmark.java
