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
# Builds idempotency-core's JMH benchmarks (Maven profile "benchmarks") and runs them with
# the GC profiler and CpuTimeProfiler, so that every score (wall-clock time per operation)
# comes with the bytes allocated (gc.alloc.rate.norm) and the CPU time (cpu.time.norm) per
# operation.
#
# Usage: idempotency-core/src/jmh/run-benchmarks.sh [--quick] [--no-build] [INCLUDE_REGEX]
#
#   INCLUDE_REGEX  JMH include pattern, e.g. 'Fingerprint' or 'InMemoryStore.*replay'
#                  (default: every benchmark)
#   --quick        one fork and short iterations: a smoke test, not numbers to publish
#   --no-build     reuse idempotency-core/target/benchmarks.jar
#
# Results go to idempotency-core/target/jmh/: timed.{txt,json} for the time-based
# benchmarks, fresh-key.{txt,json} for the batched first-request benchmarks (*FreshKey*),
# and environment.txt. The full run takes about 8 minutes on 2 cores. Run it on a machine
# that is otherwise idle: other processes competing for the cores show up as noise.
# Extra JMH options can be given in the JMH_OPTS environment variable.

set -euo pipefail

quick=false
build=true
include='.*'
for arg in "$@"; do
	case "$arg" in
		--quick) quick=true ;;
		--no-build) build=false ;;
		-h|--help) sed -n '/^# Builds/,/^# Extra/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
		-*) echo "Unknown option: $arg (see --help)" >&2; exit 2 ;;
		*) include="$arg" ;;
	esac
done

module="$(cd "$(dirname "$0")/../.." && pwd)"
root="$(cd "$module/.." && pwd)"
jar="$module/target/benchmarks.jar"
out="$module/target/jmh"
java="${JAVA_HOME:+$JAVA_HOME/bin/}java"

if $build; then
	(cd "$root" && ./mvnw -B -q -Pbenchmarks -pl idempotency-core -DskipTests package)
fi
mkdir -p "$out"

{
	echo "date:    $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "cores:   $(nproc)"
	echo "memory:  $(free -h 2>/dev/null | awk '/^Mem:/ {print $2}')"
	echo "os:      $(uname -srm)$( [ -r /etc/os-release ] && . /etc/os-release && echo ", $PRETTY_NAME")"
	echo "cpu:     $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//')"
	echo "load:    $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
	echo "git:     $(cd "$root" && git rev-parse --short HEAD 2>/dev/null)"
	"$java" -version 2>&1 | sed 's/^/java:    /'
} > "$out/environment.txt"
cat "$out/environment.txt"

# Time-based benchmarks use the iterations and forks of their annotations. The *FreshKey*
# benchmarks measure batches of new keys in single shots (see FreshKeys) and need many
# shots, so they run separately with options of their own.
timed_opts=()
fresh_opts=()
if $quick; then
	timed_opts=(-f 1 -wi 2 -w 500ms -i 3 -r 500ms)
	fresh_opts=(-f 1 -wi 50 -i 50)
fi

run() {
	local name="$1"; shift
	if [ -z "$("$java" -jar "$jar" -l "$@" | tail -n +2)" ]; then
		echo "No $name benchmarks match '$include'"
		return 0
	fi
	# shellcheck disable=SC2086
	"$java" -jar "$jar" "$@" -prof gc -prof dev.idempotency.core.jmh.CpuTimeProfiler -rf json -rff "$out/$name.json" ${JMH_OPTS:-} 2>&1 | tee "$out/$name.txt"
}

run timed "$include" -e 'FreshKey' ${timed_opts[@]+"${timed_opts[@]}"}
run fresh-key "$include" -e '^(?!.*FreshKey)' ${fresh_opts[@]+"${fresh_opts[@]}"}

# the results in the format of docs/benchmarks/data/jmh.csv; with BENCH_RECORD=1 (and
# BENCH_MACHINE, an id of docs/benchmarks/data/machines.csv) appended to it
json=()
for name in timed fresh-key; do
	[ -s "$out/$name.json" ] && json+=("$out/$name.json")
done
if [ ${#json[@]} -gt 0 ]; then
	python3 "$root/etc/docs/results.py" jmh "${json[@]}" --out "$out/jmh.csv" \
		--command "idempotency-core/src/jmh/run-benchmarks.sh${*:+ $*}${JMH_OPTS:+ (JMH_OPTS=$JMH_OPTS)}"
	if [ "${BENCH_RECORD:-0}" = 1 ]; then
		python3 "$root/etc/docs/results.py" append "$out/jmh.csv"
	fi
fi
echo "Results in $out"
