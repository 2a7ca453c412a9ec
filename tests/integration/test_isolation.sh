# The Linux section of runtime-spec, checked from inside the container.

test_hostname_and_pid1() {
  cfg "$B" '.hostname = "box"'
  args "$B" sh -c 'hostname; echo $$; head -c 5 /proc/1/cmdline | tr "\0" " "; echo; readlink /proc/1/exe'
  run_ctr "$B"
  assert_eq 0 "$RC" "exit code ($OUT)"
  assert_eq "box
1
sh -c
/bin/busybox" "$OUT"
  [ "$(hostname)" != box ] || fail "hostname leaked to the host"
}

test_domainname() {
  skip_on_runc "runc 1.1 has no domainname support (added in 1.2)"
  cfg "$B" '.hostname = "box" | .domainname = "example.org"'
  args "$B" cat /proc/sys/kernel/domainname
  run_ctr "$B"
  assert_eq "example.org" "$OUT"
}

test_user_groups_umask_cwd_env() {
  cfg "$B" '.process.user = {uid: 1000, gid: 1000, additionalGids: [2000], umask: 63} | .process.cwd = "/home/user/work"
            | .process.env += ["FOO=bar baz"]'
  args "$B" sh -c 'id -u; id -g; id -G; umask; pwd; echo "$FOO"; echo $HOME'
  run_ctr "$B"
  assert_eq "1000
1000
1000 2000
0077
/home/user/work
bar baz
/home/user" "$OUT"
}

# HOME from the image's /etc/passwd when the config sets none: a line with
# an empty comment field (what useradd writes) is still seven fields, and a
# uid field is a whole number, not a prefix of one.
test_home_from_passwd_with_empty_fields() {
  printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'short:x:1000' 'bad:x:1000x:1000::/home/bad:/bin/sh' \
    'vscode:x:1000:1000::/home/vscode:/bin/bash' > "$B/rootfs/etc/passwd"
  cfg "$B" '.process.user = {uid: 1000, gid: 1000} | .process.env = ["PATH=/bin:/usr/bin"]'
  args "$B" sh -c 'echo "$HOME"'
  run_ctr "$B"
  assert_eq "/home/vscode" "$OUT"
}

test_rlimits() {
  cfg "$B" '.process.rlimits = [{type: "RLIMIT_NOFILE", soft: 1000, hard: 1000}, {type: "RLIMIT_CORE", soft: 0, hard: 0}]'
  args "$B" sh -c 'ulimit -n; ulimit -Hn; ulimit -c'
  run_ctr "$B"
  assert_eq "1000
1000
0" "$OUT"
}

test_rlimit_above_hard_limit_is_an_error() {
  cfg "$B" '.process.rlimits = [{type: "RLIMIT_NOFILE", soft: 100, hard: 99999999}]'
  run_ctr "$B"
  [ "$RC" != 0 ] || fail "raising the hard limit succeeded without CAP_SYS_RESOURCE"
  assert_contains "$OUT" "$(msg "RLIMIT_NOFILE" "error setting rlimit type 7: operation not permitted")"
}

test_readonly_root_and_writable_tmpfs() {
  cfg "$B" '.root.readonly = true | .mounts += [{destination: "/tmp", type: "tmpfs", source: "tmpfs", options: ["size=1m", "mode=1777", "nosuid"]}]'
  args "$B" sh -c 'touch /x 2>&1 || echo ro-ok; touch /tmp/y && echo tmp-ok; grep " /tmp " /proc/mounts'
  run_ctr "$B"
  assert_contains "$OUT" "ro-ok"
  assert_contains "$OUT" "tmp-ok"
  assert_contains "$OUT" "size=1024k"
  assert_contains "$OUT" "nosuid"
}

