#!/usr/bin/env bash
# The Python tools the tests use, pinned, in one virtual environment (.stack/venv): schemathesis
# (and cryptography for its seeding) against the HTTP documents, jsonschema for the Kafka
# messages against schemas/. Installs what is missing; prints the environment's python.
#
#   python=$(scripts/python-tools.sh)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
venv=.stack/venv
pins=("schemathesis==4.32.5" "cryptography==50.0.2" "jsonschema==4.26.0")
if ! "$venv/bin/python" - "${pins[@]}" >/dev/null 2>&1 <<'PY'
import sys
from importlib.metadata import version
sys.exit(any(version(name) != wanted for name, wanted in (pin.split("==") for pin in sys.argv[1:])))
PY
then
    echo "[python-tools] installing ${pins[*]} into $venv" >&2
    mkdir -p .stack
    [ -x "$venv/bin/pip" ] || python3 -m venv "$venv"
    "$venv/bin/pip" install -q "${pins[@]}" >&2
fi
echo "$ROOT/$venv/bin/python"
