#!/usr/bin/env bash
# libFuzzer targets for the parsers that take bytes from the network (docs/reliability.md):
#   binary-records  BinaryRecords (upload batch and change-feed page bodies)
#   envelope        SignedMessage.decode, for every message type on the topics
#
#   scripts/fuzz.sh [--seconds N] [binary-records|envelope]…     (default: 120 s each, both)
#
# Builds the rescind-fuzz executable with -sanitize=fuzzer,address (release) in its own
# scratch path, .build-fuzz, and runs each target from the committed seeds (Fuzz/corpus/<target>)
# plus the corpus grown by earlier runs (.build-fuzz/corpus/<target>). A crash is written to
# .build-fuzz/crashes/<target>/: replay it with `swift run rescind-fuzz <target> <file>`, then
# commit it under Fuzz/regressions/<target>/ (the test suite replays that folder) with the fix.
# Prints per target: seconds, executions, corpus size, crashes. Exits non-zero on a crash.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
seconds=120
targets=()
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) seconds=$2; shift 2 ;;
        -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
        binary-records|envelope) targets+=("$1"); shift ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
[ ${#targets[@]} -gt 0 ] || targets=(binary-records envelope)
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then export PATH=/opt/swift/usr/bin:$PATH; fi

mkdir -p .build-fuzz
echo "[fuzz] building rescind-fuzz with -sanitize=fuzzer,address in .build-fuzz"
swift build -c release --scratch-path .build-fuzz --product rescind-fuzz \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING -Xswiftc -parse-as-library >.build-fuzz/build.log 2>&1 \
    || { tail -30 .build-fuzz/build.log; exit 1; }
binary=.build-fuzz/release/rescind-fuzz
status=0
printf '%-16s %8s %12s %8s %8s\n' target seconds executions corpus crashes
for target in "${targets[@]}"; do
    corpus=.build-fuzz/corpus/$target crashes=.build-fuzz/crashes/$target
    mkdir -p "$corpus" "$crashes"
    log=.build-fuzz/$target.log
    set +e
    # Leak checks off: the Swift runtime's and Foundation's process-lifetime allocations are not findings.
    ASAN_OPTIONS=detect_leaks=0 RESCIND_FUZZ_TARGET=$target "$binary" "$corpus" "Fuzz/corpus/$target" \
        -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
        -artifact_prefix="$crashes/" >"$log" 2>&1
    code=$?
    set -e
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    found=$(find "$crashes" -type f | wc -l)
    printf '%-16s %8s %12s %8s %8s\n' "$target" "$seconds" "${executions:-?}" "$(find "$corpus" -type f | wc -l)" "$found"
    if [ "$code" != 0 ] || [ "$found" != 0 ]; then
        status=1
        echo "  finding: see $log and $crashes/"
    fi
done
exit $status
