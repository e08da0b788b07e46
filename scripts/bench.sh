#!/usr/bin/env bash
# Builds Rescind in release mode and runs the benchmarks against the local stack.
#
#   scripts/bench.sh                      the full run of docs/benchmarks.md (~3.5 minutes after the build)
#   scripts/bench.sh --quick              small sizes: checks the instrument in ~2 minutes
#   scripts/bench.sh --sections crypto    any rescind-bench option (rescind-dev bench --help)
#   scripts/bench.sh --sections load      honest devices beside a flood ten times their load (docs/reliability.md; not in the full run)
#
# The raw output (measurements as they are taken, then the Markdown table) is kept in
# bench-results/<UTC time>.txt. RESCIND_BENCH_SCRATCH picks the build directory
# (default .build). The benchmarks start their own grant service, audit service, Kafka
# development broker and agents; they need only PostgreSQL, which `stack.sh up` provides.
# The fan-out section runs a second time on Tansu (the second broker `stack.sh up` starts).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
SCRATCH=${RESCIND_BENCH_SCRATCH:-.build}

if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
    export PATH=/opt/swift/usr/bin:$PATH
fi

scripts/stack.sh up >&2
eval "$(scripts/stack.sh env)"

for product in rescind-grant-service rescind-audit-service rescind-agent rescind-bench rescind-dev; do
    echo "[bench] building $product (release)" >&2
    swift build -c release --scratch-path "$SCRATCH" --product "$product" >&2
done

mkdir -p bench-results
output=bench-results/$(date -u +%Y-%m-%dT%H%M%SZ).txt
echo "[bench] load average: $(cut -d' ' -f1-3 /proc/loadavg); raw output → $output" >&2
"$SCRATCH/release/rescind-dev" bench "$@" | tee "$output"

# The fan-out again on the second broker (Tansu, scripts/tansu.sh, which stack.sh up started):
# an independent Kafka-protocol broker answers a waiting fetch when data arrives, the
# development broker only when the wait expires. One process cannot load two librdkafka
# versions, so this is a second run of rescind-bench with Tansu's librdkafka, its figures
# appended to the same output. Skipped when --sections leaves fanout out, or RESCIND_BENCH_TANSU=0.
wants_fanout=1
previous=
for argument in "$@"; do
    if [ "$previous" = --sections ] && [[ ",$argument," != *,fanout,* ]]; then wants_fanout=0; fi
    previous=$argument
done
if [ "$wants_fanout" -eq 1 ] && [ "${RESCIND_BENCH_TANSU:-1}" != 0 ]; then
    bash scripts/tansu.sh up >&2
    echo "[bench] the fan-out again on Tansu" >&2
    (
        # shellcheck disable=SC1091
        source .stack/tansu.env
        "$SCRATCH/release/rescind-dev" bench "$@" --sections fanout --kafka-bootstrap-servers "$RESCIND_KAFKA_BOOTSTRAP_SERVERS"
    ) | tee -a "$output"
fi
