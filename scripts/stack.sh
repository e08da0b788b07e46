#!/usr/bin/env bash
# The local development stack: PostgreSQL 15 and the development Kafka broker, with a
# throwaway certificate authority for TLS on every hop.
#
#   scripts/stack.sh up       install what is missing, make the CA, start both, write .stack/env
#   scripts/stack.sh down     stop both (data is kept under .stack/)
#   scripts/stack.sh status   say what runs, exit 0 only if both do
#   scripts/stack.sh env      print the exports of a running stack
#   scripts/stack.sh reset    down, then delete all stack data
#
# Every command is idempotent. Components never assume this stack: they read
# RESCIND_DATABASE_URL and RESCIND_KAFKA_BOOTSTRAP_SERVERS, which `up` writes to
# .stack/env (source it), with RESCIND_KAFKA_FETCH_WAIT_MS=25: the development broker
# answers a waiting fetch only when it expires (librdkafka's default wait is 500 ms), and
# RESCIND_KAFKA_TOPICS_AUTO_CREATED=true: it has no Admin API and creates topics on first use.
# `up` also starts the second broker, Tansu (scripts/tansu.sh: .stack/tansu.env, sourced
# after .stack/env, points the same variables at it, with a newer librdkafka).
# `up` also makes a CA and a certificate for 127.0.0.1/localhost under .stack/tls
# (scripts/make-dev-ca.sh): PostgreSQL serves TLS with it (the URL in .stack/env asks for
# sslmode=verify-full), and .stack/env hands it to the services (HTTPS) and their clients.
# The development broker (librdkafka's mock cluster) cannot speak TLS.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STACK_DIR=${RESCIND_STACK_DIR:-$ROOT/.stack}
PG_PORT=${RESCIND_PG_PORT:-54329}
PG_USER=rescind
PG_PASSWORD=rescind
PG_DATABASE=rescind
PG_BIN=${RESCIND_PG_BIN:-/usr/lib/postgresql/15/bin}
APT_PACKAGES=(pkg-config libsodium-dev libssl-dev librdkafka-dev libpq-dev libsqlite3-dev postgresql postgresql-client chromium openssl zbar-tools)
TLS_DIR=$STACK_DIR/tls

say() { printf '[stack %4ss] %s\n' "$SECONDS" "$*" >&2; }
die() { printf '[stack] error: %s\n' "$*" >&2; exit 1; }

# --- installation -----------------------------------------------------------

ensure_swift() {
    if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
        export PATH=/opt/swift/usr/bin:$PATH
    fi
    command -v swift >/dev/null 2>&1 || die "no Swift toolchain on PATH (expected Swift 6 at /opt/swift)"
}

