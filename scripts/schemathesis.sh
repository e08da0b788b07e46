#!/usr/bin/env bash
# Schemathesis against both services' OpenAPI documents (docs/reliability.md, "HTTP APIs"):
# every operation, every check schemathesis has (scripts/schemathesis/schemathesis.toml says
# which answers its acceptance check counts as acceptances); prints per service: operations,
# test cases, server errors, other failures.
#
#   scripts/schemathesis.sh [--max-examples N] [--seed S] [--no-build]
#
# Starts a grant service and an audit service over TLS on free loopback ports, on the
# configured PostgreSQL (RESCIND_DATABASE_URL, fresh schemas) and broker
# (RESCIND_KAFKA_BOOTSTRAP_SERVERS, a fresh topic prefix), from .stack/env unless already
# set; seeds an owner (user, device, bearer token, family member) and an operator token;
# stops both and drops the schemas afterwards. To test services already running instead:
#   GRANT_URL=… AUDIT_URL=… OWNER_TOKEN=… OPERATOR_TOKEN=… scripts/schemathesis.sh
# Schemathesis (pinned) is installed into .stack/venv on first use (scripts/python-tools.sh). Exits non-zero on any failure.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
max_examples=40
seed=20261125
build=1
while [ $# -gt 0 ]; do
    case "$1" in
        --max-examples) max_examples=$2; shift 2 ;;
        --seed) seed=$2; shift 2 ;;
        --no-build) build=0; shift ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then export PATH=/opt/swift/usr/bin:$PATH; fi

python=$(scripts/python-tools.sh)
venv=$(dirname "$(dirname "$python")")

work=.stack/schemathesis
mkdir -p "$work"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    if [ -n "${run_id:-}" ] && command -v psql >/dev/null 2>&1; then
        psql "$RESCIND_DATABASE_URL" -q -c "DROP SCHEMA IF EXISTS st_grant_$run_id CASCADE; DROP SCHEMA IF EXISTS st_audit_$run_id CASCADE" \
            >/dev/null 2>&1 || true
    fi
    if [ -n "${run_id:-}" ]; then rm -f "$work/grant-$run_id.key" "$work/audit-$run_id.key" "$work/operator-$run_id.token"; fi
}
trap cleanup EXIT

if [ -z "${GRANT_URL:-}" ]; then
    if [ -z "${RESCIND_DATABASE_URL:-}" ] && [ -f .stack/env ]; then
        set -a; source .stack/env; set +a
    fi
    : "${RESCIND_DATABASE_URL:?set RESCIND_DATABASE_URL or run scripts/stack.sh up}"
    : "${RESCIND_KAFKA_BOOTSTRAP_SERVERS:?}" "${RESCIND_GRANT_TLS_CERT_FILE:?the services serve HTTPS: set the TLS files}"
    if [ "$build" = 1 ]; then
        echo "[schemathesis] building the services"
        swift build --product rescind-grant-service >/dev/null
        swift build --product rescind-audit-service >/dev/null
    fi
    bin=$(swift build --show-bin-path)
    run_id=$(date +%s)_$$
    free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
    grant_port=$(free_port); audit_port=$(free_port)
    GRANT_URL=https://127.0.0.1:$grant_port AUDIT_URL=https://127.0.0.1:$audit_port
    common=(RESCIND_TOPIC_PREFIX="st$run_id." RESCIND_LOG_LEVEL=warning RESCIND_TOKEN_TTL_SECONDS=7200)
    env "${common[@]}" RESCIND_GRANT_PORT="$grant_port" RESCIND_GRANT_DB_SCHEMA="st_grant_$run_id" \
        RESCIND_GRANT_MIGRATE=true RESCIND_GRANT_MIGRATIONS_DIR="$ROOT/migrations/grant" \
        RESCIND_GRANT_SIGNING_KEY_FILE="$ROOT/$work/grant-$run_id.key" RESCIND_GRANT_CREATE_SIGNING_KEY=true \
        "$bin/rescind-grant-service" >"$work/grant.log" 2>&1 &
    pids+=($!)
    wait_ready() {
        for _ in $(seq 1 120); do
            if curl -fsS --cacert "$RESCIND_CA_FILE" "$1/ready" >/dev/null 2>&1; then return 0; fi
            sleep 0.5
        done
        echo "[schemathesis] $1 did not become ready; see $work/*.log" >&2
        exit 1
    }
    wait_ready "$GRANT_URL"
    ( umask 077; python3 -c 'import secrets; print("op-" + secrets.token_urlsafe(36))' >"$work/operator-$run_id.token" )
    env "${common[@]}" RESCIND_AUDIT_PORT="$audit_port" RESCIND_AUDIT_DB_SCHEMA="st_audit_$run_id" \
        RESCIND_AUDIT_MIGRATE=true RESCIND_AUDIT_MIGRATIONS_DIR="$ROOT/migrations/audit" \
        RESCIND_AUDIT_SIGNING_KEY_FILE="$ROOT/$work/audit-$run_id.key" RESCIND_AUDIT_CREATE_SIGNING_KEY=true \
        RESCIND_AUDIT_OPERATOR_TOKEN_FILE="$ROOT/$work/operator-$run_id.token" RESCIND_GRANT_SERVICE_URL="$GRANT_URL" \
        "$bin/rescind-audit-service" >"$work/audit.log" 2>&1 &
    pids+=($!)
    wait_ready "$AUDIT_URL"
    read -r _ OWNER_TOKEN < <("$venv/bin/python" scripts/schemathesis/seed.py "$GRANT_URL" "$RESCIND_CA_FILE")
    OPERATOR_TOKEN=$(cat "$work/operator-$run_id.token")
    echo "[schemathesis] grant service $GRANT_URL, audit service $AUDIT_URL (logs in $work/)"
