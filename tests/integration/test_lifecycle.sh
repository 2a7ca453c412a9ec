# create/start/state/kill/delete, run, list, ps, pause/resume, CLI basics.

test_lifecycle_create_start_kill_delete() {
  args "$B" sleep 100
  local id out pid
  id=$(new_id life)
  # Not $(...): init inherits stdout and would hold the pipe open.
  rt create --bundle "$B" "$id" > create.out
  assert_eq "" "$(cat create.out)" "create stdout"
  assert_eq created "$(status_of "$id")"
  pid=$(rt state "$id" | jq .pid)
  [[ "$pid" =~ ^[0-9]+$ ]] && [ "$pid" -gt 0 ] && kill -0 "$pid" || fail "init pid '$pid' not alive"
  rt start "$id"
  assert_eq running "$(status_of "$id")"
  assert_eq "sleep 100" "$(tr '\0' ' ' < /proc/$pid/cmdline | sed 's/ $//')" "init's command line after start"
  rt kill "$id" KILL
  wait_status "$id" stopped
  assert_eq 0 "$(rt state "$id" | jq .pid)" "pid of stopped container"
  rt delete "$id"
  out=$(rt state "$id" 2>&1) && fail "state of deleted container succeeded"
  assert_contains "$out" "container does not exist"
}

test_run_exit_code() {
  args "$B" sh -c 'exit 42'
  run_ctr "$B"
  assert_eq 42 "$RC" "exit code"
}

test_run_killed_by_signal() {
  # (init ignores SIGKILL sent from inside its own pid namespace, so the
  # signal comes from the runtime)
  args "$B" sleep 100
  local id rc
  id=$(new_id sig)
  timeout 20 "$RUNTIME" --root "$STATE_ROOT" run --bundle "$B" "$id" > /dev/null &
  local runner=$!
  wait_status "$id" running
  rt kill "$id" KILL
  wait $runner
  rc=$?
  assert_eq 137 "$rc" "exit code of a SIGKILLed init"
  rt state "$id" 2>/dev/null && fail "run did not delete the container"
  return 0
}

test_run_forwards_signals() {
  args "$B" sh -c 'trap "exit 9" TERM; while true; do sleep 0.1; done'
  local id rc
  id=$(new_id fwd)
  timeout 20 "$RUNTIME" --root "$STATE_ROOT" run --bundle "$B" "$id" > /dev/null &
  local runner=$!
  wait_status "$id" running
  sleep 0.3
  kill -TERM $runner
  wait $runner
  rc=$?
  assert_eq 9 "$rc" "exit code after forwarded SIGTERM"
}

test_run_output_and_detach() {
  args "$B" echo hello
  run_ctr "$B"
  assert_eq hello "$OUT"
  args "$B" sleep 100
  local id
  id=$(new_id det)
  rt run --detach --bundle "$B" "$id"
  assert_eq running "$(status_of "$id")"
}

test_kill_by_name_and_number() {
  # (the namespace's init gets only the signals it has a handler for)
  args "$B" sh -c 'trap "echo got-TERM > /tmp/sig; exit 0" TERM; while true; do sleep 0.1; done'
  cfg "$B" '.root.readonly = false'
  local id
  for sig in TERM 15 SIGTERM; do
    id=$(new_id kill)
    rt run -d --bundle "$B" "$id" || fail "run -d failed"
    rm -f "$B/rootfs/tmp/sig"
    rt kill "$id" "$sig" || fail "kill $sig failed"
    wait_status "$id" stopped
    assert_eq got-TERM "$(cat "$B/rootfs/tmp/sig")" "signal received for kill $sig"
    rt delete "$id"
  done
  args "$B" sleep 100
  id=$(new_id kill)
  rt run -d --bundle "$B" "$id"
  local out
  out=$(rt kill "$id" NOSUCHSIG 2>&1) && fail "bad signal accepted"
  assert_contains "$out" "$(msg "invalid signal" 'unknown signal \"NOSUCHSIG\"')"
}

