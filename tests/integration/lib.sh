# Shared helpers for the integration tests (sourced by run.sh, in the
# harness and again in each test's own process).  fail, skip, defer and
# the assertions come from tests/lib/assert.sh.
# Every runtime call goes through rt(), which uses a private state root so
# tests never see containers of another runtime or run.

source "$(dirname "${BASH_SOURCE[0]}")/../lib/assert.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/state_name.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/test_ca.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lib/egress_world.sh"

: "${RUNTIME:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/haven-runc}"
# Set once by the harness and inherited by the per-test processes.
: "${WORK:=$(mktemp -d /tmp/hvt-it.XXXXXX)}"
# Containers in user namespaces run as other host uids: they must be able
# to reach their bundles.
chmod 755 "$WORK"
: "${STATE_ROOT:=$WORK/state}"
: "${ROOTFS_CACHE:=$WORK/rootfs}"
: "${CTR_PREFIX:=hvt-$$}"
# This run of the suite, in the environment of everything it starts: the
# last check (nothing_left, tests/lib/harness.sh) finds what is left by it.
: "${HAVEN_TEST_SUITE:=$$.$EPOCHREALTIME}"
export HAVEN_TEST_SUITE
# haven run keeps copy-on-write home state per project under
# $XDG_STATE_HOME/haven/projects: in the work directory, not in the home
# of whoever runs the tests.
: "${XDG_STATE_HOME:=$WORK/xdg-state}"
export RUNTIME WORK STATE_ROOT ROOTFS_CACHE CTR_PREFIX XDG_STATE_HOME

# world_readable_copy BINARY: path of a copy of BINARY that any uid can
# run.  The checkout may sit under a directory only root can enter (CI
# clones into one), so tests that run as an ordinary user use copies in
# $WORK, with the shipped policies beside them as in the build tree.
world_readable_copy() {
  local bin=$WORK/bin
  mkdir -p "$bin"
  chmod 755 "$bin"
  if [ ! -x "$bin/$(basename "$1")" ]; then
    cp "$1" "$bin/" || fail "cannot copy $1 to $bin"
    chmod 755 "$bin/$(basename "$1")"
  fi
  if [ ! -d "$bin/policies" ] && [ -d "$(dirname "$1")/policies" ]; then
    cp -r "$(dirname "$1")/policies" "$bin/policies" && chmod -R a+rX "$bin/policies"
  fi
  echo "$bin/$(basename "$1")"
}

# Every runtime call is bounded.
rt() { timeout -k 5 30 "$RUNTIME" --root "$STATE_ROOT" "$@"; }

RUNTIME_NAME=$(basename "$RUNTIME")
is_runc() { [ "$RUNTIME_NAME" = runc ]; }

# msg HAVEN-TEXT RUNC-TEXT: the error text to expect from this runtime
# (runc words some errors differently; both are asserted exactly).
msg() { if is_runc; then printf '%s' "$2"; else printf '%s' "$1"; fi; }

build_rootfs_cache() {
  "$(dirname "${BASH_SOURCE[0]}")/../make-rootfs.sh" "$ROOTFS_CACHE"
}

# make_bundle DIR: fresh bundle with a private copy of the rootfs, config
# from the runtime's own `spec`, no terminal, args "true".
make_bundle() {
  local b=$1
  mkdir -p "$b"
  cp -a "$ROOTFS_CACHE" "$b/rootfs"
  rt spec --bundle "$b" || return 1
  cfg "$b" '.process.terminal = false | .process.args = ["true"]'
}

# cfg BUNDLE JQ-FILTER [jq args...]: edit config.json in place.
cfg() {
  local b=$1 f=$2
  shift 2
  jq "$f" "$b/config.json" "$@" > "$b/config.json.tmp" && mv "$b/config.json.tmp" "$b/config.json" \
    || fail "jq edit of config.json failed: $f"
}

# args BUNDLE cmd...: set process.args.
# (jq --args would parse "-c" in the arguments as its own option.)
json_array() { python3 -c 'import json, sys; print(json.dumps(sys.argv[1:]))' "$@"; }
args() {
  local b=$1
  shift
  cfg "$b" '.process.args = $a' --argjson a "$(json_array "$@")"
}

new_id() { echo "$CTR_PREFIX-$1-$RANDOM"; }

# Run a container in the foreground; stdout+stderr to $OUT, status to $RC.
run_ctr() {
  local b=$1 id
  id=$(new_id run)
  OUT=$(timeout -k 5 20 "$RUNTIME" --root "$STATE_ROOT" run --bundle "$b" "$id" 2>&1 </dev/null)
  RC=$?
}

# skip_on_runc REASON: runc lacks the feature under test.
skip_on_runc() { is_runc && skip "$*"; return 0; }

status_of() { rt state "$1" 2>/dev/null | jq -r .status; }

# Wait (bounded) until container $1 reaches status $2.
wait_status() {
  local i
  for i in $(seq 100); do
    [ "$(status_of "$1")" == "$2" ] && return 0
    sleep 0.05
  done
  fail "container $1 did not reach status $2 (is $(status_of "$1"))"
}

# wait_socket PATH: until a listener has bound PATH (bounded).
wait_socket() {
  local i
  for i in $(seq 100); do [ -S "$1" ] && return 0; sleep 0.05; done
  fail "socket $1 never appeared"
}

cleanup_containers() {
  local id
  for id in $(rt list -q 2>/dev/null); do
    rt delete --force "$id" >/dev/null 2>&1
  done
}
