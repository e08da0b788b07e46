#!/usr/bin/env bash
# Runs every test of Rescind against real servers, on a fresh machine or a used one:
# installs what is missing, starts PostgreSQL and the Kafka broker (unless the
# stack is already up, which it then leaves running), builds, runs the unit,
# integration and end-to-end tests, and stops what it started.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
    export PATH=/opt/swift/usr/bin:$PATH
fi

started_stack=0
if ! scripts/stack.sh status >/dev/null 2>&1; then
    started_stack=1
    trap 'scripts/stack.sh down' EXIT
fi
scripts/stack.sh up
# shellcheck disable=SC1091
source .stack/env

echo "[test] building"
swift build --build-tests

echo "[test] running the tests, one at a time"
# Integration tests each start real services (HTTP servers, Kafka clusters, agents):
# run side by side on two cores they starve each other's timing, so they run serially.
swift test --skip-build --no-parallel "$@"
if [ "$started_stack" -eq 1 ]; then echo "[test] stopping the stack this run started"; fi
