# Helpers of the service tests (sourced by run.sh and by each test's
# process).  Each test starts its own `haven serve` on a socket in its
# directory (start_service), talks to it with curl (api), and checks that
# what a sandbox made is gone after it (sandbox_gone).
source "$here/../lib/assert.sh"

RUNTIME=${RUNTIME:-$here/../../haven-runc}
HAVEN=${HAVEN:-$(dirname "$RUNTIME")/haven}
if [ -z "${WORK:-}" ]; then
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/h-service-tests.XXXXXX")
  chmod 0755 "$WORK"
  export WORK
fi
# What the suite starts carries this (tests/lib/harness.sh: suite_owns).
export HAVEN_TEST_SUITE=${HAVEN_TEST_SUITE:-service-$$}

# between_tests DIR: a test must leave no service running.
between_tests() {
  local left
  left=$(suite_processes "$WORK" | grep -v "^$$ ")
  [ -z "$left" ] || { echo "left running: $left" >> "$1/.fail"; }
}

# start_service [ARGS...]: haven serve on $PWD/run/haven.sock (SOCK),
# pool off unless ARGS ask; its log in $PWD/serve.log; stopped (SIGTERM)
# when the test ends.
start_service() {
  SOCK=$PWD/run/haven.sock
  SVC_DIR=$PWD/run
  "$HAVEN" serve --socket "$SOCK" --pool-size 0 "$@" 2>> "$PWD/serve.log" &
  SVC_PID=$!
  defer "stop_service"
  local i
  for i in $(seq 100); do
    curl -sf --unix-socket "$SOCK" http://haven/v1/version > /dev/null 2>&1 && return 0
    kill -0 "$SVC_PID" 2> /dev/null || fail "haven serve exited: $(tail -3 "$PWD/serve.log")"
    sleep 0.05
  done
  fail "haven serve did not answer on $SOCK: $(tail -3 "$PWD/serve.log")"
}

# stop_service: SIGTERM, and it must exit 0 within 20 s.
stop_service() {
  [ -n "${SVC_PID:-}" ] || return 0
  kill -TERM "$SVC_PID" 2> /dev/null
  local i rc
  for i in $(seq 200); do kill -0 "$SVC_PID" 2> /dev/null || break; sleep 0.1; done
  kill -KILL "$SVC_PID" 2> /dev/null
  wait "$SVC_PID"
  rc=$?
  SVC_PID=
  return $rc
}

# api METHOD PATH [BODY]: CODE (the HTTP status) and BODY (the answer).
api() {
  local method=$1 path=$2
  shift 2
  local args=(-sS --unix-socket "$SOCK" -X "$method" -o "$PWD/answer" -w '%{http_code}' "http://haven$path")
  [ $# -gt 0 ] && args+=(-H 'Content-Type: application/json' --data-binary "$1")
  CODE=$(curl "${args[@]}" 2> "$PWD/curl.err")
  BODY=$(cat "$PWD/answer" 2> /dev/null)
}

# create POLICY [EXTRA-JSON-MEMBERS]: a sandbox; ID is its id.
create() {
  api POST /v1/sandboxes "{\"policy\":\"$1\"${2:+,$2}}"
  assert_eq 201 "$CODE" "create $1: $BODY"
  ID=$(jq -r .id <<< "$BODY")
  WS=$(jq -r .workspace <<< "$BODY")
}

# run_in ID JSON: POST .../run; EXIT, OUT, ERR from the answer.
run_in() {
  api POST "/v1/sandboxes/$1/run" "$2"
  EXIT=$(jq -r .exit_code <<< "$BODY" 2> /dev/null)
  OUT=$(jq -r .stdout <<< "$BODY" 2> /dev/null)
  ERR=$(jq -r .stderr <<< "$BODY" 2> /dev/null)
}

# sandbox_gone ID: no process, cgroup, mount, state directory or
# workspace of the sandbox is left.
sandbox_gone() {
  local id=$1 i
  for i in $(seq 50); do
    grep -ls "$id" /proc/[0-9]*/cgroup > /dev/null 2>&1 || break
    sleep 0.1
  done
  grep -ls "$id" /proc/[0-9]*/cgroup 2> /dev/null | head -1 | grep -q . && fail "$id: processes left in its cgroup"
  [ -z "$(find /sys/fs/cgroup -maxdepth 5 -name "*$id*" 2> /dev/null | head -1)" ] || fail "$id: cgroup left"
  ! grep -q "$id" /proc/self/mountinfo || fail "$id: mount left"
  [ ! -e "/run/haven/$id" ] || fail "$id: state directory /run/haven/$id left"
  [ ! -e "$SVC_DIR/workspaces/$id" ] || fail "$id: workspace left"
}
