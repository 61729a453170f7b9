#!/usr/bin/env bash
# Soak test of the payments sample: several instances of the packaged sample under a mixed
# load with injected Redis/PostgreSQL faults and instance kills, then a check of the
# database (double executions) and of the client log (mismatched replays).
#
# Usage, from anywhere in the repository:
#   idempotency-sample-payments/src/soak/soak.sh [--duration=10m] [--instances=3] \
#       [--concurrency=8] [--faults=true] [--fault-interval=20s] [--kills=true] \
#       [--lock-timeout=2s] [--seed=N] [--output=DIR]
# Servers come from the IDEMPOTENCY_TEST_* variables (see docs/testing.md), else
# Testcontainers, else embedded servers. Exits with 1 when an anomaly was found.
set -euo pipefail

root="$(cd "$(dirname "$0")/../../.." && pwd)"
module=idempotency-sample-payments
cd "$root"

# build the sample's jar and test classes, and write the test class path
./mvnw -q -pl "$module" -am -DskipTests package \
	org.apache.maven.plugins:maven-dependency-plugin:3.9.0:build-classpath \
	-Dmdep.includeScope=test -Dmdep.outputFile=target/soak.classpath

classpath="$module/target/test-classes:$module/target/classes:$(cat "$module/target/soak.classpath")"
exec java -Xmx1g -cp "$classpath" dev.idempotency.sample.payments.SoakDriver "$@"