test_kill_stopped_container_fails() {
  args "$B" true
  local id out
  id=$(new_id ks)
  rt run -d --bundle "$B" "$id"
  wait_status "$id" stopped
  out=$(rt kill "$id" 9 2>&1) && fail "kill of a stopped container succeeded"
  assert_contains "$out" "$(msg "container not running" "container not running")"
}

test_delete_running_needs_force() {
  args "$B" sleep 100
  local id out
  id=$(new_id del)
  rt run -d --bundle "$B" "$id"
  out=$(rt delete "$id" 2>&1) && fail "delete of running container succeeded"
  assert_contains "$out" "$(msg "not stopped" "cannot delete container $id that is not stopped")"
  rt delete --force "$id"
  rt state "$id" 2>/dev/null && fail "container still exists"
  return 0
}

test_delete_created_container() {
  args "$B" sleep 100
  local id pid
  id=$(new_id delc)
  rt create --bundle "$B" "$id"
  pid=$(rt state "$id" | jq .pid)
  if is_runc; then
    # runc deletes (kills) a created container without --force.
    rt delete "$id" || fail "runc delete of a created container failed"
  else
    # runtime-spec: only stopped containers are deleted without --force.
    rt delete "$id" 2>/dev/null && fail "delete of a created container without --force succeeded"
    rt delete --force "$id"
  fi
  rt state "$id" >/dev/null 2>&1 && fail "container still exists after delete"
  for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  kill -0 "$pid" 2>/dev/null && fail "init of deleted container still alive"
  return 0
}

test_list_and_ps() {
  args "$B" sleep 100
  local id pid out
  id=$(new_id list)
  rt run -d --bundle "$B" "$id"
  out=$(rt list)
  assert_contains "$out" "ID"
  assert_contains "$out" "$id"
  assert_eq "$id" "$(rt list -q)"
  assert_eq running "$(rt list --format json | jq -r '.[0].status')"
  pid=$(rt state "$id" | jq .pid)
  assert_eq "[$pid]" "$(rt ps --format json "$id" | jq -c .)"
  out=$(rt ps "$id")
  assert_contains "$out" "sleep 100"
}

test_pause_resume() {
  args "$B" sleep 100
  local id
  id=$(new_id pause)
  rt run -d --bundle "$B" "$id"
  rt pause "$id"
  assert_eq paused "$(status_of "$id")"
  rt resume "$id"
  assert_eq running "$(status_of "$id")"
}

test_pid_file() {
  args "$B" sleep 100
  local id
  id=$(new_id pidf)
  rt create --bundle "$B" --pid-file "$PWD/pidfile" "$id"
  assert_eq "$(rt state "$id" | jq .pid)" "$(cat pidfile)" "pid file"
}

test_spec_features_version() {
  local d out
  d=$(mktemp -d)
  rt spec --bundle "$d"
  assert_eq true "$(jq '.root.readonly' "$d/config.json")"
  out=$(rt spec --bundle "$d" 2>&1) && fail "spec overwrote config.json"
  rt spec --rootless --bundle "$d/r" 2>/dev/null || { mkdir -p "$d/r"; rt spec --rootless --bundle "$d/r"; }
  jq -e '.linux.namespaces | map(.type) | index("user")' "$d/r/config.json" >/dev/null || fail "rootless spec lacks user ns"
  rm -rf "$d"
  rt features | jq -e '.ociVersionMin and .ociVersionMax and (.linux.seccomp.actions | index("SCMP_ACT_ERRNO"))' >/dev/null \
    || fail "features JSON incomplete"
  out=$(rt --version)
  [[ "$out" =~ ^[a-z-]+\ version\  ]] || fail "version line: $out"
  assert_contains "$out" "commit:"
  assert_contains "$out" "spec:"
}

