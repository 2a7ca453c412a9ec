# exec in its various forms.

start_sleeper() { # [SECONDS]: how long the container's init sleeps
  args "$B" sleep "${1:-100}"
  ID=$(new_id exec)
  rt run -d --bundle "$B" "$ID"
}

test_exec_args_and_exit_code() {
  start_sleeper
  assert_eq hi "$(rt exec "$ID" echo hi)"
  rt exec "$ID" sh -c 'exit 7'
  assert_eq 7 "$?" "exec exit code"
}

test_exec_env_cwd_user() {
  start_sleeper
  assert_eq bar "$(rt exec --env FOO=bar "$ID" sh -c 'echo $FOO')"
  assert_eq /tmp "$(rt exec --cwd /tmp "$ID" pwd)"
  assert_eq "1000:1000" "$(rt exec --user 1000:1000 "$ID" sh -c 'echo $(id -u):$(id -g)')"
}

test_exec_process_file() {
  start_sleeper
  jq -n '{cwd: "/", args: ["sh", "-c", "echo from-process-file; exit 3"], env: ["PATH=/bin"], user: {uid: 0, gid: 0}}' > proc.json
  local out
  out=$(rt exec --process proc.json "$ID")
  assert_eq 3 "$?" "exit code"
  assert_eq from-process-file "$out"
}

test_exec_detach_pid_file() {
  start_sleeper
  rt exec --detach --pid-file "$PWD/exec.pid" "$ID" sleep 50 || fail "exec --detach failed"
  local pid
  pid=$(cat exec.pid)
  kill -0 "$pid" || fail "detached exec process $pid not running"
  assert_contains "$(tr '\0' ' ' < /proc/$pid/cmdline)" "sleep 50"
  # The exec'd process is in the container's pid namespace and cgroup.
  assert_eq "$(readlink /proc/$(rt state "$ID" | jq .pid)/ns/pid)" "$(readlink /proc/$pid/ns/pid)" "pid namespace"
  assert_contains "$(rt ps --format json "$ID")" "$pid"
}

# Engines exec the way the shim and conmon do (--process --detach
# --pid-file), often several at once.  The pid file always names the
# process: the exec'd process's first message once overtook the report of
# its pid under load, and the pid file said -1.
test_exec_detach_pid_file_under_load() {
  # The sleeps outlast the test however slow the machine (the container's
  # removal at the end kills them): a process that ended before its pid
  # file was checked would fail the test for the wrong reason.
  start_sleeper 900
  jq -n '{cwd: "/", args: ["sleep", "900"], env: ["PATH=/bin"], user: {uid: 0, gid: 0}}' > proc.json
  local i j pid
  for i in $(seq 8); do
    for j in 1 2 3 4 5; do
      rt exec --process proc.json --detach --pid-file "$PWD/pid.$i.$j" "$ID" > "err.$i.$j" 2>&1 &
    done
    wait
  done
  for i in $(seq 8); do
    for j in 1 2 3 4 5; do
      pid=$(cat "pid.$i.$j" 2>/dev/null)
      [[ "$pid" =~ ^[0-9]+$ ]] && [ "$pid" -gt 1 ] || fail "exec $i.$j: pid file holds '$pid' ($(cat "err.$i.$j"))"
      assert_contains "$(tr '\0' ' ' < /proc/$pid/cmdline)" "sleep 900" "process named by pid.$i.$j"
    done
  done
}

test_exec_in_stopped_container_fails() {
  args "$B" true
  local id out
  id=$(new_id exs)
  rt run -d --bundle "$B" "$id"
  wait_status "$id" stopped
  out=$(rt exec "$id" true 2>&1) && fail "exec in stopped container succeeded"
  assert_contains "$out" "$(msg "container not running" "cannot exec in a stopped container")"
}

test_exec_not_found() {
  start_sleeper
  local out
  out=$(rt exec "$ID" no-such-binary 2>&1) && fail "exec of a missing binary succeeded"
  assert_contains "$out" "executable file not found"
}

test_exec_tty_via_console_socket() {
  start_sleeper
  local sock=$PWD/exec.sock
  python3 "$(dirname "${BASH_SOURCE[0]}")/console_receiver.py" "$sock" "$PWD/exec.out" &
  local receiver=$!
  defer "kill $receiver"
  wait_socket "$sock"
  # (runc takes --console-socket only with --detach)
  rt exec --detach --tty --console-socket "$sock" "$ID" sh -c 'tty; sleep 0.2' || fail "exec --tty failed"
  wait $receiver || fail "receiver failed"
  local pts
  pts=$(head -1 exec.out)
  assert_contains "$pts" "pty-master /dev/pts/" "received fd"
  assert_eq "${pts#pty-master }" "$(tr -d '\r' < exec.out | sed -n 2p)" "tty of the exec'd process"
}
