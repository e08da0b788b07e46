#!/usr/bin/env bash
# Checks deploy/ without a cluster or a container engine, and exits non-zero on any failure:
#   - every manifest in deploy/k8s and deploy/k8s-examples validates, strictly (an unknown field
#     fails), against the schemas of Kubernetes $RESCIND_K8S_VERSION (kubernetes-validate, PyPI);
#   - `kubectl apply -f deploy/k8s` would apply no Secret (they come from files: k8s-examples).
# Installs what is missing, once: kubernetes-validate (pinned) into .stack/deploy-venv. Run
# again, it installs nothing and needs no network.
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
say "validating deploy/k8s and deploy/k8s-examples against Kubernetes $RESCIND_K8S_VERSION"
"$venv/bin/kubernetes-validate" --strict --quiet -k "$RESCIND_K8S_VERSION" deploy/k8s/*.yaml deploy/k8s-examples/*.yaml

say "checking that deploy/k8s applies no Secret"
if grep -lE '^kind:[[:space:]]*Secret[[:space:]]*$' deploy/k8s/*.yaml; then
    say "deploy/k8s holds a Secret (above): move it to deploy/k8s-examples"
    exit 1
fi

say "passed"
