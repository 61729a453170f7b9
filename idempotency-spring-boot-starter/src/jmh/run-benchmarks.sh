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
# Builds the starter with the "benchmarks" Maven profile and runs its JMH benchmarks
# (dev.idempotency.spring.jmh.*Benchmark, not the scale run) with the GC profiler.
#
# Usage: idempotency-spring-boot-starter/src/jmh/run-benchmarks.sh [--no-build] [JMH arguments]
#
#   JMH arguments  passed to org.openjdk.jmh.Main after the defaults, for instance an include
#                  regex and "-p mappings=200"; without any, EndpointResolutionBenchmark runs with
#                  the iterations of its annotations (about 5 minutes on 2 cores)
#   --no-build     reuse the last build
#
# Output goes to idempotency-spring-boot-starter/target/jmh/: results.{txt,json} and
# environment.txt.

set -euo pipefail

build=true
args=()
for arg in "$@"; do
	case "$arg" in
		--no-build) build=false ;;
		-h|--help) sed -n '/^# Builds/,/^# environment/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		*) args+=("$arg") ;;
	esac
done
if [ ${#args[@]} -eq 0 ]; then
	args=(EndpointResolutionBenchmark)
fi

module="$(cd "$(dirname "$0")/../.." && pwd)"
root="$(cd "$module/.." && pwd)"
out="$module/target/jmh"
java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
mkdir -p "$out"

if $build; then
	(cd "$root" && ./mvnw -B -q -Pbenchmarks -pl idempotency-spring-boot-starter -am -DskipTests package \
		dependency:build-classpath -Dmdep.includeScope=runtime -Dmdep.outputFile="$out/classpath.txt")
fi

{
	echo "date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "cores:   $(nproc)"
	echo "os:      $(uname -srm)$( [ -r /etc/os-release ] && . /etc/os-release && echo ", $PRETTY_NAME")"
	echo "cpu:     $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')"
	echo "load:    $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
	echo "git:     $(cd "$root" && git rev-parse --short HEAD 2>/dev/null)"
	"$java" -version 2>&1 | sed 's/^/java:    /'
} > "$out/environment.txt"
cat "$out/environment.txt"

classpath="$module/target/classes:$(cat "$out/classpath.txt")"
"$java" -cp "$classpath" org.openjdk.jmh.Main -prof gc -rf json -rff "$out/results.json" "${args[@]}" 2>&1 \
	| tee "$out/results.txt"
# the results in the format of docs/benchmarks/data/jmh.csv; with BENCH_RECORD=1 (and
# BENCH_MACHINE, an id of docs/benchmarks/data/machines.csv) appended to it
python3 "$root/etc/docs/results.py" jmh "$out/results.json" --out "$out/jmh.csv" \
	--command "idempotency-spring-boot-starter/src/jmh/run-benchmarks.sh${*:+ $*}"
if [ "${BENCH_RECORD:-0}" = 1 ]; then
	python3 "$root/etc/docs/results.py" append "$out/jmh.csv"
fi
echo "Results in $out"