fi
: "${OWNER_TOKEN:?}" "${OPERATOR_TOKEN:?}"

# One run per service and credential. The event stream (GET /v1/events) is left out: a valid
# request opens a stream that never ends, which schemathesis would report as a timeout; the
# Swift contract test (AuditServiceContractTests) drives it.
# The credentials must work, or most test cases would only meet 401.
expect_200() {
    local code
    code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "${RESCIND_CA_FILE:-/etc/ssl/certs/ca-certificates.crt}" \
        -H "Authorization: Bearer $2" "$1")
    [ "$code" = 200 ] || { echo "[schemathesis] $1 answered $code with the seeded credential" >&2; return 1; }
}
expect_200 "$GRANT_URL/v1/me" "$OWNER_TOKEN"
expect_200 "$AUDIT_URL/v1/monitoring/credential" "$OWNER_TOKEN"
expect_200 "$AUDIT_URL/v1/monitoring/credential" "$OPERATOR_TOKEN"

checks=all
status=0
run() {
    local name=$1 document=$2 url=$3 token=$4; shift 4
    local report="$work/$name.json"
    local started=$SECONDS
    set +e
    # One worker: with two, Hypothesis's source cache on Python 3.11 parses in two threads at
    # once and fails now and then ("AST constructor recursion depth mismatch"); the runs are short.
    # requests lets REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE override --tls-verify: unset them. Run from
    # $work, where schemathesis keeps its .schemathesis cache.
    (cd "$work" && env -u REQUESTS_CA_BUNDLE -u CURL_CA_BUNDLE "$venv/bin/schemathesis" --config-file "$ROOT/scripts/schemathesis/schemathesis.toml" run "$ROOT/$document" \
        --url "$url" --tls-verify "${RESCIND_CA_FILE:-true}" \
        -H "Authorization: Bearer $token" --checks "$checks" --max-examples "$max_examples" --seed "$seed" \
        --phases examples,coverage,fuzzing --workers 1 --request-timeout 20 --suppress-health-check all \
        --report json --report-json-path "$ROOT/$report" "$@") >"$work/$name.out" 2>&1
    local code=$?
    set -e
    "$venv/bin/python" scripts/schemathesis/summary.py "$name" "$report" $((SECONDS - started)) || code=1
    [ "$code" = 0 ] || { status=1; echo "  failures: see $work/$name.out"; }
}
# Retiring a device ends its tokens, and schemathesis reuses ids from earlier answers (GET
# /v1/me names the seeded device): DELETE /v1/devices/{deviceID} runs last, on its own.
run grant Sources/GrantService/Resources/openapi.yaml "$GRANT_URL" "$OWNER_TOKEN" --exclude-path '/v1/devices/{deviceID}'
expect_200 "$GRANT_URL/v1/me" "$OWNER_TOKEN" || status=1
run audit-operator Sources/AuditService/Resources/openapi.yaml "$AUDIT_URL" "$OPERATOR_TOKEN" --exclude-path /v1/events
run audit-owner Sources/AuditService/Resources/openapi.yaml "$AUDIT_URL" "$OWNER_TOKEN" --exclude-path /v1/events
run grant-retire Sources/GrantService/Resources/openapi.yaml "$GRANT_URL" "$OWNER_TOKEN" --include-path '/v1/devices/{deviceID}'
exit $status