test_masked_and_readonly_paths() {
  # Files the host has (the defaults /proc/kcore, /proc/acpi may be absent
  # or empty there), masked by /dev/null and by an empty read-only tmpfs.
  [ -n "$(head -c 1 /proc/timer_list)" ] && [ -n "$(ls /proc/tty)" ] || fail "host lacks /proc/timer_list or /proc/tty"
  cfg "$B" '.linux.maskedPaths += ["/proc/timer_list", "/proc/tty"]'
  args "$B" sh -c 'wc -c < /proc/timer_list; stat -c "%t:%T" /proc/timer_list; ls /proc/tty | wc -l; stat -f -c %T /proc/tty;
                   touch /proc/tty/x 2>/dev/null || echo tty-ro; { wc -c < /proc/kcore; } 2>/dev/null || echo absent;
                   { echo 1 > /proc/sys/kernel/domainname; } 2>/dev/null || echo sys-ro; stat -f -c %T /proc/sys'
  run_ctr "$B"
  local kcore=absent
  [ -e /proc/kcore ] && kcore=0
  assert_eq "0
1:3
0
tmpfs
tty-ro
$kcore
sys-ro
proc" "$OUT"
}

test_bind_mounts() {
  mkdir -p "$PWD/hostdir" && echo from-host > "$PWD/hostdir/file"
  cfg "$B" '.mounts += [{destination: "/data", type: "bind", source: $src, options: ["rbind", "ro"]},
                       {destination: "/rw", type: "none", source: $src, options: ["bind", "rw"]}]' --arg src "$PWD/hostdir"
  args "$B" sh -c 'cat /data/file; touch /data/new 2>/dev/null || echo ro-ok; echo w > /rw/written'
  run_ctr "$B"
  assert_eq "from-host
ro-ok" "$OUT"
  assert_eq w "$(cat "$PWD/hostdir/written")"
}

test_dev_contents() {
  cfg "$B" '.linux.devices = [{path: "/dev/fuse", type: "c", major: 10, minor: 229, fileMode: 438, uid: 0, gid: 0}]'
  args "$B" sh -c 'for d in null zero full random urandom tty fuse; do stat -c "%n %F %t:%T %a" /dev/$d; done;
                   for l in fd stdin stdout stderr ptmx; do readlink /dev/$l; done; test -d /dev/pts && echo pts;
                   ls -l /dev/fuse | awk "{print \$1, \$5, \$6}"'
  run_ctr "$B"
  assert_eq "/dev/null character special file 1:3 666
/dev/zero character special file 1:5 666
/dev/full character special file 1:7 666
/dev/random character special file 1:8 666
/dev/urandom character special file 1:9 666
/dev/tty character special file 5:0 666
/dev/fuse character special file a:e5 666
/proc/self/fd
/proc/self/fd/0
/proc/self/fd/1
/proc/self/fd/2
pts/ptmx
pts
crw-rw-rw- 10, 229" "$OUT"
}

test_sysctl_in_own_netns() {
  cfg "$B" '.linux.sysctl = {"net.ipv4.ip_forward": "1", "kernel.msgmax": "4096"}'
  args "$B" sh -c 'cat /proc/sys/net/ipv4/ip_forward /proc/sys/kernel/msgmax'
  run_ctr "$B"
  assert_eq "1
4096" "$OUT"
  [ "$(cat /proc/sys/kernel/msgmax)" != 4096 ] || fail "sysctl leaked to the host"
}

test_capabilities_exact_sets() {
  cfg "$B" '.process.capabilities = {bounding: ["CAP_NET_RAW", "CAP_CHOWN"], effective: ["CAP_NET_RAW"], permitted: ["CAP_NET_RAW"]}'
  args "$B" sh -c 'grep -E "^Cap(Inh|Prm|Eff|Bnd|Amb)" /proc/self/status'
  run_ctr "$B"
  # CAP_CHOWN = bit 0, CAP_NET_RAW = bit 13.  CapInh must be empty
  # (CVE-2022-29162).
  assert_eq "CapInh:	0000000000000000
CapPrm:	0000000000002000
CapEff:	0000000000002000
CapBnd:	0000000000002001
CapAmb:	0000000000000000" "$OUT"
}

