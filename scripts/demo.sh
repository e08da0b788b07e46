#!/usr/bin/env bash
# The end-to-end revocation demo on local servers. Idempotent: brings up (or
# reuses) the local stack, builds, plays the story, and leaves the stack running.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
scripts/stack.sh up
echo
echo "The local stack is up (addresses above, also in .stack/env)."
echo "The services and the revocation story arrive with the grant service, device"
echo "agent and audit service; until then this command only prepares the stack."
echo "Stop it with: scripts/stack.sh down"
