# The per-container audit monitor (runtime/monitor/include/container_monitor.h).
# A config with the run.haven.audit annotation gets a monitor at create
# that outlives the runtime, answers the profile's SCMP_ACT_NOTIFY calls
# EPERM for init and exec alike, writes the trail, and ends at delete or
# when init dies; without it the calls fail closed (ENOSYS).

# audit_bundle TRAIL ARGS...: $B with the annotation, a profile notifying
# chroot, mkdir and mkdirat (labelled "audit-test"), a writable root and
# ARGS as init.
audit_bundle() {
  local trail=$1
  shift
  cfg "$B" '.annotations["run.haven.audit"] = $t | .root.readonly = false
            | .linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", listenerMetadata: "audit-test",
                                syscalls: [{names: ["chroot", "mkdir", "mkdirat"], action: "SCMP_ACT_NOTIFY"}]}' \
    --arg t "$trail"
  args "$B" "$@"
}

# Init waits (bounded) for /go in its root, then runs CMD with its output in /result.
wait_then() { echo "for i in \$(seq 300); do [ -e /go ] && break; sleep 0.1; done; { $1; } > /result 2>&1; sleep 60"; }

monitor_pid() { cut -d' ' -f1 "$1/monitor.pid"; }

# gone PID: the process has exited (a zombie not yet reaped by whoever
# inherited it counts as gone), within 5 seconds.
gone() {
  local i
  for i in $(seq 50); do
    [ -e "/proc/$1" ] || return 0
    [ "$(awk '/^State:/ {print $2}' "/proc/$1/status" 2>/dev/null)" = Z ] && return 0
    sleep 0.1
  done
  return 1
}

