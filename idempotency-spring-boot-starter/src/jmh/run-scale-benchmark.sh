#!/usr/bin/env bash
#
# Copyright 2026-present the original author or authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#      https://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
#
# Builds the starter with the "benchmarks" Maven profile and runs the scale run
# (dev.idempotency.spring.jmh.ScaleBenchmark): acquire and replay latency of the Redis,
# PostgreSQL and tiered stores with 1,000 and then 1,000,000 completed records stored.
#
# Usage: idempotency-spring-boot-starter/src/jmh/run-scale-benchmark.sh [--no-build] [COUNTS [SAMPLES [WARMUP]]]
#
#   COUNTS    comma-separated record counts, ascending (default 1000,1000000)
#   SAMPLES   timed operations per store and operation (default 10000)
#   WARMUP    untimed operations before each measurement (default 2000)
#   --no-build  reuse the last build
#
# Servers: IDEMPOTENCY_BENCH_REDIS_URL, IDEMPOTENCY_BENCH_JDBC_URL, IDEMPOTENCY_BENCH_JDBC_USERNAME,
# IDEMPOTENCY_BENCH_JDBC_PASSWORD (else the IDEMPOTENCY_TEST_* variables of the tests, else
# redis://127.0.0.1:6379 and jdbc:postgresql://127.0.0.1:5432/test as postgres). The run
# writes under its own Redis key prefix and PostgreSQL schema and deletes both at the end.
# It needs about 0.5 GB of Redis memory and 0.5 GB of PostgreSQL disk for 1,000,000 records
# and takes 3 to 4 minutes on 2 cores. Output goes to idempotency-spring-boot-starter/target/scale/.

set -euo pipefail

build=true
args=()
for arg in "$@"; do
	case "$arg" in
		--no-build) build=false ;;
		-h|--help) sed -n '/^# Builds/,/^# and takes/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		-*) echo "Unknown option: $arg (see --help)" >&2; exit 2 ;;
		*) args+=("$arg") ;;
	esac
done

module="$(cd "$(dirname "$0")/../.." && pwd)"
root="$(cd "$module/.." && pwd)"
out="$module/target/scale"
java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
mkdir -p "$out"

if $build; then
	(cd "$root" && ./mvnw -B -q -Pbenchmarks -pl idempotency-spring-boot-starter -am -DskipTests package \
		dependency:build-classpath -Dmdep.includeScope=runtime -Dmdep.outputFile="$out/classpath.txt")
fi

{
	echo "date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "cores:   $(nproc)"
	echo "memory:  $(free -h 2>/dev/null | awk '/^Mem:/ {print $2}')"
	echo "os:      $(uname -srm)$( [ -r /etc/os-release ] && . /etc/os-release && echo ", $PRETTY_NAME")"
	echo "cpu:     $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')"
	echo "load:    $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
	echo "git:     $(cd "$root" && git rev-parse --short HEAD 2>/dev/null)"
	echo "redis:   $(redis-cli -v 2>/dev/null || echo unknown client)"
	"$java" -version 2>&1 | sed 's/^/java:    /'
} > "$out/environment.txt"
cat "$out/environment.txt"

classpath="$module/target/classes:$root/idempotency-core/target/classes:$(cat "$out/classpath.txt")"
"$java" -Xms512m -Xmx512m -cp "$classpath" dev.idempotency.spring.jmh.ScaleBenchmark ${args[@]+"${args[@]}"} 2>&1 | tee "$out/scale.txt"
# the results in the format of docs/benchmarks/data/scale.csv; with BENCH_RECORD=1 (and
# BENCH_MACHINE, an id of docs/benchmarks/data/machines.csv) appended to it
python3 "$root/etc/docs/results.py" scale "$out/scale.txt" --out "$out/scale.csv" \
	--command "idempotency-spring-boot-starter/src/jmh/run-scale-benchmark.sh${*:+ $*}"
if [ "${BENCH_RECORD:-0}" = 1 ]; then
	python3 "$root/etc/docs/results.py" append "$out/scale.csv"
fi
echo "Results in $out"
