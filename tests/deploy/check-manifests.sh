#!/usr/bin/env bash
# The Kubernetes manifests of deploy/kubernetes, without a cluster:
#   tests/deploy/check-manifests.sh
# 1. manifest_fields: every file parses as YAML, and what ties the
#    manifests to haven holds (check_fields.py: a RuntimeClass per
#    shipped policy with the installer's handler name, label and an
#    overhead; the DaemonSet's privileges, mounts and RBAC; the examples'
#    RuntimeClass, token and Secret).
# 2. manifest_schemas: each object against Kubernetes' own schemas (the
#    npm package kubernetes-models, installed once into a cache), any
#    field the schemas do not have included (validate_schemas.mjs).
# 3. kubectl_dry_run: `kubectl apply --dry-run=client --validate=false -f
#    deploy/kubernetes/` and `-f deploy/kubernetes/examples/`, against a
#    discovery server the test runs on 127.0.0.1 (kube_discovery.py):
#    kubectl needs discovery even for a client-side dry run.  Proves that
#    kubectl reads every document and maps its apiVersion and kind to a
#    resource of the scope its namespace implies, as the discovery
#    documents written in kube_discovery.py list them; the field check is
#    2's (--validate needs the server's OpenAPI document, which no
#    stand-in should invent).
# Prints "ok NAME", "not ok NAME: reason" or "skip NAME: reason" and "N
# passed, N failed"; exits 1 if any failed, 77 if all were skipped.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
KUBE_MODELS=(kubernetes-models@5.1.0)
: "${HAVEN_KUBE_MODELS_CACHE:=/var/cache/haven-tests/kube-models}"
work=$(mktemp -d /tmp/hvt-manifests.XXXXXX)
server=
trap '[ -z "$server" ] || kill "$server" 2> /dev/null; rm -rf "$work"' EXIT
passed=0 failed=0 skipped=0
ok() { echo "ok $1"; passed=$((passed + 1)); }
not_ok() { echo "not ok $1: $2"; failed=$((failed + 1)); }
skip() { echo "skip $1: $2"; skipped=$((skipped + 1)); }

if ! python3 -c 'import yaml' 2> /dev/null; then
  skip manifest_fields "python3 with PyYAML is needed (Debian: python3-yaml)"
elif out=$(python3 "$here/check_fields.py" "$src" "$work/objects.json" 2>&1); then
  ok manifest_fields
else
  not_ok manifest_fields "$(grep -m1 FAIL <<< "$out")"
  sed 's/^/    /' <<< "$out"
fi

# kubernetes-models and its validators, once per machine (the only
# download this makes).
need_models() {
  local have
  have=$(jq -r .version "$HAVEN_KUBE_MODELS_CACHE/node_modules/kubernetes-models/package.json" 2> /dev/null)
  [ "$have" = "${KUBE_MODELS[0]##*@}" ] && return 0
  command -v npm > /dev/null || { MODELS_MISSING="npm is not installed"; return 1; }
  mkdir -p "$HAVEN_KUBE_MODELS_CACHE"
  timeout 600 npm install --prefix "$HAVEN_KUBE_MODELS_CACHE" --no-fund --no-audit --loglevel=error \
    "${KUBE_MODELS[@]}" > "$work/npm.log" 2>&1 && return 0
  MODELS_MISSING="npm install ${KUBE_MODELS[*]}: $(tail -2 "$work/npm.log" | tr '\n' ' ')"
  return 1
}
if [ ! -s "$work/objects.json" ]; then
  skip manifest_schemas "no objects read (manifest_fields)"
elif ! command -v node > /dev/null || ! command -v jq > /dev/null; then
  skip manifest_schemas "node and jq are needed"
elif ! need_models; then
  skip manifest_schemas "$MODELS_MISSING"
else
  # The script is run from the cache, where its imports resolve.
  cp "$here/validate_schemas.mjs" "$HAVEN_KUBE_MODELS_CACHE/.validate_schemas.$$.mjs"
  if out=$(cd "$HAVEN_KUBE_MODELS_CACHE" && node ".validate_schemas.$$.mjs" "$work/objects.json" 2>&1); then
    ok manifest_schemas
  else
    not_ok manifest_schemas "$(head -1 <<< "$out")"
    sed 's/^/    /' <<< "$out"
  fi
  rm -f "$HAVEN_KUBE_MODELS_CACHE/.validate_schemas.$$.mjs"
fi

if ! command -v kubectl > /dev/null; then
  skip kubectl_dry_run "kubectl is not installed"
else
  python3 "$here/kube_discovery.py" "$work/port" 2> "$work/discovery.log" &
  server=$!
  for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
  cat > "$work/kubeconfig" << EOF2
apiVersion: v1
kind: Config
clusters: [{name: discovery, cluster: {server: "http://127.0.0.1:$(cat "$work/port")"}}]
contexts: [{name: discovery, context: {cluster: discovery, user: none, namespace: default}}]
users: [{name: none, user: {}}]
current-context: discovery
EOF2
  # Each object of each file is named in kubectl's output: as many
  # "created (dry run)" lines as objects, and kubectl's status 0.
  reason=
  for d in "$src/deploy/kubernetes" "$src/deploy/kubernetes/examples"; do
    want=$(python3 -c 'import sys, yaml; print(sum(1 for f in sys.argv[1:] for x in yaml.safe_load_all(open(f)) if x))' "$d"/*.yaml)
    if ! out=$(KUBECONFIG=$work/kubeconfig timeout 60 kubectl apply --dry-run=client --validate=false -f "$d" 2>&1); then
      reason="kubectl apply -f ${d#"$src"/}: $(grep -v '^[a-z0-9.]*/[a-z0-9.-]* created (dry run)$' <<< "$out" | head -3 | tr '\n' ' ')"
      break
    fi
    got=$(grep -c ' created (dry run)$' <<< "$out")
    [ "$got" = "$want" ] || { reason="kubectl apply -f ${d#"$src"/}: $got objects created (dry run), $want in the files"; break; }
  done
  if [ -z "$reason" ]; then ok kubectl_dry_run; else not_ok kubectl_dry_run "$reason"; fi
fi

echo "$passed passed, $failed failed"
[ $failed = 0 ] || exit 1
[ $passed != 0 ] || exit 77