test_capability_the_runtime_lacks_is_a_logged_warning() {
  # runtime-spec: a capability the runtime cannot grant is not fatal, but
  # the runtime must log a warning.  Needs a host whose bounding set lacks
  # one (this one lacks CAP_SYS_RESOURCE).
  skip_on_runc "runc fails the create instead"
  local bnd missing=
  bnd=$((16#$(awk '/^CapBnd/ {print $2}' /proc/self/status)))
  [ $((bnd & (1 << 24))) = 0 ] && missing=CAP_SYS_RESOURCE
  [ -n "$missing" ] || skip "the host's bounding set has CAP_SYS_RESOURCE"
  cfg "$B" '.process.capabilities = {bounding: ["CAP_CHOWN", $c], effective: ["CAP_CHOWN", $c], permitted: ["CAP_CHOWN", $c]}' --arg c "$missing"
  args "$B" sh -c 'grep ^CapEff /proc/self/status'
  local id out
  id=$(new_id capwarn)
  out=$(rt --log "$PWD/log.json" --log-format json run --bundle "$B" "$id" 2>&1)
  assert_eq 0 "$?" "run ($out)"
  assert_eq "CapEff:	0000000000000001" "$out"
  jq -se --arg c "$missing" 'any(.level == "warning" and (.msg | contains($c)))' log.json >/dev/null \
    || fail "no warning about $missing in the log: $(cat log.json)"
}

test_ambient_capabilities_for_non_root() {
  cfg "$B" '.process.user = {uid: 1000, gid: 1000} | .process.capabilities = {bounding: ["CAP_NET_BIND_SERVICE"], effective: ["CAP_NET_BIND_SERVICE"],
            permitted: ["CAP_NET_BIND_SERVICE"], inheritable: ["CAP_NET_BIND_SERVICE"], ambient: ["CAP_NET_BIND_SERVICE"]}'
  args "$B" sh -c 'grep -E "^Cap(Eff|Amb)" /proc/self/status'
  run_ctr "$B"
  assert_eq "CapEff:	0000000000000400
CapAmb:	0000000000000400" "$OUT"
}

test_no_new_privileges() {
  cfg "$B" '.process.noNewPrivileges = true'
  args "$B" sh -c 'grep NoNewPrivs /proc/self/status'
  run_ctr "$B"
  assert_eq "NoNewPrivs:	1" "$OUT"
  cfg "$B" '.process.noNewPrivileges = false'
  run_ctr "$B"
  assert_eq "NoNewPrivs:	0" "$OUT"
}

test_seccomp_errno() {
  cfg "$B" '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", architectures: ["SCMP_ARCH_X86_64"],
            syscalls: [{names: ["mkdir", "mkdirat"], action: "SCMP_ACT_ERRNO", errnoRet: 1},
                       {names: ["nonexistent_syscall"], action: "SCMP_ACT_ERRNO"}]}'
  args "$B" sh -c 'mkdir /tmp/x 2>&1; grep Seccomp: /proc/self/status'
  run_ctr "$B"
  assert_contains "$OUT" "Operation not permitted"
  assert_contains "$OUT" "Seccomp:	2"
}

test_seccomp_applies_to_exec() {
  cfg "$B" '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", syscalls: [{names: ["mkdir", "mkdirat"], action: "SCMP_ACT_ERRNO"}]}'
  args "$B" sleep 100
  local id out
  id=$(new_id scx)
  rt run -d --bundle "$B" "$id"
  out=$(rt exec "$id" mkdir /tmp/y 2>&1) && fail "mkdir allowed in exec"
  assert_contains "$out" "Operation not permitted"
}

test_seccomp_bad_profile_fails_create() {
  cfg "$B" '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", architectures: ["SCMP_ARCH_NOPE"]}'
  run_ctr "$B"
  [ "$RC" != 0 ] || fail "unknown architecture accepted"
  assert_contains "$OUT" "$(msg ".linux.seccomp.architectures[0]: unknown seccomp architecture \"SCMP_ARCH_NOPE\"" \
    "string SCMP_ARCH_NOPE is not a valid arch for seccomp")"
}

