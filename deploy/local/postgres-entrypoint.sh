#!/bin/sh
# The official image's entrypoint in brief: as root, give PGDATA to postgres and re-run as
# postgres; on an empty PGDATA, initdb with POSTGRES_USER/POSTGRES_PASSWORD, password
# authentication from the network, and POSTGRES_DB; then exec the command (postgres …).
set -eu
if [ "$(id -u)" = 0 ]; then
    install -d -o postgres -g postgres -m 0700 "$PGDATA"
    chown postgres:postgres "$PGDATA"
    chmod 0700 "$PGDATA"
    install -d -o postgres -g postgres -m 2775 /var/run/postgresql
    exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    password_file=$(mktemp)
    printf '%s' "${POSTGRES_PASSWORD:?}" >"$password_file"
    initdb --username="${POSTGRES_USER:-postgres}" --pwfile="$password_file" \
        --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    rm -f "$password_file"
    echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
    echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
    if [ -n "${POSTGRES_DB:-}" ] && [ "$POSTGRES_DB" != postgres ]; then
        postgres --single -D "$PGDATA" postgres <<SQL >/dev/null
CREATE DATABASE "$POSTGRES_DB" OWNER "${POSTGRES_USER:-postgres}";
SQL
    fi
fi
exec "$@"