test_global_flags_in_groups_and_json_log() {
  local id log out
  id=$(new_id log)
  log=$PWD/log.json
  cfg "$B" '.root.path = "does-not-exist"'
  out=$("$RUNTIME" --root "$STATE_ROOT" --log "$log" --log-format json --debug create --bundle "$B" "$id" 2>&1) \
    && fail "create with missing rootfs succeeded"
  jq -es 'map(select(.level == "error")) | last | .msg and .time' "$log" >/dev/null || fail "no JSON error line in $(cat "$log")"
  assert_contains "$(jq -rs 'map(select(.level == "error")) | last | .msg' "$log")" "does-not-exist"
  rt state "$id" 2>/dev/null && fail "failed create left a container"
  return 0
}

test_kill_all() {
  args "$B" sh -c 'sleep 100 & sleep 100 & wait'
  local id pids
  id=$(new_id killall)
  rt run -d --bundle "$B" "$id"
  for i in $(seq 50); do [ "$(rt ps --format json "$id" | jq length)" = 3 ] && break; sleep 0.05; done
  pids=$(rt ps --format json "$id" | jq -r '.[]')
  rt kill --all "$id" KILL
  wait_status "$id" stopped
  for p in $pids; do
    for i in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
    kill -0 "$p" 2>/dev/null && fail "process $p survived kill --all"
  done
  return 0
}

# runtime-tools' killsig under haven-runc failed about one run in three:
# `kill` returns once the signal is sent, and a `delete` right after it met
# an init still exiting (its namespace's other processes to reap) and said
# "not stopped: running".  A killed init is stopped for delete: 30 cycles
# of SIGKILL then delete at once, none may fail (on 2e9dd27: 2 of 30).
test_kill_then_delete_at_once() {
  # runc refuses such a delete too (9 of 30 measured here): haven's promise.
  skip_on_runc "runc refuses a delete right after kill KILL while init exits"
  args "$B" sh -c 'for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do sleep 100 & done; touch /tmp/ready; wait'
  cfg "$B" '.root.readonly = false'
  local i j id out fails=0 msgs=""
  for i in $(seq 30); do
    id=$(new_id killdel)
    rm -f "$B/rootfs/tmp/ready"
    rt create --bundle "$B" "$id" > /dev/null || fail "create $i"
    rt start "$id" || fail "start $i"
    for j in $(seq 100); do [ -e "$B/rootfs/tmp/ready" ] && break; sleep 0.02; done
    "$RUNTIME" --root "$STATE_ROOT" kill "$id" KILL || fail "kill $i"
    if ! out=$("$RUNTIME" --root "$STATE_ROOT" delete "$id" 2>&1); then
      fails=$((fails + 1))
      msgs="$msgs; cycle $i: $out"
      rt delete --force "$id" > /dev/null 2>&1
    fi
  done
  [ "$fails" = 0 ] || fail "$fails of 30 deletes right after kill KILL failed$msgs"
}

# The other side of it: an init that caught the signal is still running,
# and delete without --force refuses it (runtime-spec), however long it
# would have to wait.
test_delete_refuses_init_that_caught_signal() {
  args "$B" sh -c 'trap "" TERM; touch /tmp/ready; while true; do sleep 1; done'
  cfg "$B" '.root.readonly = false'
  local id out j
  id=$(new_id catch)
  rt create --bundle "$B" "$id" > /dev/null || fail create
  rt start "$id" || fail start
  for j in $(seq 100); do [ -e "$B/rootfs/tmp/ready" ] && break; sleep 0.02; done
  rt kill "$id" TERM || fail kill
  out=$(rt delete "$id" 2>&1) && fail "delete of a running container succeeded"
  assert_contains "$out" "$(msg "that is not stopped: running" "cannot delete container $id that is not stopped: running")"
  assert_eq running "$(status_of "$id")"
  rt delete --force "$id"
}
