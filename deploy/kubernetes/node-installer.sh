#!/bin/bash
# Put haven on a Kubernetes node and register its runtime handlers with
# the node's containerd, or take all of it away again.  The node
# installer DaemonSet (haven-node-installer.yaml) runs `run`: install,
# label the node, wait; on SIGTERM (the pod deleted, the DaemonSet
# removed) unlabel, uninstall, exit.
#
#   node-installer.sh install | uninstall | run
#
# The node's root filesystem is seen at HOST_ROOT (the DaemonSet mounts
# the node's / there).  install:
#   1. copies haven-runc, the `haven` name (a link to it) and the shipped
#      policies from HAVEN_PAYLOAD (in the image) to HAVEN_DIR/bin on the
#      node (policies in HAVEN_DIR/bin/policies, where haven-runc looks
#      for policy names next to itself), each file replaced by a rename:
#      a haven-runc that runs keeps its old file;
#   2. runs the node's copy, chrooted into HOST_ROOT (so the paths it
#      writes are the node's and it runs on the node's own libraries),
#      `haven install containerd --config CONTAINERD_CONFIG --name
#      haven-POLICY --policy POLICY --handler-dir HAVEN_DIR/handlers` for
#      each of HAVEN_POLICIES;
#   3. when the configuration changed, restarts containerd (HAVEN_RESTART,
#      a shell command; the default enters the node's pid 1 namespaces
#      and runs systemctl; pods that run keep running);
#   4. labels the node HAVEN_NODE_LABEL=ready through the API server
#      (NODE_NAME, the pod's service account), so that the RuntimeClasses'
#      node selector sends pods only to nodes where the handlers exist.
# uninstall does it backwards: unlabel, `haven uninstall containerd` per
# policy (the configuration comes back byte for byte), restart when it
# changed, remove the files it put there.
#
# Environment (defaults): HOST_ROOT (/host), HAVEN_DIR (/opt/haven),
# HAVEN_PAYLOAD (/opt/haven-installer), CONTAINERD_CONFIG
# (/etc/containerd/config.toml, the node's path), HAVEN_POLICIES (every
# policy in the payload), HAVEN_RESTART (see above), NODE_NAME (unset: no
# label), HAVEN_NODE_LABEL (haven.run/runtime), KUBE_API
# (https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT),
# KUBE_SA_DIR (/var/run/secrets/kubernetes.io/serviceaccount).
set -euo pipefail

HOST_ROOT=${HOST_ROOT:-/host}
HAVEN_DIR=${HAVEN_DIR:-/opt/haven}
HAVEN_PAYLOAD=${HAVEN_PAYLOAD:-/opt/haven-installer}
CONTAINERD_CONFIG=${CONTAINERD_CONFIG:-/etc/containerd/config.toml}
HAVEN_RESTART=${HAVEN_RESTART:-nsenter --target 1 --mount --uts --ipc --net --pid -- systemctl restart containerd}
HAVEN_NODE_LABEL=${HAVEN_NODE_LABEL:-haven.run/runtime}
KUBE_SA_DIR=${KUBE_SA_DIR:-/var/run/secrets/kubernetes.io/serviceaccount}
NODE_NAME=${NODE_NAME:-}