test_user_namespace_mappings() {
  chown -R 100000:100000 "$B/rootfs"
  cfg "$B" '.linux.namespaces += [{type: "user"}] | .linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
            | .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
            | .root.readonly = false | .mounts |= map(select(.type != "sysfs" and .type != "cgroup"))'
  args "$B" sh -c 'cat /proc/self/uid_map; id -u; touch /tmp/f && stat -c %u /tmp/f'
  run_ctr "$B"
  assert_eq 0 "$RC" "exit code ($OUT)"
  assert_contains "$OUT" "0     100000      65536"
  assert_eq 100000 "$(stat -c %u "$B/rootfs/tmp/f")" "host owner of a file created as container root"
}

test_oom_score_adj() {
  cfg "$B" '.process.oomScoreAdj = 100'
  args "$B" cat /proc/self/oom_score_adj
  run_ctr "$B"
  assert_eq 100 "$OUT"
}

test_cgroups_path() {
  cfg "$B" '.linux.cgroupsPath = $p' --arg p "/haven-test/$CTR_PREFIX"
  args "$B" sleep 100
  defer "rmdir /sys/fs/cgroup/*/haven-test/$CTR_PREFIX /sys/fs/cgroup/*/haven-test /sys/fs/cgroup/haven-test/$CTR_PREFIX /sys/fs/cgroup/haven-test"
  local id pid
  id=$(new_id cg)
  rt run -d --bundle "$B" "$id"
  pid=$(rt state "$id" | jq .pid)
  assert_contains "$(cat /proc/$pid/cgroup)" "/haven-test/$CTR_PREFIX"
  rt delete --force "$id"
  local d
  for d in /sys/fs/cgroup/*/haven-test/$CTR_PREFIX /sys/fs/cgroup/haven-test/$CTR_PREFIX; do
    [ -e "$d" ] && fail "cgroup $d left behind"
  done
  rmdir /sys/fs/cgroup/*/haven-test /sys/fs/cgroup/haven-test 2>/dev/null
  return 0
}

test_join_network_namespace_by_path() {
  local ns=$CTR_PREFIX-ns
  ip netns add "$ns" || fail "ip netns add"
  defer "ip netns del $ns"
  cfg "$B" '.linux.namespaces |= map(if .type == "network" then .path = $p else . end)' --arg p "/run/netns/$ns"
  args "$B" readlink /proc/self/ns/net
  run_ctr "$B"
  local want
  want=$(ip netns exec "$ns" readlink /proc/self/ns/net)
  ip netns del "$ns"
  assert_eq "$want" "$OUT"
}

test_time_namespace_offsets() {
  skip_on_runc "runc 1.1 has no time namespace support (added in 1.2)"
  cfg "$B" '.linux.namespaces += [{type: "time"}] | .linux.timeOffsets = {boottime: {secs: 86400, nanosecs: 0}}'
  args "$B" cat /proc/uptime
  run_ctr "$B"
  local inside host
  inside=${OUT%%.*}
  host=$(cut -d. -f1 /proc/uptime)
  [ $((inside - host)) -ge 86390 ] || fail "uptime inside $inside vs host $host"
}

test_personality_linux32() {
  skip_on_runc "runc 1.1 ignores linux.personality (support added in 1.2)"
  cfg "$B" '.linux.personality = {domain: "LINUX32"}'
  args "$B" uname -m
  run_ctr "$B"
  assert_eq i686 "$OUT"
}

test_apparmor_profile_without_apparmor() {
  if [ -e /sys/module/apparmor/parameters/enabled ] && grep -q Y /sys/module/apparmor/parameters/enabled; then
    skip "AppArmor is enabled here: this checks the refusal on a host without it"
  fi
  cfg "$B" '.process.apparmorProfile = "docker-default"'
  run_ctr "$B"
  [ "$RC" != 0 ] || fail "apparmor profile silently ignored"
  assert_contains "$OUT" "$(msg "AppArmor is not enabled" "apparmor failed to apply profile")"
}

test_no_pivot() {
  args "$B" sh -c 'ls / | tr "\n" " "'
  local id out
  id=$(new_id nopivot)
  out=$(timeout 20 "$RUNTIME" --root "$STATE_ROOT" run --no-pivot --bundle "$B" "$id" 2>&1)
  assert_eq "bin dev etc home proc root sbin sys tmp " "$out"
}