test_container_audit_init_and_exec_recorded() {
  skip_on_runc "haven's audit monitor"
  # An id that makes the socket's path longer than sun_path (Docker's
  # <exec-root>/runtime-runc/moby/<64 hex> often is); in the harness's
  # state root, whose cleanup deletes what a killed test leaves.
  local root=$STATE_ROOT trail=$WORK/trails-$RANDOM/sub/c.jsonl id m
  id=$(new_id audit)-$(printf 'l%.0s' $(seq 90))
  defer "timeout 20 '$RUNTIME' --root '$root' delete --force '$id'"
  audit_bundle "$trail" sh -c "$(wait_then 'chroot / true; echo init-rc=$?')"
  # (init keeps create's stdout and stderr: a file, not a pipe to wait on.)
  timeout 20 "$RUNTIME" --root "$root" create --bundle "$B" "$id" > create.out 2>&1 || fail "create: $(cat create.out)"
  [ $((${#root} + ${#id} + 14)) -gt 107 ] || fail "the socket path fits in sun_path: not the case under test"
  m=$(monitor_pid "$root/$id")
  assert_eq haven-monitor "$(cat /proc/$m/comm)" "monitor process"
  assert_eq 700 "$(stat -c %a "$(dirname "$trail")")" "trail directory mode"
  assert_eq 600 "$(stat -c %a "$trail")" "trail mode"
  # Detached: its own session, not the container's cgroup, and of its fds
  # only /dev/null on 0-2, sockets, the trail and its own epoll, signalfd
  # and pidfds (not create's stdout, no pipe, no other file of the runtime's).
  [ "$(awk '{print $6}' /proc/$m/stat)" != "$(awk '{print $6}' /proc/self/stat)" ] || fail "monitor shares our session"
  local init
  init=$(rt_root "$root" state "$id" | jq .pid)
  [ "$(cat /proc/$m/cgroup)" != "$(cat /proc/$init/cgroup)" ] || fail "monitor shares the container's cgroup"
  local fds
  fds=$(for f in /proc/$m/fd/*; do readlink "$f"; done | sort)
  assert_eq "" "$(echo "$fds" | grep -v -e '^/dev/null$' -e '^socket:' -e "^$trail\$" -e '^anon_inode:\[eventpoll\]$' \
    -e '^anon_inode:\[signalfd\]$' -e '^anon_inode:\[pidfd\]$')" "monitor fds"
  assert_eq 3 "$(echo "$fds" | grep -c '^/dev/null$')" "monitor stdio"
  timeout 20 "$RUNTIME" --root "$root" start "$id" || fail "start"
  touch "$B/rootfs/go"
  wait_for_file "$B/rootfs/result"
  assert_contains "$(cat "$B/rootfs/result")" "Operation not permitted"
  # exec loads the container's filter again; its calls reach the monitor.
  out=$(timeout 20 "$RUNTIME" --root "$root" exec "$id" sh -c 'mkdir /made-by-exec; echo exec-rc=$?' 2>&1)
  assert_contains "$out" "Operation not permitted"
  assert_contains "$out" "exec-rc=1"
  [ ! -e "$B/rootfs/made-by-exec" ] || fail "the denied mkdir ran"
  jq -se --arg id "$id" '
    (.[0] | .event == "start" and .container == $id and .policy == "audit-test" and .command[0] == "sh")
    and (map(select(.event == "denied" and .syscall == "chroot" and .process == "init" and .container == $id)) | length == 1)
    and (map(select(.event == "denied" and (.syscall | startswith("mkdir")) and .process == "exec" and .comm == "mkdir")) | length == 1)' \
    "$trail" >/dev/null || fail "trail: $(cat "$trail")"
  # init dies: the monitor writes its exit record and goes.
  rt_root "$root" kill "$id" KILL
  gone "$m" || fail "monitor $m still running after init died"
  jq -se '.[-1] | .event == "exit" and .reason == "init exited"' "$trail" >/dev/null || fail "trail end: $(tail -1 "$trail")"
  # The container's run id, made at create: the same on all its records.
  [[ "$(jq -r .run "$trail" | sort -u)" =~ ^[0-9a-f]{16}$ ]] || fail "run ids: $(jq -r .run "$trail" | sort -u)"
  [ ! -e "$root/$id/monitor.sock" ] || fail "monitor socket left behind"
  timeout 20 "$RUNTIME" --root "$root" delete "$id" || fail "delete"
  [ -s "$trail" ] || fail "delete removed the trail"
}

# rt with another state root.
rt_root() { local r=$1; shift; timeout -k 5 30 "$RUNTIME" --root "$r" "$@"; }

wait_for_file() {
  local i
  for i in $(seq 100); do [ -s "$1" ] && return 0; sleep 0.1; done
  fail "$1 never appeared"
}

test_container_audit_delete_force_ends_monitor() {
  skip_on_runc "haven's audit monitor"
  local trail=$WORK/trails-$RANDOM/c.jsonl id m
  id=$(new_id auditdel)
  audit_bundle "$trail" sleep 60
  rt run -d --bundle "$B" "$id" || fail "run -d"
  m=$(monitor_pid "$STATE_ROOT/$id")
  kill -0 "$m" || fail "no monitor"
  rt delete --force "$id" || fail "delete --force"
  gone "$m" || fail "monitor $m still running after delete --force"
  jq -se '.[-1] | .event == "exit" and .reason == "deleted"' "$trail" >/dev/null || fail "trail end: $(tail -1 "$trail")"
  [ ! -e "$STATE_ROOT/$id" ] || fail "state directory left"
}

# If the monitor is gone, a notifying call gets ENOSYS from the kernel and
# never runs, and exec refuses to start.
test_container_audit_dead_monitor_fails_closed() {
  skip_on_runc "haven's audit monitor"
  local trail=$WORK/trails-$RANDOM/c.jsonl id m
  id=$(new_id auditdead)
  audit_bundle "$trail" sh -c "$(wait_then 'mkdir /made-by-init; echo init-rc=$?')"
  rt run -d --bundle "$B" "$id" || fail "run -d"
  m=$(monitor_pid "$STATE_ROOT/$id")
  kill -KILL "$m"
  gone "$m" || fail "monitor survived SIGKILL"
  touch "$B/rootfs/go"
  wait_for_file "$B/rootfs/result"
  assert_contains "$(cat "$B/rootfs/result")" "Function not implemented"
  assert_contains "$(cat "$B/rootfs/result")" "init-rc=1"
  [ ! -e "$B/rootfs/made-by-init" ] || fail "mkdir ran without its monitor"
  out=$(rt exec "$id" sh -c 'mkdir /made-by-exec' 2>&1) && fail "exec started without the monitor"
  assert_contains "$out" "monitor.sock: connection refused"
  [ ! -e "$B/rootfs/made-by-exec" ] || fail "exec's mkdir ran"
  rt delete --force "$id" || fail "delete --force with a dead monitor"
}

test_container_audit_bad_requests_refused() {
  skip_on_runc "haven's audit monitor"
  audit_bundle relative/trail.jsonl true
  out=$(rt create --bundle "$B" "$(new_id auditbad)" 2>&1) && fail "relative trail path accepted"
  assert_contains "$out" ".annotations[\"run.haven.audit\"]: \"relative/trail.jsonl\" is neither \"default\" nor an absolute path"
  audit_bundle "$WORK/t-$RANDOM.jsonl" true
  cfg "$B" '.linux.seccomp.listenerPath = "/run/other.sock"'
  out=$(rt create --bundle "$B" "$(new_id auditbad)" 2>&1) && fail "another listener accepted"
  assert_contains "$out" ".linux.seccomp.listenerPath: \"/run/other.sock\" is another listener"
  # A link where the trail goes is never followed.
  local d=$WORK/trails-$RANDOM
  mkdir -p "$d"
  ln -s /etc/haven-audit-target "$d/link.jsonl"
  audit_bundle "$d/link.jsonl" true
  out=$(rt create --bundle "$B" "$(new_id auditbad)" 2>&1) && fail "trail through a link accepted"
  assert_contains "$out" "open audit trail $d/link.jsonl"
  [ ! -e /etc/haven-audit-target ] || fail "the link was followed"
  # A create that fails after making the trail leaves no empty trail.
  local t=$WORK/trails-$RANDOM/new.jsonl
  audit_bundle "$t" /no/such/program
  out=$(rt create --bundle "$B" "$(new_id auditbad)" 2>&1) && fail "create of a missing program succeeded"
  [ -d "$(dirname "$t")" ] || fail "the trail's directory was never made: not the case under test"
  [ ! -e "$t" ] || fail "a failed create left its empty trail"
  assert_eq 0 "$(ls "$STATE_ROOT" | grep -c auditbad)" "state left by refused creates"
}

# haven-runc --policy default on a config without a profile: the policy's
# own profile, its denials recorded in the trail's default place.
test_container_audit_policy_default_trail() {
  skip_on_runc "haven's policies"
  local id trail
  id=$(new_id auditpol)
  trail=/var/log/haven/containers/$id.jsonl
  cfg "$B" 'del(.linux.seccomp) | .root.readonly = false'
  args "$B" sh -c 'unshare -m true; echo rc=$?'
  out=$(timeout 20 "$RUNTIME" --root "$STATE_ROOT" --policy default run --bundle "$B" "$id" 2>&1)
  assert_contains "$out" "unshare(0x20000): Operation not permitted"
  jq -se --arg id "$id" '
    (.[0] | .event == "start" and .policy == "default" and .container == $id)
    and (map(select(.event == "denied" and .syscall == "unshare" and .process == "init")) | length == 1)
    and (.[-1].event == "exit")' "$trail" >/dev/null || fail "trail: $(cat "$trail" 2>&1)"
  assert_eq 600 "$(stat -c %a "$trail")" "trail mode"
}

# rootless_audit_bundle DIR RUNTIME RUNNER...: a rootless bundle in DIR
# made as RUNNER (a command prefix: the user, or root of its namespace),
# whose init's mkdir notifies the default trail's monitor.
rootless_audit_bundle() {
  local d=$1 runtime=$2
  shift 2
  "$@" "$runtime" --root "$d/state" spec --rootless --bundle "$d" || fail "spec --rootless"
  "$@" sh -c "jq '.process.terminal = false | .root.readonly = false | .process.args = [\"sh\", \"-c\", \"mkdir /tmp/no 2>&1; true\"]
    | .annotations[\"run.haven.audit\"] = \"default\"
    | .linux.seccomp = {defaultAction: \"SCMP_ACT_ALLOW\", syscalls: [{names: [\"mkdir\", \"mkdirat\"], action: \"SCMP_ACT_NOTIFY\"}]}' \
    $d/config.json > $d/c && mv $d/c $d/config.json"
}

# An ordinary user's container: the default trail is under its
# XDG_STATE_HOME, the monitor runs as that user.
test_container_audit_rootless_default_trail() {
  skip_on_runc "haven's audit monitor"
  local d=$WORK/rootless-audit-$$
  mkdir -p "$d/xdg"
  defer "rm -rf $d"
  cp -a "$ROOTFS_CACHE" "$d/rootfs"
  chown -R 65534:65534 "$d"
  local as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups env -u XDG_RUNTIME_DIR HOME=/tmp XDG_STATE_HOME="$d/xdg")
  local runtime
  runtime=$(world_readable_copy "$RUNTIME")
  rootless_audit_bundle "$d" "$runtime" "${as_nobody[@]}"
  local out trail=$d/xdg/haven/containers/rl.jsonl
  out=$("${as_nobody[@]}" timeout 20 "$runtime" --root "$d/state" run --bundle "$d" rl 2>&1)
  assert_eq 0 "$?" "rootless run ($out)"
  assert_contains "$out" "Operation not permitted"
  assert_eq "65534 600" "$(stat -c '%u %a' "$trail")" "trail owner and mode"
  assert_eq 700 "$(stat -c %a "$d/xdg/haven/containers")" "trail directory mode"
  jq -se '(map(select(.event == "denied" and (.syscall | startswith("mkdir")) and .process == "init")) | length == 1)
          and .[-1].event == "exit"' "$trail" >/dev/null || fail "trail: $(cat "$trail" 2>&1)"
  # An id used again appends: a second start record.
  out=$("${as_nobody[@]}" timeout 20 "$runtime" --root "$d/state" run --bundle "$d" rl 2>&1) || fail "second run: $out"
  assert_eq 2 "$(jq -s 'map(select(.event == "start")) | length' "$trail")" "start records"
}

# run.haven.timeout (a policy's resources.timeout in an engine container):
# the monitor kills init when the time is up, records it, and the
# container is stopped; a bad value, or a timeout without the monitor, is
# refused at create.
test_container_timeout_kills_init() {
  skip_on_runc "haven's audit monitor"
  local trail=$WORK/trails-$RANDOM/c.jsonl id i
  id=$(new_id timeout)
  audit_bundle "$trail" sleep 60
  cfg "$B" '.annotations["run.haven.timeout"] = "1"'
  rt run -d --bundle "$B" "$id" || fail "run -d"
  for i in $(seq 50); do
    [ "$(rt state "$id" 2>/dev/null | jq -r .status)" = stopped ] && break
    sleep 0.1
  done
  assert_eq stopped "$(rt state "$id" | jq -r .status)" "state 5 s after a 1 s timeout"
  jq -se '(map(select(.event == "timeout" and .seconds == 1)) | length == 1)
          and (.[-1] | .event == "exit" and .reason == "init exited")' "$trail" >/dev/null \
    || fail "trail: $(cat "$trail")"
  rt delete --force "$id" || fail "delete"
  audit_bundle "$WORK/t-$RANDOM.jsonl" true
  for v in 0 -1 1x 99999999999; do
    cfg "$B" '.annotations["run.haven.timeout"] = $v' --arg v "$v"
    out=$(rt create --bundle "$B" "$(new_id timeoutbad)" 2>&1) && fail "timeout $v accepted"
    assert_contains "$out" ".annotations[\"run.haven.timeout\"]: \"$v\" is not a number of seconds (1 to a year)"
  done
  cfg "$B" 'del(.annotations["run.haven.audit"]) | .annotations["run.haven.timeout"] = "5"'
  out=$(rt create --bundle "$B" "$(new_id timeoutbad)" 2>&1) && fail "a timeout without the monitor accepted"
  assert_contains "$out" ".annotations[\"run.haven.timeout\"] needs the per-container monitor"
  assert_eq 0 "$(ls "$STATE_ROOT" | grep -c timeoutbad)" "state left by refused creates"
}

# Root of a user namespace made for an ordinary user (what rootless Podman
# runs the runtime as: uid 0 inside, USER the user's name): the default
# trail is the user's, as for the user itself, never the host's
# /var/log/haven, which that root cannot write (every policed rootless
# Podman container failed to create there).
test_container_audit_root_of_user_namespace_trail() {
  skip_on_runc "haven's audit monitor"
  command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
  local d=$WORK/userns-audit-$$
  mkdir -p "$d/xdg"
  defer "rm -rf $d"
  cp -a "$ROOTFS_CACHE" "$d/rootfs"
  chown -R 65534:65534 "$d"
  local as_ns_root=(setpriv --reuid=65534 --regid=65534 --clear-groups env -u XDG_RUNTIME_DIR HOME=/tmp USER=nobody
                    XDG_STATE_HOME="$d/xdg" unshare --map-root-user)
  local runtime
  runtime=$(world_readable_copy "$RUNTIME")
  rootless_audit_bundle "$d" "$runtime" "${as_ns_root[@]}"
  local out id trail
  id=$(new_id nsroot)
  trail=$d/xdg/haven/containers/$id.jsonl
  out=$("${as_ns_root[@]}" timeout 20 "$runtime" --root "$d/state" run --bundle "$d" "$id" 2>&1)
  assert_eq 0 "$?" "run as root of a user namespace ($out)"
  assert_contains "$out" "Operation not permitted"
  [ ! -e "/var/log/haven/containers/$id.jsonl" ] || fail "the trail went to /var/log/haven"
  assert_eq "65534 600" "$(stat -c '%u %a' "$trail" 2>&1)" "trail owner and mode"
  jq -se '(map(select(.event == "denied" and (.syscall | startswith("mkdir")) and .process == "init")) | length == 1)
          and .[-1].event == "exit"' "$trail" >/dev/null || fail "trail: $(cat "$trail" 2>&1)"
}

# Root's haven-runc with a user namespace in the config (container root
# mapped to an unprivileged host uid): init connects to the monitor's
# socket in the 0700 state directory before it becomes that uid, so the
# trail records its denials (it failed with "monitor.sock: permission
# denied" when init connected as the mapped uid).
test_container_audit_user_namespace_config() {
  skip_on_runc "haven's audit monitor"
  local trail=$WORK/userns-trail.jsonl
  chown -R 100000:100000 "$B/rootfs"
  audit_bundle "$trail" sh -c 'mkdir /no 2>&1; true'
  cfg "$B" '.linux.namespaces += [{type: "user"}] | .linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
            | .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
            | .mounts |= map(select(.type != "sysfs" and .type != "cgroup"))'
  run_ctr "$B"
  assert_eq 0 "$RC" "run with a user namespace and the monitor ($OUT)"
  assert_contains "$OUT" "Operation not permitted"
  jq -se 'any(.[]; .event == "denied" and (.syscall | startswith("mkdir")) and .process == "init")' "$trail" \
    >/dev/null || fail "trail: $(cat "$trail" 2>&1)"
}