say() { printf 'haven-node-installer: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

# The policies the payload ships, unless HAVEN_POLICIES names some.
policies() {
  if [ -n "${HAVEN_POLICIES:-}" ]; then
    echo "$HAVEN_POLICIES"
  else
    local p
    for p in "$HAVEN_PAYLOAD"/policies/*.yaml; do basename "$p" .yaml; done
  fi
}

# Paths are given as the node sees them: absolute, plain (no "..", no
# ":" that would split a wrapper's words or a PATH).
check_node_path() {
  case $2 in
    /*) ;;
    *) die "$1 $2: an absolute path on the node, please" ;;
  esac
  case $2 in *..* | *[[:space:]]* | *:*) die "$1 $2: a plain path (no '..', spaces or ':'), please" ;; esac
}

preflight() {
  [ -d "$HOST_ROOT" ] || die "HOST_ROOT $HOST_ROOT is not a directory: mount the node's / there"
  HOST_ROOT=$(cd "$HOST_ROOT" && pwd -P)
  check_node_path HAVEN_DIR "$HAVEN_DIR"
  check_node_path CONTAINERD_CONFIG "$CONTAINERD_CONFIG"
  [ "$HOST_ROOT" != / ] || say "HOST_ROOT is /: installing on this machine itself"
}

# on_node COMMAND...: COMMAND chrooted into the node's root, with a
# plain environment (nothing of this pod's, such as the API server's
# address, reaches haven).
on_node() {
  # A clean environment, but for ASAN_OPTIONS: the tests run a
  # sanitizer build of haven-runc here, whose LeakSanitizer cannot work
  # in the installer's container (the node's /proc is not its pid
  # namespace's) and is turned off through it.
  chroot "$HOST_ROOT" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    ${ASAN_OPTIONS:+"ASAN_OPTIONS=$ASAN_OPTIONS"} "$@"
}

# put SRC DEST MODE: DEST (a path under HOST_ROOT) becomes a copy of
# SRC, by a rename of a new file: a process running the old file keeps
# it, and DEST is never half written.
put() {
  local tmp
  tmp=$(dirname "$2")/.haven-new.$$.$(basename "$2")
  cp -- "$1" "$tmp"
  chmod "$3" "$tmp"
  chown 0:0 "$tmp"
  mv -f -- "$tmp" "$2"
}

config_sum() {
  if [ -f "$HOST_ROOT$CONTAINERD_CONFIG" ]; then
    sha256sum < "$HOST_ROOT$CONTAINERD_CONFIG"
  else
    echo none
  fi
}

restart_containerd() {
  say "containerd's configuration changed: $HAVEN_RESTART"
  sh -c "$HAVEN_RESTART" || die "restarting containerd failed ($HAVEN_RESTART)"
}

# label_node VALUE-JSON: a merge patch of the node's label (a string, or
# null to remove it), with the pod's service-account token.
label_node() {
  local value=$1 api=${KUBE_API:-}
  if [ -z "$NODE_NAME" ]; then
    say "NODE_NAME is not set: the node's label is left alone"
    return 0
  fi
  if [ -z "$api" ]; then
    [ -n "${KUBERNETES_SERVICE_HOST:-}" ] || die "no API server: KUBE_API and KUBERNETES_SERVICE_HOST are unset"
    api=https://$KUBERNETES_SERVICE_HOST:${KUBERNETES_SERVICE_PORT:-443}
  fi
  local body out
  body=$(printf '{"metadata":{"labels":{"%s":%s}}}' "$HAVEN_NODE_LABEL" "$value")
  # The token goes in a header file, not on curl's command line (which
  # every process of the node's pid namespace can read).
  local hdr
  hdr=$(mktemp)
  printf 'Authorization: Bearer %s\n' "$(cat "$KUBE_SA_DIR/token")" > "$hdr"
  if ! out=$(curl -sS --fail-with-body --max-time 30 --cacert "$KUBE_SA_DIR/ca.crt" -H "@$hdr" \
    -H 'Content-Type: application/merge-patch+json' -X PATCH --data "$body" \
    "$api/api/v1/nodes/$NODE_NAME" 2>&1); then
    rm -f "$hdr"
    die "labelling node $NODE_NAME ($HAVEN_NODE_LABEL=$value) failed: $(head -c 400 <<< "$out")"
  fi
  rm -f "$hdr"
  say "node $NODE_NAME: label $HAVEN_NODE_LABEL set to $value"
}

install() {
  preflight
  [ -x "$HAVEN_PAYLOAD/bin/haven-runc" ] || die "no $HAVEN_PAYLOAD/bin/haven-runc in this image"
  # A node whose containerd reads another file (k3s, a distribution's
  # own path) must be told so: writing a file containerd never reads
  # would label the node ready for handlers it does not have.
  [ -f "$HOST_ROOT$CONTAINERD_CONFIG" ] \
    || die "no $CONTAINERD_CONFIG on the node: set CONTAINERD_CONFIG to the file the node's containerd reads"
  local bin=$HOST_ROOT$HAVEN_DIR/bin p
  mkdir -p "$bin/policies"
  chmod 755 "$HOST_ROOT$HAVEN_DIR" "$bin" "$bin/policies"
  put "$HAVEN_PAYLOAD/bin/haven-runc" "$bin/haven-runc" 755
  ln -sfn haven-runc "$bin/.haven-new.$$"
  mv -fT "$bin/.haven-new.$$" "$bin/haven"
  for p in "$HAVEN_PAYLOAD"/policies/*.yaml; do put "$p" "$bin/policies/$(basename "$p")" 644; done
  # The node's libraries must run it (it is linked against Debian 12's):
  # refuse here rather than let every pod of the handler fail.
  local v
  v=$(on_node "$HAVEN_DIR/bin/haven-runc" --version 2>&1) \
    || die "haven-runc does not run on this node: $v"
  say "on the node: $(head -1 <<< "$v")"
  local before
  before=$(config_sum)
  for p in $(policies); do
    on_node "$HAVEN_DIR/bin/haven" install containerd --config "$CONTAINERD_CONFIG" --name "haven-$p" \
      --policy "$p" --runtime "$HAVEN_DIR/bin/haven-runc" --handler-dir "$HAVEN_DIR/handlers" >&2 \
      || die "haven install containerd --name haven-$p failed"
  done
  [ "$(config_sum)" = "$before" ] || restart_containerd
  label_node '"ready"'
}

uninstall() {
  preflight
  label_node null
  local bin=$HOST_ROOT$HAVEN_DIR/bin p before
  if [ -x "$bin/haven-runc" ]; then
    before=$(config_sum)
    for p in $(policies); do
      on_node "$HAVEN_DIR/bin/haven" uninstall containerd --config "$CONTAINERD_CONFIG" --name "haven-$p" \
        --handler-dir "$HAVEN_DIR/handlers" >&2 \
        || die "haven uninstall containerd --name haven-$p failed"
    done
    [ "$(config_sum)" = "$before" ] || restart_containerd
  else
    say "no $HAVEN_DIR/bin/haven-runc on the node: no handler to remove"
  fi
  # The files it put there; directories only when empty (someone else's
  # file in them stays, and so do they).
  for p in "$HAVEN_PAYLOAD"/policies/*.yaml; do rm -f "$bin/policies/$(basename "$p")"; done
  rm -f "$bin/haven" "$bin/haven-runc"
  rmdir "$bin/policies" "$bin" "$HOST_ROOT$HAVEN_DIR/handlers" "$HOST_ROOT$HAVEN_DIR" 2> /dev/null || true
  say "uninstalled"
}

case ${1:-} in
  install) install ;;
  uninstall) uninstall ;;
  run)
    install
    # Removed (pod deleted, DaemonSet deleted or updated): undo it all.
    # SIGTERM interrupts `wait`, not a foreground sleep.
    sleep infinity &
    sleeper=$!
    trap 'kill "$sleeper" 2> /dev/null; say "stopping: uninstalling"; uninstall; exit 0' TERM INT
    wait "$sleeper"
    ;;
  *)
    sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
