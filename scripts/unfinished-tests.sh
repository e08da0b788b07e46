#!/usr/bin/env bash
# Names the tests a `swift test` log shows as started and never finished (passed, failed or
# skipped): what was running when a run was stopped. XCTest's and Swift Testing's lines both.
#   scripts/unfinished-tests.sh .stack/test-suite.log
set -euo pipefail
log=${1:?usage: scripts/unfinished-tests.sh LOG}
python3 - "$log" <<'PY'
import re, sys
started, order = {}, []
for line in open(sys.argv[1], errors="replace"):
    if " Test case passing " in line or "Test run started" in line:
        continue
    m = re.search(r"(?:◇|􀟈) (Test|Suite) (.+?) started\.", line)
    if m:
        key = m.group(2)
        if key not in started:
            order.append(key)
        started[key] = True
        continue
    m = re.search(r"(?:✔|✘|↷|􁁛|􀢄) (?:Test|Suite) (.+?)(?: with \d+ test cases?)? (?:passed|failed|skipped)", line)
    if m:
        started.pop(m.group(1), None)
        continue
    m = re.search(r"Test Case '(.+?)' (started|passed|failed|skipped)", line)
    if m:
        if m.group(2) == "started":
            order.append(m.group(1)); started[m.group(1)] = True
        else:
            started.pop(m.group(1), None)
left = [k for k in order if k in started]
print("\n".join(left) if left else "(none: the run was stopped between tests)")
PY
