#!/usr/bin/env bash
# The end-to-end revocation demo on local servers. Idempotent: brings up (or
# reuses) the local stack, builds, plays the story from a clean slate (its own
# schemas and topic prefix), and leaves everything running.
#   scripts/demo.sh [--records N]    play it
#   scripts/demo.sh --down           stop the demo's processes and the stack
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
    export PATH=/opt/swift/usr/bin:$PATH
fi

if [ "${1:-}" = "--down" ]; then
    bin=$(swift build --show-bin-path 2>/dev/null || true)
    if [ -x "$bin/rescind-dev" ]; then "$bin/rescind-dev" demo --down --root "$ROOT"; fi
    scripts/stack.sh down
    exit 0
fi

# One line per phase, with the seconds since the command started.
say() { printf '[demo %4ss] %s\n' "$SECONDS" "$*"; }
say "packages and servers: Debian packages, PostgreSQL, the development Kafka broker (scripts/stack.sh up)"
scripts/stack.sh up
# shellcheck disable=SC1091
source .stack/env
say "building (the first build takes about ten minutes on two cores)"
swift build
bin=$(swift build --show-bin-path)
say "built; playing the story"
exec "$bin/rescind-dev" demo --root "$ROOT" "$@"