test_cgroup_mount_shows_own_cgroup() {
  args "$B" sh -c 'ls /sys/fs/cgroup | tr "\n" " "; cat /proc/self/cgroup | head -1'
  run_ctr "$B"
  assert_eq 0 "$RC" "exit code ($OUT)"
  assert_contains "$OUT" "memory"
  assert_contains "$OUT" "pids"
}

test_scheduler_and_io_priority() {
  skip_on_runc "runc 1.1 ignores process.scheduler and process.ioPriority (added in 1.2)"
  cfg "$B" '.process.scheduler = {policy: "SCHED_BATCH", nice: 5} | .process.ioPriority = {class: "IOPRIO_CLASS_IDLE", priority: 0}'
  args "$B" sh -c 'cut -d" " -f19,41 /proc/self/stat'
  run_ctr "$B"
  assert_eq "5 3" "$OUT" "nice and policy (SCHED_BATCH=3)"
}

test_rootless_as_unprivileged_user() {
  # An ordinary user (nobody) runs a container of its own: user namespace
  # mapping only itself, no cgroup, sysfs bound from the host.
  local d=$WORK/rootless-$$
  mkdir -p "$d"
  defer "rm -rf $d"
  cp -a "$ROOTFS_CACHE" "$d/rootfs"
  chown -R 65534:65534 "$d"
  local as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups env -u XDG_RUNTIME_DIR HOME=/tmp)
  local runtime
  runtime=$(world_readable_copy "$RUNTIME")
  "${as_nobody[@]}" "$runtime" --root "$d/state" spec --rootless --bundle "$d" || fail "spec --rootless"
  "${as_nobody[@]}" sh -c "jq '.process.terminal = false | .root.readonly = false | .process.args = [\"sh\", \"-c\", \"id -u; cat /proc/self/uid_map; touch /tmp/x && stat -c %u /tmp/x\"]' $d/config.json > $d/c && mv $d/c $d/config.json"
  local out
  out=$("${as_nobody[@]}" timeout 20 "$runtime" --root "$d/state" run --bundle "$d" rl 2>&1)
  assert_eq 0 "$?" "rootless run ($out)"
  assert_contains "$out" "0      65534          1"
  assert_eq 65534 "$(stat -c %u "$d/rootfs/tmp/x")" "host owner of a file made by container root"
  rm -rf "$d"
}

test_seccomp_notify_listener() {
  local sock=$PWD/listener.sock
  cfg "$B" '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", listenerPath: $s, listenerMetadata: "meta \"1\"",
            syscalls: [{names: ["mkdir", "mkdirat"], action: "SCMP_ACT_NOTIFY"}]}' --arg s "$sock"
  args "$B" sh -c 'sleep 0.5; mkdir /tmp/n 2>&1; true'
  python3 "$(dirname "${BASH_SOURCE[0]}")/seccomp_listener.py" "$sock" "$PWD/listener.json" &
  local listener=$!
  defer "kill $listener"
  wait_socket "$sock"
  run_ctr "$B"
  wait $listener || fail "listener failed"
  jq -e '.nfds == 1 and .fd_is_seccomp and .state.fds == ["seccompFd"] and .state.metadata == "meta \"1\""
         and .state.state.status == $st and (.state.pid > 1)' --arg st "$(msg created creating)" listener.json >/dev/null \
    || fail "listener message: $(cat listener.json)"
  assert_contains "$OUT" "Function not implemented"
}

test_loopback_up_in_new_netns() {
  args "$B" sh -c 'ip link show lo | head -1'
  run_ctr "$B"
  assert_contains "$OUT" "UP"
}

