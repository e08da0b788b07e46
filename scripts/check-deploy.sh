#!/usr/bin/env bash
# Checks deploy/ without a cluster or a container engine, and exits non-zero on any failure:
#   - every manifest in deploy/k8s and deploy/k8s-examples validates, strictly (an unknown field
#     fails), against the schemas of Kubernetes $RESCIND_K8S_VERSION (kubernetes-validate, PyPI);
#   - `kubectl apply -f deploy/k8s` would apply no Secret (they come from files: k8s-examples);
#   - deploy/prometheus: `promtool check rules` and `promtool test rules` (Debian's prometheus),
#     and `promtool check config` of the scrape configuration;
#   - deploy/grafana: every dashboard is JSON and every panel's query is PromQL promtool accepts.
# Installs what is missing, once: kubernetes-validate (pinned) into .stack/deploy-venv, promtool
# through apt. Run again, it installs nothing and needs no network.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

KUBERNETES_VALIDATE_VERSION=1.37.0
# The Kubernetes release the manifests are checked against (and namespace.yaml's Pod Security
# enforce-version): the oldest one supported.
RESCIND_K8S_VERSION=${RESCIND_K8S_VERSION:-1.33.0}

say() { echo "[check-deploy] $*"; }

venv=.stack/deploy-venv
if ! "$venv/bin/kubernetes-validate" --version 2>/dev/null | grep -qx "$KUBERNETES_VALIDATE_VERSION"; then
    say "installing kubernetes-validate $KUBERNETES_VALIDATE_VERSION into $venv"
    mkdir -p .stack
    [ -x "$venv/bin/pip" ] || python3 -m venv "$venv"
    "$venv/bin/pip" install -q "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"
fi
if ! command -v promtool >/dev/null 2>&1; then
    say "installing promtool (Debian's prometheus package)"
    sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends prometheus >/dev/null
fi

say "validating deploy/k8s and deploy/k8s-examples against Kubernetes $RESCIND_K8S_VERSION"
"$venv/bin/kubernetes-validate" --strict --quiet -k "$RESCIND_K8S_VERSION" deploy/k8s/*.yaml deploy/k8s-examples/*.yaml

say "checking that deploy/k8s applies no Secret"
if grep -lE '^kind:[[:space:]]*Secret[[:space:]]*$' deploy/k8s/*.yaml; then
    say "deploy/k8s holds a Secret (above): move it to deploy/k8s-examples"
    exit 1
fi

say "checking and unit-testing the alert rules"
promtool check rules deploy/prometheus/rescind-rules.yaml
promtool test rules deploy/prometheus/rescind-rules.test.yaml
say "checking the scrape configuration"
promtool check config deploy/prometheus/prometheus.yaml
say "checking the Grafana dashboard's queries"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Each panel query as a recording rule (Grafana's $__rate_interval as 5m): promtool parses them.
python3 - deploy/grafana/*.json > "$work/dashboard-rules.yaml" <<'PY'
import json, sys
print("groups:\n  - name: dashboard\n    rules:")
for path in sys.argv[1:]:
    for panel in json.load(open(path))["panels"]:
        for target in panel.get("targets", []):
            expr = target["expr"].replace("$__rate_interval", "5m")
            print(f"      - record: dashboard:panel_{panel['id']}_{target['refId']}\n        expr: {json.dumps(expr)}")
PY
promtool check rules "$work/dashboard-rules.yaml"
say "passed"
