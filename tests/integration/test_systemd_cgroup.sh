# --systemd-cgroup: the container's cgroup is a transient scope created
# through systemd's D-Bus API.  Most tests need systemd as PID 1 on a cgroup
# v2 host (tests/vm gives one); the error test needs a host without it.

# need_systemd_v2: skip unless systemd runs and the host is pure cgroup v2.
need_systemd_v2() {
  [ -d /run/systemd/system ] || skip "systemd is not running"
  [ -f /sys/fs/cgroup/cgroup.controllers ] || skip "not a cgroup v2 host"
  command -v systemctl > /dev/null || skip "no systemctl"
}

# unit_prop UNIT PROPERTY: the property's value as systemctl shows it.
unit_prop() { systemctl show "$1" -p "$2" --value 2>/dev/null; }

# wait_unit_gone UNIT: bounded wait until systemd no longer knows UNIT
# (a stopped transient unit is garbage-collected right after its job).
wait_unit_gone() {
  local i
  for i in $(seq 100); do
    [ "$(unit_prop "$1" LoadState)" = not-found ] && return 0
    sleep 0.1
  done
  fail "unit $1 still $(unit_prop "$1" LoadState)/$(unit_prop "$1" ActiveState) after delete"
}

test_systemd_cgroup_not_running() {
  skip_on_runc "haven-runc's message"
  [ -d /run/systemd/system ] && skip "systemd is running here"
  local id out
  id=$(new_id sdnot)
  cfg "$B" '.linux.cgroupsPath = $p' --arg p "system.slice:haven:$id"
  out=$(rt --systemd-cgroup create --bundle "$B" "$id" 2>&1 < /dev/null) && fail "create succeeded without systemd"
  assert_contains "$out" "--systemd-cgroup: systemd is not running (no /run/systemd/system); use the cgroupfs driver"
  rt state "$id" > /dev/null 2>&1 && fail "a failed create left state behind"
  [ -e "/sys/fs/cgroup/unified/system.slice/haven-$id.scope" ] && fail "a failed create left a cgroup"
  return 0
}

test_systemd_cgroup_scope() {
  need_systemd_v2
  local id unit dir pid out
  id=$(new_id sdscope)
  unit=haven-$id.scope
  dir=/sys/fs/cgroup/system.slice/$unit
  cfg "$B" '.linux.cgroupsPath = $p | .linux.resources = {memory: {limit: 67108864}, pids: {limit: 50}, cpu: {shares: 512, quota: 50000, period: 100000}}' \
    --arg p "system.slice:haven:$id"
  args "$B" sleep 300
  defer "rt delete --force $id; systemctl stop $unit"
  rt --systemd-cgroup run -d --bundle "$B" "$id" > /dev/null || fail "run -d --systemd-cgroup failed"
  pid=$(rt state "$id" | jq .pid)
  assert_eq active "$(unit_prop "$unit" ActiveState)" "ActiveState"
  assert_eq yes "$(unit_prop "$unit" Delegate)" "Delegate"
  assert_eq 67108864 "$(unit_prop "$unit" MemoryMax)" "MemoryMax"
  assert_eq 50 "$(unit_prop "$unit" TasksMax)" "TasksMax"
  assert_eq system.slice "$(unit_prop "$unit" Slice)" "Slice"
  assert_eq "/system.slice/$unit" "$(unit_prop "$unit" ControlGroup)" "ControlGroup"
  grep -qx "$pid" "$dir/cgroup.procs" || fail "init $pid not in $dir/cgroup.procs: $(cat "$dir/cgroup.procs")"
  assert_eq "0::/system.slice/$unit" "$(cat /proc/$pid/cgroup)" "init's /proc/PID/cgroup"
  assert_file 67108864 "$dir" memory.max
  assert_file 50 "$dir" pids.max
  assert_file "50000 100000" "$dir" cpu.max
  # update without the flag: the state recorded that systemd owns the cgroup.
  rt update --memory 128m --pids-limit 60 "$id" || fail "update failed"
  assert_file 134217728 "$dir" memory.max
  assert_file 60 "$dir" pids.max
  assert_eq 134217728 "$(unit_prop "$unit" MemoryMax)" "MemoryMax after update"
  assert_eq 60 "$(unit_prop "$unit" TasksMax)" "TasksMax after update"
  # pause/resume through the freezer of the scope's cgroup.
  rt pause "$id" || fail "pause"
  assert_eq paused "$(status_of "$id")"
  rt resume "$id" || fail "resume"
  assert_eq running "$(status_of "$id")"
  out=$(rt exec "$id" cat /proc/self/cgroup) || fail "exec failed"
  assert_contains "$out" "0::/"
  # delete without the flag too.
  rt delete --force "$id" || fail "delete --force failed"
  wait_unit_gone "$unit"
  [ -e "$dir" ] && fail "$dir left behind"
  kill -0 "$pid" 2>/dev/null && fail "init $pid survived delete"
  return 0
}

