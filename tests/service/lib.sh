# Helpers of the service tests (sourced by run.sh and by each test's
# process).  Each test starts its own `haven serve` on a socket in its
# directory (start_service), talks to it with curl (api), and checks that
# what a sandbox made is gone after it (sandbox_gone).
source "$here/../lib/assert.sh"
source "$here/../lib/egress_world.sh"

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
  # SVC_NETNS: a network namespace to run it in (ip netns exec execs
  # haven: SVC_PID is the service all the same).
  ${SVC_NETNS:+ip netns exec "$SVC_NETNS"} "$HAVEN" serve --socket "$SOCK" --pool-size 0 "$@" 2>> "$PWD/serve.log" &
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

# check_create_maker_killed POINT POLICY: with a service started under
# HAVEN_TEST_KILL_AT=POINT, a create of POLICY answers 500 within 10 s
# naming the maker's death, nothing of that sandbox is left (the
# service's children: pasta, init and the monitor reparented; its state,
# bundle, workspace, cgroup, mounts), and the service still answers;
# then stops it.
check_create_maker_killed() {
  local point=$1 policy=$2 id left i
  rm -f "$PWD/answer"
  CODE=$(curl -sS -m 10 --unix-socket "$SOCK" -X POST -o "$PWD/answer" -w '%{http_code}' \
    -H 'Content-Type: application/json' --data-binary "{\"policy\":\"$policy\",\"pool\":false}" \
    http://haven/v1/sandboxes 2> "$PWD/curl.err")
  BODY=$(cat "$PWD/answer" 2> /dev/null)
  # The service's failure, not the request's.
  [ "$CODE" = 500 ] || fail "$point: create answered '$CODE' ($(cat "$PWD/curl.err")): $BODY"
  assert_contains "$BODY" "maker killed by signal 9"
  id=$(sed -n 's/.*sandbox \([^ ]*\) ([^)]*) not made: .*/\1/p' serve.log | tail -1)
  [ -n "$id" ] || fail "$point: the log names no sandbox not made: $(tail -3 serve.log)"
  for i in $(seq 50); do
    left=$(ps --ppid "$SVC_PID" -o pid=,stat=,args= | awk '$2 !~ /^Z/')
    [ -z "$left" ] && break
    sleep 0.1
  done
  [ -z "$left" ] || fail "$point: processes of the dead maker's sandbox left: $left"
  [ ! -e "/run/haven/$id" ] || fail "$point: state directory /run/haven/$id left"
  [ -z "$(ls -d /run/haven-sandbox-*"$id"* 2> /dev/null)" ] || fail "$point: bundle left: $(ls -d /run/haven-sandbox-*"$id"*)"
  [ -z "$(ls "$SVC_DIR/.workspaces" 2> /dev/null)" ] || fail "$point: workspace left: $(ls "$SVC_DIR/.workspaces")"
  [ -z "$(find /sys/fs/cgroup -maxdepth 5 -name "*$id*" 2> /dev/null | head -1)" ] || fail "$point: cgroup left"
  ! grep -q "$id" /proc/self/mountinfo || fail "$point: mount left"
  api GET /v1/version
  assert_eq 200 "$CODE" "$point: the service after: $BODY"
  stop_service
  rm -f serve.log
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
  # A sanitizer build's report (a leak at exit, a use after free) fails
  # the test, and so does any status but 0 after SIGTERM.
  ! grep -q "ERROR: .*Sanitizer" "$PWD/serve.log" 2> /dev/null \
    || fail "haven serve: $(grep -m1 -A3 "ERROR: .*Sanitizer" "$PWD/serve.log" | tr '\n' ' ')"
  [ $rc = 0 ] || fail "haven serve exited $rc after SIGTERM: $(tail -2 "$PWD/serve.log" | tr '\n' ' ')"
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

# strict_json FILE: FILE is JSON in valid UTF-8 (jq replaces bad bytes
# on input, so it cannot tell).
strict_json() {
  python3 -c 'import json, sys; json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))' "$1" 2> /dev/null
}

# create POLICY [EXTRA-JSON-MEMBERS]: a sandbox; ID is its id.
create() {
  api POST /v1/sandboxes "{\"policy\":\"$1\"${2:+,$2}}"
  assert_eq 201 "$CODE" "create $1: $BODY"
  ID=$(jq -r .id <<< "$BODY")
  WS=$(jq -r .workspace <<< "$BODY")
  note_sandbox "$ID"
}

# note_sandbox ID: remember its pid namespace and init (a sandbox
# without limits has no cgroup of its own: its processes are those of its
# pid namespace).
note_sandbox() {
  local pid
  pid=$(jq -r .pid "/run/haven/$1/state.json" 2> /dev/null)
  [ -n "$pid" ] && [ "$pid" != null ] || return 0
  echo "$(readlink "/proc/$pid/ns/pid") $pid $(start_time "$pid")" > "$PWD/ns.$1"
}

start_time() { awk '{print $22}' "/proc/$1/stat" 2> /dev/null; }

# sandbox_pids ID: the processes of a sandbox noted by note_sandbox.  A
# namespace's number is reused once it is gone: one whose init is
# another process is someone else's.
sandbox_pids() {
  local ns init start p pids=() other=0
  read -r ns init start < "$PWD/ns.$1" 2> /dev/null || return 0
  [ -n "$ns" ] || return 0
  # One stat for all of /proc (a readlink per process is slow).
  for p in $(stat -c '%n %N' /proc/[0-9]*/ns/pid 2> /dev/null | grep -F "'$ns'" | cut -d/ -f3); do
    pids+=("$p")
    if [ "$(awk '/^NSpid:/ {print $NF}' "/proc/$p/status" 2> /dev/null)" = 1 ]; then
      [ "$p" = "$init" ] && [ "$(start_time "$p")" = "$start" ] || other=1
    fi
  done
  [ $other = 1 ] || printf '%s\n' "${pids[@]}" | grep .
  return 0
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
  [ -s "$PWD/ns.$id" ] || fail "$id: its pid namespace was not noted"
  for i in $(seq 50); do
    [ -z "$(sandbox_pids "$id")" ] && break
    sleep 0.1
  done
  [ -z "$(sandbox_pids "$id")" ] || fail "$id: processes left: $(sandbox_pids "$id" | tr '\n' ' ')"
  [ -z "$(find /sys/fs/cgroup -maxdepth 5 -name "*$id*" 2> /dev/null | head -1)" ] || fail "$id: cgroup left"
  ! grep -q "$id" /proc/self/mountinfo || fail "$id: mount left"
  [ ! -e "/run/haven/$id" ] || fail "$id: state directory /run/haven/$id left"
  [ ! -e "$SVC_DIR/.workspaces/$id" ] || fail "$id: workspace left"
}