test_memory_and_pids_limits() {
  cfg "$B" '.linux.resources = {memory: {limit: 33554432}, pids: {limit: 20}, cpu: {quota: 50000, period: 100000}}'
  args "$B" sleep 100
  local id pid
  id=$(new_id res)
  rt run -d --bundle "$B" "$id"
  pid=$(rt state "$id" | jq .pid)
  local mem_dir pids_dir
  mem_dir=/sys/fs/cgroup/memory$(grep -E ':memory:' /proc/$pid/cgroup | cut -d: -f3)
  pids_dir=/sys/fs/cgroup/pids$(grep -E ':pids:' /proc/$pid/cgroup | cut -d: -f3)
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    mem_dir=/sys/fs/cgroup$(cut -d: -f3 /proc/$pid/cgroup); pids_dir=$mem_dir
    assert_eq 33554432 "$(cat "$mem_dir/memory.max")"
  else
    assert_eq 33554432 "$(cat "$mem_dir/memory.limit_in_bytes")"
  fi
  assert_eq 20 "$(cat "$pids_dir/pids.max")"
  # The pids limit bites: 30 background sleeps cannot all start.
  local out
  out=$(rt exec "$id" sh -c 'for i in $(seq 30); do sleep 5 & done 2>&1; wait' 2>&1)
  assert_contains "$out" "Resource temporarily unavailable"
}

test_idmapped_bind_mount() {
  skip_on_runc "runc 1.1 has no idmapped mounts (added in 1.2)"
  mkdir -p "$PWD/owned" && echo data > "$PWD/owned/f" && chown -R 1234:1234 "$PWD/owned"
  cfg "$B" '.mounts += [{destination: "/idm", type: "bind", source: $src, options: ["bind", "idmap"],
            uidMappings: [{containerID: 0, hostID: 1234, size: 1}], gidMappings: [{containerID: 0, hostID: 1234, size: 1}]}]' \
    --arg src "$PWD/owned"
  args "$B" sh -c 'stat -c "%u:%g" /idm/f; touch /idm/new && echo write-ok'
  run_ctr "$B"
  assert_eq "0:0
write-ok" "$OUT"
  assert_eq "1234:1234" "$(stat -c %u:%g "$PWD/owned/new")" "on-disk owner of a file created through the idmapped mount"
}

test_device_cgroup_rules_v1() {
  [ -d /sys/fs/cgroup/devices ] || skip "no cgroup v1 devices hierarchy here (these are v1 device rules)"
  cfg "$B" '.linux.resources.devices = [{allow: false, access: "rwm"}] | .linux.devices = [{path: "/dev/fuse", type: "c", major: 10, minor: 229, fileMode: 438}]'
  args "$B" sh -c 'echo x > /dev/null && echo null-ok; cat /dev/fuse 2>&1 | grep -c "Operation not permitted"'
  run_ctr "$B"
  assert_eq "null-ok
1" "$OUT"
}

# runc's default device rules on top of a deny-all config (what Docker
# sends): mknod of any node, /dev/net/tun usable, other nodes unusable.
test_device_cgroup_defaults_v1() {
  [ -d /sys/fs/cgroup/devices ] || skip "no cgroup v1 devices hierarchy here (these are v1 device rules)"
  cfg "$B" '.linux.resources.devices = [{allow: false, access: "rwm"}] | .root.readonly = false
    | .process.capabilities.bounding += ["CAP_MKNOD"] | .process.capabilities.effective += ["CAP_MKNOD"]
    | .process.capabilities.permitted += ["CAP_MKNOD"]'
  args "$B" sh -c 'mknod /tmp/tun c 10 200 && cat /tmp/tun 2>&1; mknod /tmp/loop b 7 0 && echo block-mknod-ok;
    mknod /tmp/mem c 1 1 && head -c 1 /tmp/mem 2>&1'
  run_ctr "$B"
  assert_eq "cat: read error: File descriptor in bad state
block-mknod-ok
head: /tmp/mem: Operation not permitted" "$OUT"
}

test_unsupported_fields_are_refused() {
  skip_on_runc "runc accepts linux.intelRdt.closID without resctrl and runs the container"
  cfg "$B" '.linux.intelRdt = {closID: "x"}'
  run_ctr "$B"
  [ "$RC" != 0 ] || fail "intelRdt silently ignored"
  assert_contains "$OUT" ".linux.intelRdt: Intel RDT is not supported"
}
