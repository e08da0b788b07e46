#!/usr/bin/env bash
# A throwaway certificate authority and one server certificate for development and tests:
#
#   scripts/make-dev-ca.sh DIR [NAME…]
#
# writes DIR/ca.pem, DIR/ca.key, DIR/server.pem and DIR/server.key. The server certificate
# names 127.0.0.1, ::1 and localhost, plus every NAME given (host names such as
# grant-service, audit-service and postgres for deploy/compose.yaml), so every service of the
# local stack (grant, audit, PostgreSQL) can use it. Idempotent: existing files are kept while
# the server certificate still verifies against the CA, names the same hosts and is valid for
# another day. Never use these files beyond development: the CA's key sits next to its
# certificate.
set -euo pipefail

dir=${1:?usage: make-dev-ca.sh DIR [NAME…]}
shift
names="IP:127.0.0.1,IP:::1,DNS:localhost"
for name in "$@"; do names="$names,DNS:$name"; done

mkdir -p "$dir"
chmod 700 "$dir"
cd "$dir"

ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)

if [ ! -s ca.pem ] || [ ! -s ca.key ] || ! openssl x509 -in ca.pem -noout -checkend 86400 >/dev/null 2>&1; then
    openssl req -x509 "${ec[@]}" -keyout ca.key -out ca.pem -days 825 -subj "/CN=Rescind development CA" \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
    rm -f server.pem server.key
fi

if [ ! -s server.pem ] || [ ! -s server.key ] || [ "$(cat server.names 2>/dev/null)" != "$names" ] \
    || ! openssl verify -CAfile ca.pem server.pem >/dev/null 2>&1 \
    || ! openssl x509 -in server.pem -noout -checkend 86400 >/dev/null 2>&1; then
    openssl req -new "${ec[@]}" -keyout server.key -out server.csr -subj "/CN=localhost" 2>/dev/null
    printf '%s\n' "subjectAltName=$names" "basicConstraints=critical,CA:FALSE" \
        "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" >server.ext
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 825 -extfile server.ext \
        -out server.pem 2>/dev/null
    printf '%s\n' "$names" >server.names
    rm -f server.csr server.ext ca.srl
fi
chmod 600 ca.key server.key
chmod 644 ca.pem server.pem