test_systemd_cgroup_default_and_nested_slice() {
  need_systemd_v2
  local id dir
  # No cgroupsPath: system.slice:haven:<id>, as runc's default names runc.
  id=$(new_id sddef)
  args "$B" sleep 300
  cfg "$B" 'del(.linux.cgroupsPath)'
  defer "rt delete --force $id"
  rt --systemd-cgroup run -d --bundle "$B" "$id" > /dev/null || fail "run -d without cgroupsPath failed"
  dir=/sys/fs/cgroup/system.slice/haven-$id.scope
  grep -qx "$(rt state "$id" | jq .pid)" "$dir/cgroup.procs" || fail "init not in $dir"
  rt delete --force "$id" || fail "delete failed"
  wait_unit_gone "haven-$id.scope"
  [ -e "$dir" ] && fail "$dir left behind"
  # A dashed slice name nests: haven-test.slice is haven.slice/haven-test.slice.
  id=$(new_id sdnest)
  cfg "$B" '.linux.cgroupsPath = $p' --arg p "haven-test.slice:pfx:$id"
  defer "rt delete --force $id; systemctl stop haven-test.slice"
  rt --systemd-cgroup run -d --bundle "$B" "$id" > /dev/null || fail "run -d in haven-test.slice failed"
  dir=/sys/fs/cgroup/haven.slice/haven-test.slice/pfx-$id.scope
  grep -qx "$(rt state "$id" | jq .pid)" "$dir/cgroup.procs" || fail "init not in $dir"
  assert_eq haven-test.slice "$(unit_prop "pfx-$id.scope" Slice)" "Slice"
  rt delete --force "$id" || fail "delete failed"
  wait_unit_gone "pfx-$id.scope"
  [ -e "$dir" ] && fail "$dir left behind"
  return 0
}

test_systemd_cgroup_exit_then_delete() {
  need_systemd_v2
  local id unit
  id=$(new_id sdexit)
  unit=haven-$id.scope
  cfg "$B" '.linux.cgroupsPath = $p' --arg p "system.slice:haven:$id"
  defer "rt delete --force $id"
  rt --systemd-cgroup run --bundle "$B" "$id" > /dev/null 2>&1 < /dev/null || fail "run (true) failed"
  # run deletes the container itself; the same id again must start a
  # fresh scope (no "unit already exists").
  rt --systemd-cgroup run --bundle "$B" "$id" > /dev/null 2>&1 < /dev/null || fail "second run with the same id failed"
  wait_unit_gone "$unit"
  return 0
}

test_systemd_cgroup_bad_path() {
  skip_on_runc "haven-runc's message"
  need_systemd_v2
  local id out
  id=$(new_id sdbad)
  cfg "$B" '.linux.cgroupsPath = "/haven/plain"'
  out=$(rt --systemd-cgroup create --bundle "$B" "$id" 2>&1 < /dev/null) && fail "create accepted a plain path"
  assert_contains "$out" "is not of the form slice:prefix:name"
  return 0
}