ensure_packages() {
    local missing=()
    for package in "${APT_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    say "installing ${missing[*]}"
    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# --- PostgreSQL -------------------------------------------------------------

# PostgreSQL refuses to run as root; as root we run it as the `postgres` user.
as_pg_user() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_dir() {
    local dir=$STACK_DIR/postgres
    if [ "$(id -u)" -eq 0 ]; then
        mkdir -p "$dir"
        chown postgres:postgres "$dir"
        chmod 700 "$dir"
        if ! runuser -u postgres -- test -w "$dir"; then
            # A parent directory (e.g. /root) is closed to other users: keep the
            # cluster in a directory of its own that the postgres user can reach.
            dir=/var/tmp/rescind-stack-$(printf '%s' "$ROOT" | sha256sum | cut -c1-12)/postgres
            mkdir -p "$dir"
            chown postgres:postgres "$dir" "$(dirname "$dir")"
            chmod 700 "$dir"
        fi
    else
        mkdir -p "$dir"
        chmod 700 "$dir"
    fi
    printf '%s' "$dir"
}

# The stack's certificate, copied where the postgres user owns it (PostgreSQL refuses a key
# file that others can read or that it does not own).
pg_tls_files() {
    local dir=$1
    mkdir -p "$dir/tls"
    cp "$TLS_DIR/server.pem" "$dir/tls/server.pem"
    cp "$TLS_DIR/server.key" "$dir/tls/server.key"
    chmod 700 "$dir/tls"
    chmod 600 "$dir/tls/server.key"
    [ "$(id -u)" -eq 0 ] && chown -R postgres:postgres "$dir/tls"
    return 0
}

pg_running() {
    local dir=$1
    [ -f "$dir/data/PG_VERSION" ] && as_pg_user "$PG_BIN/pg_ctl" -D "$dir/data" status >/dev/null 2>&1
}

pg_up() {
    local dir
    dir=$(pg_dir)
    if [ ! -f "$dir/data/PG_VERSION" ]; then
        say "initialising PostgreSQL cluster in $dir/data"
        local pwfile=$dir/pwfile
        printf '%s\n' "$PG_PASSWORD" >"$pwfile"
        [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$pwfile"
        as_pg_user "$PG_BIN/initdb" -D "$dir/data" -U "$PG_USER" --pwfile="$pwfile" \
            --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
            || { cat "$dir/initdb.log" >&2; die "initdb failed"; }
        rm -f "$pwfile"
    fi
    if pg_running "$dir" && ! pg_serves_tls; then
        say "PostgreSQL runs without TLS; restarting it with the stack's certificate"
        as_pg_user "$PG_BIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    fi
    if pg_running "$dir"; then
        say "PostgreSQL already running on 127.0.0.1:$PG_PORT (TLS)"
    else
        pg_tls_files "$dir"
        say "starting PostgreSQL on 127.0.0.1:$PG_PORT (TLS with .stack/tls/server.pem)"
        as_pg_user "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
            -o "-p $PG_PORT -k $dir -c listen_addresses=127.0.0.1 -c max_connections=1000 -c shared_buffers=256MB -c ssl=on -c ssl_cert_file=$dir/tls/server.pem -c ssl_key_file=$dir/tls/server.key" start >/dev/null \
            || { tail -n 20 "$dir/server.log" >&2; die "PostgreSQL did not start"; }
    fi
    if ! PGPASSWORD=$PG_PASSWORD psql -h 127.0.0.1 -p "$PG_PORT" -U "$PG_USER" -d postgres -tAc \
        "SELECT 1 FROM pg_database WHERE datname = '$PG_DATABASE'" | grep -q 1; then
        PGPASSWORD=$PG_PASSWORD psql -h 127.0.0.1 -p "$PG_PORT" -U "$PG_USER" -d postgres -qc \
            "CREATE DATABASE $PG_DATABASE" >/dev/null
    fi
    printf '%s' "$dir" >"$STACK_DIR/postgres.dir"
}

# Whether the running server accepts a connection that verifies its certificate.
pg_serves_tls() {
    PGPASSWORD=$PG_PASSWORD psql "host=127.0.0.1 port=$PG_PORT user=$PG_USER dbname=postgres sslmode=verify-full sslrootcert=$TLS_DIR/ca.pem" \
        -tAc "SELECT 1" >/dev/null 2>&1
}

pg_down() {
    [ -f "$STACK_DIR/postgres.dir" ] || return 0
    local dir
    dir=$(cat "$STACK_DIR/postgres.dir")
    if pg_running "$dir"; then
        say "stopping PostgreSQL"
        as_pg_user "$PG_BIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    fi
}

# --- development Kafka broker -----------------------------------------------

broker_running() {
    [ -f "$STACK_DIR/devbroker.pid" ] && kill -0 "$(cat "$STACK_DIR/devbroker.pid")" 2>/dev/null
}

broker_up() {
    if broker_running && [ -s "$STACK_DIR/kafka.bootstrap" ]; then
        say "development Kafka broker already running at $(cat "$STACK_DIR/kafka.bootstrap")"
        return 0
    fi
    say "building the development Kafka broker"
    (cd "$ROOT" && swift build --product rescind-devbroker >"$STACK_DIR/devbroker-build.log" 2>&1) \
        || { tail -n 30 "$STACK_DIR/devbroker-build.log" >&2; die "building rescind-devbroker failed"; }
    local binary
    binary=$(cd "$ROOT" && swift build --show-bin-path)/rescind-devbroker
    rm -f "$STACK_DIR/kafka.bootstrap"
    say "starting the development Kafka broker"
    nohup "$binary" --brokers "${RESCIND_DEVBROKER_BROKERS:-1}" --partitions "${RESCIND_DEVBROKER_PARTITIONS:-4}" \
        --address-file "$STACK_DIR/kafka.bootstrap" >"$STACK_DIR/devbroker.log" 2>&1 &
    echo $! >"$STACK_DIR/devbroker.pid"
    for _ in $(seq 1 100); do
        [ -s "$STACK_DIR/kafka.bootstrap" ] && return 0
        broker_running || break
        sleep 0.1
    done
    tail -n 20 "$STACK_DIR/devbroker.log" >&2
    die "the development Kafka broker did not come up"
}

broker_down() {
    if broker_running; then
        say "stopping the development Kafka broker"
        local pid
        pid=$(cat "$STACK_DIR/devbroker.pid")
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$STACK_DIR/devbroker.pid" "$STACK_DIR/kafka.bootstrap"
}

# --- commands ---------------------------------------------------------------

write_env() {
    cat >"$STACK_DIR/env" <<EOF
export RESCIND_DATABASE_URL='postgres://$PG_USER:$PG_PASSWORD@127.0.0.1:$PG_PORT/$PG_DATABASE?sslmode=verify-full&sslrootcert=$TLS_DIR/ca.pem'
export RESCIND_KAFKA_BOOTSTRAP_SERVERS=$(cat "$STACK_DIR/kafka.bootstrap")
export RESCIND_KAFKA_FETCH_WAIT_MS=25
export RESCIND_KAFKA_TOPICS_AUTO_CREATED=true
export RESCIND_CA_FILE=$TLS_DIR/ca.pem
export RESCIND_AGENT_CA_FILE=$TLS_DIR/ca.pem
export RESCIND_GRANT_TLS_CERT_FILE=$TLS_DIR/server.pem
export RESCIND_GRANT_TLS_KEY_FILE=$TLS_DIR/server.key
export RESCIND_AUDIT_TLS_CERT_FILE=$TLS_DIR/server.pem
export RESCIND_AUDIT_TLS_KEY_FILE=$TLS_DIR/server.key
EOF
}

up() {
    mkdir -p "$STACK_DIR"
    ensure_swift
    ensure_packages
    bash "$ROOT/scripts/make-dev-ca.sh" "$TLS_DIR"
    pg_up
    broker_up
    write_env
    bash "$ROOT/scripts/tansu.sh" up
    say "stack is up; source $STACK_DIR/env for its addresses:"
    sed 's/^/    /' "$STACK_DIR/env" >&2
    say "and $STACK_DIR/tansu.env after it for the second broker (Tansu, topics provisioned by rescind-admin migrate kafka)"
}

down() {
    bash "$ROOT/scripts/tansu.sh" down
    broker_down
    pg_down
    rm -f "$STACK_DIR/env"
}

status() {
    local ok=0
    if [ -f "$STACK_DIR/postgres.dir" ] && pg_running "$(cat "$STACK_DIR/postgres.dir")"; then
        say "PostgreSQL: running on 127.0.0.1:$PG_PORT"
    else
        say "PostgreSQL: stopped"; ok=1
    fi
    if broker_running; then
        say "Kafka broker: running at $(cat "$STACK_DIR/kafka.bootstrap" 2>/dev/null)"
    else
        say "Kafka broker: stopped"; ok=1
    fi
    bash "$ROOT/scripts/tansu.sh" status || true
    return $ok
}

case "${1:-}" in
    up) up ;;
    down) down ;;
    status) status ;;
    env) [ -f "$STACK_DIR/env" ] && cat "$STACK_DIR/env" || die "the stack is not up (scripts/stack.sh up)" ;;
    reset)
        down
        [ -f "$STACK_DIR/postgres.dir" ] && rm -rf "$(cat "$STACK_DIR/postgres.dir")"
        rm -rf "$STACK_DIR"
        say "stack data removed" ;;
    *) echo "usage: scripts/stack.sh up|down|status|env|reset" >&2; exit 2 ;;
esac
