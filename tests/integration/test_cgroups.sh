# cgroup resources, read back from the host's cgroup files: every
# linux.resources kind on this host's cgroup layout (v1, hybrid or v2),
# limits that bite (OOM kill, pids), device rules (v1 controller and the
# eBPF program), update, pause/resume and delete.

# --- where a container's cgroup files are ---------------------------------

# cg_mode: v2, hybrid or v1.
cg_mode() {
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
    echo v2
  elif awk '$0 ~ / - cgroup2 / {f = 1} END {exit !f}' /proc/self/mountinfo; then
    echo hybrid
  else
    echo v1
  fi
}

# v1_dir CONTROLLER PID: PID's cgroup directory in the v1 hierarchy of
# CONTROLLER ("" if no v1 hierarchy has it).
v1_dir() {
  local mnt path
  mnt=$(awk -v c="$1" '$0 ~ / - cgroup / { n = split($NF, o, ","); for (i = 1; i <= n; i++) if (o[i] == c) { print $5; exit } }' /proc/self/mountinfo)
  [ -n "$mnt" ] || return 0
  path=$(awk -F: -v c="$1" '{ n = split($2, o, ","); for (i = 1; i <= n; i++) if (o[i] == c) print $3 }' "/proc/$2/cgroup")
  echo "$mnt$path"
}

# v2_dir PID: PID's directory in the unified hierarchy ("" if none).
v2_dir() {
  local mnt
  mnt=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
  [ -n "$mnt" ] || return 0
  echo "$mnt$(awk -F: '$1 == 0 { print $3 }' "/proc/$1/cgroup")"
}

# ctl_dir V1NAME V2NAME PID: where the runtime puts that controller's files
# for PID's container: its v1 hierarchy, else the unified one if the
# controller is enabled there.  Sets CTL_DIR ("" if neither) and CTL_V2
# (1 for the unified hierarchy).
ctl_dir() {
  CTL_V2=0
  CTL_DIR=
  if [ "$(cg_mode)" != v2 ]; then
    CTL_DIR=$(v1_dir "$1" "$3")
    [ -n "$CTL_DIR" ] && return 0
  fi
  local d
  d=$(v2_dir "$3")
  if [ -n "$d" ] && [ -n "$2" ] && grep -qw "$2" "$d/cgroup.controllers" 2>/dev/null; then
    CTL_V2=1
    CTL_DIR=$d
  fi
  return 0
}

# run_bg NAME: run $B detached; sets ID and PID.
run_bg() {
  ID=$(new_id "$1")
  rt run -d --bundle "$B" "$ID" > /dev/null || fail "run -d $1 failed"
  PID=$(rt state "$ID" | jq .pid)
}

# assert_file EXPECTED DIR FILE
assert_file() {
  [ -f "$2/$3" ] || fail "$2/$3 does not exist"
  assert_eq "$1" "$(cat "$2/$3")" "$3"
}

# a whole block device of the host as MAJ:MIN (loop devices count).
block_device() {
  local d
  for d in /sys/block/*; do
    [ -f "$d/dev" ] && { cat "$d/dev"; return 0; }
  done
}

# --- values of every resource kind ------------------------------------------

test_cgroups_memory_values() {
  cfg "$B" '.linux.resources.memory = {limit: 33554432, reservation: 16777216, swap: 67108864, swappiness: 10}'
  args "$B" sleep 100
  run_bg mem
  local d
  ctl_dir memory memory "$PID"; d=$CTL_DIR
  [ -n "$d" ] || fail "no memory controller"
  if [ "$CTL_V2" = 1 ]; then
    assert_file 33554432 "$d" memory.max
    assert_file 16777216 "$d" memory.low
    [ -f "$d/memory.swap.max" ] && assert_file 33554432 "$d" memory.swap.max
  else
    assert_file 33554432 "$d" memory.limit_in_bytes
    assert_file 16777216 "$d" memory.soft_limit_in_bytes
    [ -f "$d/memory.memsw.limit_in_bytes" ] && assert_file 67108864 "$d" memory.memsw.limit_in_bytes
    assert_file 10 "$d" memory.swappiness
    assert_contains "$(cat "$d/memory.oom_control")" "oom_kill_disable 0"
  fi
  return 0
}

test_cgroups_memory_kernel_tcp_v1() {
  # kernelTCP still limits TCP buffers on v1 memory cgroups: applied, not
  # dropped (v2 has no such file: memory.max covers socket memory).
  cfg "$B" '.linux.resources.memory = {limit: 67108864, kernelTCP: 50593792}'
  args "$B" sleep 100
  run_bg kmemtcp
  local d
  ctl_dir memory memory "$PID"; d=$CTL_DIR
  [ "$CTL_V2" = 0 ] || skip "memory is on cgroup v2 here"
  [ -f "$d/memory.kmem.tcp.limit_in_bytes" ] || skip "this kernel has no memory.kmem.tcp.limit_in_bytes"
  assert_file 50593792 "$d" memory.kmem.tcp.limit_in_bytes
}

test_cgroups_memory_unlimited_and_oom_killer() {
  cfg "$B" '.linux.resources.memory = {limit: -1, disableOOMKiller: true}'
  args "$B" sleep 100
  run_bg memmax
  local d
  ctl_dir memory memory "$PID"; d=$CTL_DIR
  if [ "$CTL_V2" = 1 ]; then
    # v2 cannot disable the OOM killer: ignored, as runc does.
    assert_file max "$d" memory.max
  else
    assert_file 9223372036854771712 "$d" memory.limit_in_bytes
    assert_contains "$(cat "$d/memory.oom_control")" "oom_kill_disable 1"
  fi
  return 0
}

test_cgroups_cpu_values() {
  cfg "$B" '.linux.resources.cpu = {shares: 512, quota: 20000, period: 50000, burst: 1000}'
  args "$B" sleep 100
  run_bg cpu
  local d
  ctl_dir cpu cpu "$PID"; d=$CTL_DIR
  [ -n "$d" ] || fail "no cpu controller"
  if [ "$CTL_V2" = 1 ]; then
    assert_file 59 "$d" cpu.weight # runc's curve: 512 shares
    assert_file "20000 50000" "$d" cpu.max
    [ -f "$d/cpu.max.burst" ] && ! is_runc && assert_file 1000 "$d" cpu.max.burst # (runc 1.1: no burst)
  else
    assert_file 512 "$d" cpu.shares
    assert_file 20000 "$d" cpu.cfs_quota_us
    assert_file 50000 "$d" cpu.cfs_period_us
    [ -f "$d/cpu.cfs_burst_us" ] && ! is_runc && assert_file 1000 "$d" cpu.cfs_burst_us # (runc 1.1: no burst)
  fi
  # cpu.idle (Linux 5.15), in both versions.
  cfg "$B" '.linux.resources.cpu = {idle: 1}'
  run_bg idle
  ctl_dir cpu cpu "$PID"; d=$CTL_DIR
  [ -f "$d/cpu.idle" ] && ! is_runc && assert_file 1 "$d" cpu.idle # (runc 1.1: no idle)
  return 0
}

test_cgroups_cpu_realtime() {
  skip_on_runc "haven-runc's messages"
  cfg "$B" '.linux.resources.cpu = {realtimePeriod: 1000000, realtimeRuntime: 10000}'
  args "$B" sleep 100
  if [ "$(cg_mode)" = v2 ]; then
    run_ctr "$B"
    [ "$RC" != 0 ] || fail "realtime settings accepted on cgroup v2"
    assert_contains "$OUT" "linux.resources.cpu: cpu.realtimePeriod and cpu.realtimeRuntime: cgroup v2 has no realtime group scheduling"
    return 0
  fi
  [ -f /sys/fs/cgroup/cpu/cpu.rt_runtime_us ] || skip "kernel without CONFIG_RT_GROUP_SCHED"
  # Right below the root, whose realtime budget children can draw on.
  cfg "$B" '.linux.cgroupsPath = $p' --arg p "/$CTR_PREFIX-rt"
  defer "rmdir /sys/fs/cgroup/*/$CTR_PREFIX-rt /sys/fs/cgroup/unified/$CTR_PREFIX-rt"
  run_bg rt
  local d
  ctl_dir cpu cpu "$PID"; d=$CTL_DIR
  assert_file 1000000 "$d" cpu.rt_period_us
  assert_file 10000 "$d" cpu.rt_runtime_us
}

test_cgroups_cpuset_values() {
  cfg "$B" '.linux.resources.cpu = {cpus: "0", mems: "0"}'
  args "$B" sh -c 'grep Cpus_allowed_list /proc/self/status; sleep 100'
  run_bg cpuset
  local d
  ctl_dir cpuset cpuset "$PID"; d=$CTL_DIR
  [ -n "$d" ] || fail "no cpuset controller"
  assert_file 0 "$d" cpuset.cpus
  assert_file 0 "$d" cpuset.mems
  assert_contains "$(grep Cpus_allowed_list /proc/$PID/status)" $'\t0'
}

test_cgroups_pids_values() {
  cfg "$B" '.linux.resources.pids = {limit: 25}'
  args "$B" sleep 100
  run_bg pids
  local d
  ctl_dir pids pids "$PID"; d=$CTL_DIR
  assert_file 25 "$d" pids.max
  cfg "$B" '.linux.resources.pids = {limit: -1}'
  run_bg pidsmax
  ctl_dir pids pids "$PID"; d=$CTL_DIR
  assert_file max "$d" pids.max
}

test_cgroups_blkio_throttle() {
  local dev
  dev=$(block_device)
  [ -n "$dev" ] || skip "no block device on this host"
  cfg "$B" '.linux.resources.blockIO = {
      throttleReadBpsDevice: [{major: $ma, minor: $mi, rate: 1048576}],
      throttleWriteBpsDevice: [{major: $ma, minor: $mi, rate: 2097152}],
      throttleReadIOPSDevice: [{major: $ma, minor: $mi, rate: 100}],
      throttleWriteIOPSDevice: [{major: $ma, minor: $mi, rate: 200}]}' \
    --argjson ma "${dev%:*}" --argjson mi "${dev#*:}"
  args "$B" sleep 100
  run_bg blk
  local d
  ctl_dir blkio io "$PID"; d=$CTL_DIR
  [ -n "$d" ] || fail "no blkio/io controller"
  if [ "$CTL_V2" = 1 ]; then
    assert_contains "$(cat "$d/io.max")" "$dev rbps=1048576 wbps=2097152 riops=100 wiops=200"
  else
    assert_file "$dev 1048576" "$d" blkio.throttle.read_bps_device
    assert_file "$dev 2097152" "$d" blkio.throttle.write_bps_device
    assert_file "$dev 100" "$d" blkio.throttle.read_iops_device
    assert_file "$dev 200" "$d" blkio.throttle.write_iops_device
  fi
}

test_cgroups_blkio_weight() {
  skip_on_runc "haven-runc's messages"
  cfg "$B" '.linux.resources.blockIO = {weight: 500, leafWeight: 300}'
  # Which weight files exist depends on the I/O schedulers: without any,
  # the weight is refused, naming the files it looked for.
  run_ctr "$B"
  if [ "$RC" != 0 ]; then
    assert_contains "$OUT" "linux.resources.blockIO: blockIO.weight: "
    assert_contains "$OUT" "has neither"
    return 0
  fi
  args "$B" sleep 100
  run_bg weight
  local d f found=0
  ctl_dir blkio io "$PID"; d=$CTL_DIR
  for f in blkio.weight blkio.bfq.weight io.weight io.bfq.weight; do
    [ -f "$d/$f" ] || continue
    found=1
    case $f in
      io.weight) assert_contains "$(cat "$d/$f")" 4950 "$f" ;; # 500 on io.weight's scale
      *) assert_contains "$(cat "$d/$f")" 500 "$f" ;;
    esac
  done
  [ $found = 1 ] || fail "a weight was accepted but no weight file exists in $d"
}

test_cgroups_hugetlb() {
  skip_on_runc "hugetlb through the unified hierarchy of a hybrid host"
  [ -d /sys/kernel/mm/hugepages/hugepages-2048kB ] || skip "no 2MB huge pages on this machine"
  cfg "$B" '.linux.resources.hugepageLimits = [{pageSize: "2MB", limit: 4194304}]'
  args "$B" sleep 100
  local probe
  if [ "$(cg_mode)" != v2 ] && [ -z "$(v1_dir hugetlb $$)" ] \
     && ! grep -qw hugetlb "$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)/cgroup.controllers" 2>/dev/null; then
    run_ctr "$B"
    [ "$RC" != 0 ] || fail "hugepageLimits accepted without a hugetlb controller"
    assert_contains "$OUT" "linux.resources.hugepageLimits: "
    return 0
  fi
  # The runtime enables hugetlb in the unified hierarchy's levels above the
  # container when no v1 hierarchy has it: turn it off again afterwards
  # where it was off (after deleting the container; best effort).
  local mnt levels="" l
  mnt=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
  for l in "$mnt/haven" "$mnt"; do
    grep -qw hugetlb "$l/cgroup.subtree_control" 2>/dev/null || levels="$levels $l"
  done
  defer "for l in $levels; do echo -hugetlb > \$l/cgroup.subtree_control; done"
  run_bg huge
  defer "rt delete --force $ID"
  local d
  ctl_dir hugetlb hugetlb "$PID"; d=$CTL_DIR
  [ -n "$d" ] || fail "hugetlb controller not found for the container"
  if [ "$CTL_V2" = 1 ]; then
    assert_file 4194304 "$d" hugetlb.2MB.max
    [ -f "$d/hugetlb.2MB.rsvd.max" ] && assert_file 4194304 "$d" hugetlb.2MB.rsvd.max
  else
    assert_file 4194304 "$d" hugetlb.2MB.limit_in_bytes
  fi
  # A page size that is no file name is refused before anything is written.
  cfg "$B" '.linux.resources.hugepageLimits = [{pageSize: "../2MB", limit: 1}]'
  run_ctr "$B"
  [ "$RC" != 0 ] || fail "page size ../2MB accepted"
  assert_contains "$OUT" "linux.resources.hugepageLimits: page size \"../2MB\" is not of the form 2MB, 1GB or 64KB"
}

test_cgroups_network() {
  skip_on_runc "haven-runc's messages"
  cfg "$B" '.linux.resources.network = {classID: 1048577, priorities: [{name: "lo", priority: 5}]}'
  args "$B" sleep 100
  if [ -z "$(v1_dir net_cls $$)" ] || [ -z "$(v1_dir net_prio $$)" ]; then
    # No v1 net_cls/net_prio here (and v2 has no equivalent): refused.
    run_ctr "$B"
    [ "$RC" != 0 ] || fail "network settings accepted without net_cls"
    assert_contains "$OUT" "linux.resources.network.classID: needs the cgroup v1 net_cls controller, which"
    return 0
  fi
  run_bg net
  assert_file 1048577 "$(v1_dir net_cls "$PID")" net_cls.classid
  assert_contains "$(cat "$(v1_dir net_prio "$PID")/net_prio.ifpriomap")" "lo 5"
}

test_cgroups_rdma() {
  skip_on_runc "haven-runc's messages"
  cfg "$B" '.linux.resources.rdma = {mlx5_0: {hcaHandles: 3, hcaObjects: 10000}}'
  args "$B" sleep 100
  if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
    run_ctr "$B"
    [ "$RC" != 0 ] || fail "rdma limits accepted on a host without rdma"
    assert_contains "$OUT" "linux.resources.rdma"
    return 0
  fi
  skip "rdma devices present: values not checked by this suite"
}

test_cgroups_unified() {
  skip_on_runc "runc refuses unified on hybrid hosts"
  local mode
  mode=$(cg_mode)
  [ "$mode" != v1 ] || skip "no unified hierarchy on this host"
  cfg "$B" '.linux.resources.unified = {"cgroup.procs": "1"}'
  run_ctr "$B"
  [ "$RC" != 0 ] || fail "unified cgroup.procs accepted"
  assert_contains "$OUT" "linux.resources.unified: unified key \"cgroup.procs\" is managed by the runtime and cannot be set"
  cfg "$B" '.linux.resources.unified = {"../x.max": "1"}'
  run_ctr "$B"
  assert_contains "$OUT" "unified key \"../x.max\" must be a file name (no slashes)"
  args "$B" sleep 100
  if [ "$mode" = v2 ]; then
    cfg "$B" '.linux.resources.unified = {"memory.high": "16777216", "pids.max": "33", "cgroup.max.depth": "3"}'
    run_bg unified
    local d
    d=$(v2_dir "$PID")
    assert_file 16777216 "$d" memory.high
    assert_file 33 "$d" pids.max
    assert_file 3 "$d" cgroup.max.depth
    return 0
  fi
  # Hybrid: keys of the unified hierarchy are written there; memory is a
  # v1 controller here, so memory.high names no file and is an error.
  cfg "$B" '.linux.resources.unified = {"memory.high": "16777216"}'
  run_ctr "$B"
  [ "$RC" != 0 ] || fail "unified memory.high accepted on a hybrid host"
  assert_contains "$OUT" "unified key \"memory.high\": no such file in"
  cfg "$B" '.linux.resources.unified = {"cgroup.max.descendants": "7"}'
  run_bg unified
  assert_file 7 "$(v2_dir "$PID")" cgroup.max.descendants
}

# --- clone3(CLONE_INTO_CGROUP) ----------------------------------------------

# assert_in_container_cgroup: init ($PID) is listed in its container cgroup's
# cgroup.procs in the unified hierarchy, the v1 "pids" one (hybrid), and
# the cgroup is the container's (/haven-clone3-test/ID).
assert_in_container_cgroup() {
  local d
  d=$(v2_dir "$PID")
  assert_eq "$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)/haven-clone3-test/$ID" "$d" "unified cgroup of init"
  grep -qx "$PID" "$d/cgroup.procs" || fail "init $PID is not in $d/cgroup.procs"
  if [ "$(cg_mode)" = hybrid ]; then
    d=$(v1_dir pids "$PID")
    case $d in */haven-clone3-test/"$ID") ;; *) fail "v1 pids cgroup of init is $d" ;; esac
  fi
}

# clone3_test_cleanup: the test's container and the cgroup parent it made
# in every hierarchy.
clone3_test_cleanup() {
  rt delete --force "$ID" > /dev/null 2>&1
  local d
  for d in /sys/fs/cgroup/haven-clone3-test /sys/fs/cgroup/*/haven-clone3-test; do
    [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  return 0
}

# Init starts in its cgroup of the unified hierarchy (pure v2, or the
# controller-less one of a hybrid host) by clone3 instead of a write to
# cgroup.procs; on a hybrid host the v1 hierarchies are still written.
test_cgroups_init_cloned_into_cgroup() {
  skip_on_runc "haven-runc's own debug log"
  [ "$(cg_mode)" != v1 ] || skip "no unified hierarchy on this host"
  args "$B" sleep 100
  ID=$(new_id clone3)
  defer clone3_test_cleanup
  cfg "$B" ".linux.cgroupsPath = \"/haven-clone3-test/$ID\""
  rt --debug --log "$WORK/clone3.log" run -d --bundle "$B" "$ID" > /dev/null || fail "run -d failed: $(cat "$WORK/clone3.log")"
  PID=$(rt state "$ID" | jq .pid)
  assert_in_container_cgroup
  grep -q "init $PID started in its cgroup (clone3 CLONE_INTO_CGROUP)" "$WORK/clone3.log" \
    || fail "init was not cloned into its cgroup: $(cat "$WORK/clone3.log")"
}

# Where clone3 answers ENOSYS (an older kernel, a seccomp profile that
# hides it) create falls back to clone(2) and cgroup.procs: init is in
# the same cgroups.
test_cgroups_init_without_clone3_still_placed() {
  skip_on_runc "haven-runc's own fallback"
  [ "$(cg_mode)" != v1 ] || skip "no unified hierarchy on this host"
  local helper
  helper=$(dirname "$RUNTIME")/tests/helpers/without_clone3
  [ -x "$helper" ] || skip "tests/helpers/without_clone3 is not built"
  args "$B" sleep 100
  ID=$(new_id noclone3)
  defer clone3_test_cleanup
  cfg "$B" ".linux.cgroupsPath = \"/haven-clone3-test/$ID\""
  timeout -k 5 30 "$helper" "$RUNTIME" --root "$STATE_ROOT" --debug --log "$WORK/noclone3.log" run -d --bundle "$B" "$ID" > /dev/null \
    || fail "run -d without clone3 failed: $(cat "$WORK/noclone3.log")"
  PID=$(rt state "$ID" | jq .pid)
  assert_in_container_cgroup
  grep -q "clone3 into the cgroup refused (Function not implemented)" "$WORK/noclone3.log" \
    || fail "the fallback was not taken: $(cat "$WORK/noclone3.log")"
}

# --- limits that bite -------------------------------------------------------

test_cgroups_memory_limit_oom_kills() {
  # 16 MiB and no swap beyond it; dd allocates (and fills) a 64 MiB buffer.
  cfg "$B" '.linux.resources.memory = {limit: 16777216, swap: 16777216}'
  args "$B" sleep 100
  run_bg oom
  local out d
  out=$(rt exec "$ID" sh -c 'dd if=/dev/zero of=/dev/null bs=64M count=1 2>/dev/null; echo "dd=$?"' 2>&1)
  assert_contains "$out" "dd=137" "dd beyond the memory limit"
  ctl_dir memory memory "$PID"; d=$CTL_DIR
  if [ "$CTL_V2" = 1 ]; then
    [ "$(awk '$1 == "oom_kill" { print $2 }' "$d/memory.events")" -ge 1 ] || fail "memory.events: no oom_kill"
  else
    [ "$(awk '$1 == "oom_kill" { print $2 }' "$d/memory.oom_control")" -ge 1 ] || fail "memory.oom_control: no oom_kill"
  fi
  # The container's init is still there.
  assert_eq running "$(status_of "$ID")"
}

test_cgroups_pids_limit_bites() {
  cfg "$B" '.linux.resources.pids = {limit: 6}'
  args "$B" sleep 100
  run_bg pidsbite
  local out d
  out=$(rt exec "$ID" sh -c 'for i in $(seq 12); do sleep 5 & done 2>&1; echo started' 2>&1)
  assert_contains "$out" "Resource temporarily unavailable"
  ctl_dir pids pids "$PID"; d=$CTL_DIR
  [ "$(awk '$1 == "max" { print $2 }' "$d/pids.events")" -ge 1 ] || fail "pids.events: no max event"
}

# --- device rules -------------------------------------------------------------

# A config allowing mknod, with nodes of an unused character major (240):
# opening an allowed one fails with ENXIO (no driver), a denied one with
# EPERM from the device cgroup.
devices_config() {
  cfg "$B" '.process.capabilities.bounding += ["CAP_MKNOD"] | .process.capabilities.effective += ["CAP_MKNOD"]
            | .process.capabilities.permitted += ["CAP_MKNOD"] | .root.readonly = false
            | .linux.resources.devices = [{allow: false, access: "rwm"},
                                          {allow: true, type: "c", major: 240, minor: 0, access: "m"},
                                          {allow: true, type: "c", major: 240, minor: 1, access: "rm"}]'
}

test_cgroups_devices_container() {
  devices_config
  args "$B" sh -c 'mknod /tmp/n0 c 240 0 && echo mknod0-ok; mknod /tmp/n1 c 240 1 && echo mknod1-ok
                   mknod /tmp/n2 c 240 2 2>&1 && echo mknod2-ok; cat /tmp/n2 2>&1; cat /tmp/n0 2>&1; cat /tmp/n1 2>&1; echo x 2>&1 > /tmp/n1
                   head -c 3 /dev/zero | wc -c; echo > /dev/null && echo null-ok'
  run_ctr "$B"
  assert_contains "$OUT" "mknod0-ok"
  assert_contains "$OUT" "mknod1-ok"
  # Every container may mknod any node (c *:* m, b *:* m, as runc adds);
  # the rules decide whether it can be opened.
  assert_contains "$OUT" "mknod2-ok"
  assert_contains "$OUT" "cat: can't open '/tmp/n2': Operation not permitted"
  assert_contains "$OUT" "cat: can't open '/tmp/n0': Operation not permitted"
  assert_contains "$OUT" "cat: can't open '/tmp/n1': No such device or address"
  assert_contains "$OUT" "can't create /tmp/n1: Operation not permitted"
  assert_contains "$OUT" "null-ok"
}

test_cgroups_update_devices() {
  skip_on_runc "runc update leaves device rules alone"
  devices_config
  args "$B" sleep 100
  run_bg devupd
  local out
  rt exec "$ID" sh -c 'mknod /tmp/n0 c 240 0' || fail "mknod n0"
  out=$(rt exec "$ID" cat /tmp/n0 2>&1)
  assert_contains "$out" "Operation not permitted"
  printf '{"devices": [{"allow": false, "access": "rwm"}, {"allow": true, "type": "c", "major": 240, "minor": 0, "access": "rwm"}]}' \
    | rt update --resources - "$ID" || fail "update --resources - with devices failed"
  out=$(rt exec "$ID" cat /tmp/n0 2>&1)
  assert_contains "$out" "No such device or address"
  out=$(rt exec "$ID" sh -c 'mknod /tmp/n1 c 240 1 && cat /tmp/n1' 2>&1)
  assert_contains "$out" "Operation not permitted" "240:1 is no longer allowed"
  # An update without devices keeps the rules.
  rt update --pids-limit 50 "$ID" || fail "update --pids-limit"
  out=$(rt exec "$ID" cat /tmp/n0 2>&1)
  assert_contains "$out" "No such device or address"
  if [ "$(cg_mode)" = v2 ]; then
    assert_eq 1 "$("$(dirname "$RUNTIME")/tests/helpers/cgroup_devices_probe" count "$(v2_dir "$PID")")" \
      "device programs attached after the update"
  fi
}

test_cgroups_devices_ebpf() {
  skip_on_runc "haven-runc's eBPF program, through its test helper"
  local probe mnt cg t out
  probe=$(cd "$(dirname "$RUNTIME")" && pwd)/tests/helpers/cgroup_devices_probe
  [ -x "$probe" ] || skip "tests/helpers/cgroup_devices_probe not built (make check builds it)"
  mnt=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
  [ -n "$mnt" ] || skip "no unified hierarchy on this host"
  # On a hybrid host containers get the v1 devices controller; the program
  # is tried on a cgroup of the unified hierarchy that a shell joins.
  cg=$mnt/$CTR_PREFIX-devbpf
  mkdir "$cg" || fail "mkdir $cg"
  defer "rmdir $cg"
  t=$PWD/nodes
  mkdir "$t" && mknod "$t/n0" c 240 0 && mknod "$t/n1" c 240 1 || fail "mknod on the host"
  printf '{"ociVersion": "1.0.2", "linux": {"resources": {"devices": [{"allow": false, "access": "rwm"}, {"allow": true, "type": "c", "major": 240, "minor": 1, "access": "r"}]}, "devices": [{"path": "/dev/x", "type": "c", "major": 240, "minor": 7}]}}' > rules1.json
  "$probe" apply "$cg" rules1.json || fail "attach the device program"
  assert_eq 1 "$("$probe" count "$cg")" "programs attached"
  # (bounded: the shell only opens files)
  out=$(timeout 10 sh -c "echo \$\$ > $cg/cgroup.procs
        cat $t/n0 2>&1; cat $t/n1 2>&1; (echo x > $t/n1) 2>&1; mknod $t/n2 c 240 2 2>&1 && echo n2-made; cat $t/n2 2>&1
        head -c 1 /dev/null && echo null-ok; head -c 3 /dev/zero | wc -c; mknod $t/n7 c 240 7 && echo n7-ok")
  assert_contains "$out" "$t/n0: Operation not permitted"
  assert_contains "$out" "$t/n1: No such device or address"
  assert_contains "$out" "cannot create $t/n1: Operation not permitted"
  assert_contains "$out" "n2-made" "mknod of any node (runc's default rule)"
  assert_contains "$out" "$t/n2: Operation not permitted"
  assert_contains "$out" "null-ok"
  assert_contains "$out" "3"
  assert_contains "$out" "n7-ok" "a device of linux.devices"
  # Replacing: the new program goes in, the old one out.
  printf '{"ociVersion": "1.0.2", "linux": {"resources": {"devices": [{"allow": true, "access": "rwm"}, {"allow": false, "type": "c", "major": 240, "minor": 1, "access": "r"}]}}}' > rules2.json
  "$probe" apply "$cg" rules2.json || fail "replace the device program"
  assert_eq 1 "$("$probe" count "$cg")" "programs attached after replacing"
  out=$(timeout 10 sh -c "echo \$\$ > $cg/cgroup.procs; cat $t/n0 2>&1; cat $t/n1 2>&1")
  assert_contains "$out" "$t/n0: No such device or address"
  assert_contains "$out" "$t/n1: Operation not permitted"
}

# --- update -------------------------------------------------------------------

test_cgroups_update_flags() {
  cfg "$B" '.linux.resources = {memory: {limit: 33554432, swap: 33554432}, cpu: {shares: 1024, quota: 10000, period: 100000}, pids: {limit: 20}}'
  args "$B" sleep 100
  run_bg updflags
  rt update --memory 64m --memory-swap 128m --memory-reservation 32m --cpu-share 256 --cpu-quota 30000 \
    --cpu-period 200000 --pids-limit 40 --cpuset-cpus 0 --cpuset-mems 0 "$ID" || fail "update with flags failed"
  local mem cpu pids cpuset
  ctl_dir memory memory "$PID"; mem=$CTL_DIR
  ctl_dir cpu cpu "$PID"; cpu=$CTL_DIR
  ctl_dir pids pids "$PID"; pids=$CTL_DIR
  ctl_dir cpuset cpuset "$PID"; cpuset=$CTL_DIR
  assert_file 40 "$pids" pids.max
  assert_file 0 "$cpuset" cpuset.cpus
  if [ "$CTL_V2" = 1 ]; then
    assert_file 67108864 "$mem" memory.max
    assert_file 33554432 "$mem" memory.low
    assert_file 35 "$cpu" cpu.weight
    assert_file "30000 200000" "$cpu" cpu.max
  else
    assert_file 67108864 "$mem" memory.limit_in_bytes
    assert_file 33554432 "$mem" memory.soft_limit_in_bytes
    [ -f "$mem/memory.memsw.limit_in_bytes" ] && assert_file 134217728 "$mem" memory.memsw.limit_in_bytes
    assert_file 256 "$cpu" cpu.shares
    assert_file 30000 "$cpu" cpu.cfs_quota_us
    assert_file 200000 "$cpu" cpu.cfs_period_us
  fi
  # The saved config carries the new values: a period-only update keeps
  # the quota, a memory-only one the swap.
  rt update --cpu-period 100000 --memory 48m "$ID" || fail "second update failed"
  if [ "$CTL_V2" = 1 ]; then
    assert_file "30000 100000" "$cpu" cpu.max
    assert_file 50331648 "$mem" memory.max
  else
    assert_file 30000 "$cpu" cpu.cfs_quota_us
    assert_file 100000 "$cpu" cpu.cfs_period_us
    assert_file 50331648 "$mem" memory.limit_in_bytes
    [ -f "$mem/memory.memsw.limit_in_bytes" ] && assert_file 134217728 "$mem" memory.memsw.limit_in_bytes
  fi
  assert_eq running "$(status_of "$ID")"
  # Lowering below the usage with checkBeforeUpdate is refused.
  if ! is_runc; then
    printf '{"memory": {"limit": 4096, "checkBeforeUpdate": true}}' | rt update -r - "$ID" 2> err.txt \
      && fail "limit below usage accepted with checkBeforeUpdate"
    assert_contains "$(cat err.txt)" "is below the current usage"
  fi
  # Memory and swap back to unlimited.
  rt update --memory -1 "$ID" || fail "update --memory -1"
  if [ "$CTL_V2" = 1 ]; then
    assert_file max "$mem" memory.max
  else
    assert_file 9223372036854771712 "$mem" memory.limit_in_bytes
  fi
}

test_cgroups_update_resources_stdin() {
  cfg "$B" '.linux.resources = {memory: {limit: 33554432}, pids: {limit: 20}}'
  args "$B" sleep 100
  run_bg updstdin
  local dev=""
  dev=$(block_device)
  printf '{"memory": {"limit": 67108864}, "pids": {"limit": 30}, "cpu": {"quota": 25000, "period": 100000}}' \
    | rt update --resources - "$ID" || fail "update --resources - failed"
  ctl_dir pids pids "$PID"
  assert_file 30 "$CTL_DIR" pids.max
  local mem cpu
  ctl_dir memory memory "$PID"; mem=$CTL_DIR
  ctl_dir cpu cpu "$PID"; cpu=$CTL_DIR
  if [ "$CTL_V2" = 1 ]; then
    assert_file 67108864 "$mem" memory.max
    assert_file "25000 100000" "$cpu" cpu.max
  else
    assert_file 67108864 "$mem" memory.limit_in_bytes
    assert_file 25000 "$cpu" cpu.cfs_quota_us
  fi
  # From a file, with a throttle (runc 1.1's update ignores throttles).
  if [ -n "$dev" ] && ! is_runc; then
    printf '{"blockIO": {"throttleReadBpsDevice": [{"major": %s, "minor": %s, "rate": 4096}]}}' "${dev%:*}" "${dev#*:}" > res.json
    rt update --resources "$PWD/res.json" "$ID" || fail "update --resources FILE failed"
    local blk
    ctl_dir blkio io "$PID"; blk=$CTL_DIR
    if [ "$CTL_V2" = 1 ]; then
      assert_contains "$(cat "$blk/io.max")" "$dev rbps=4096"
    else
      assert_file "$dev 4096" "$blk" blkio.throttle.read_bps_device
    fi
  fi
  is_runc && return 0
  # Errors: the JSON path, a container that does not exist, a stopped one.
  local out
  out=$(printf '{"memory": {"limit": "lots"}}' | rt update --resources - "$ID" 2>&1) && fail "bad JSON accepted"
  assert_contains "$out" "update: stdin: .memory.limit: expected an integer"
  out=$(printf '{"memory": ' | rt update --resources - "$ID" 2>&1) && fail "truncated JSON accepted"
  assert_contains "$out" "update: stdin: invalid JSON"
  out=$(rt update --memory 1q "$ID" 2>&1) && fail "bad size accepted"
  assert_contains "$out" "update: invalid value for --memory: \"1q\""
  out=$(rt update --l3-cache-schema L3:0=f "$ID" 2>&1) && fail "l3 cache schema accepted"
  assert_contains "$out" "Intel RDT is not supported"
  out=$(rt update --memory 1m "$CTR_PREFIX-nope" 2>&1) && fail "update of a missing container succeeded"
  assert_contains "$out" "container does not exist"
  rt kill "$ID" KILL
  wait_status "$ID" stopped
  out=$(rt update --memory 64m "$ID" 2>&1) && fail "update of a stopped container succeeded"
  assert_contains "$out" "container not running"
}

# --- pause, resume, delete ------------------------------------------------------

test_cgroups_pause_resume_files() {
  args "$B" sh -c 'while true; do sleep 0.1; done'
  run_bg pause
  local d
  rt pause "$ID" || fail "pause"
  assert_eq paused "$(status_of "$ID")"
  ctl_dir freezer "" "$PID"; d=$CTL_DIR
  if [ -n "$d" ] && [ -f "$d/freezer.state" ]; then
    assert_file FROZEN "$d" freezer.state
  else
    d=$(v2_dir "$PID")
    assert_file 1 "$d" cgroup.freeze
    assert_contains "$(cat "$d/cgroup.events")" "frozen 1"
  fi
  rt resume "$ID" || fail "resume"
  assert_eq running "$(status_of "$ID")"
  # delete --force of a paused container: killed, thawed, cgroups gone.
  rt pause "$ID" || fail "pause again"
  local dirs
  dirs=$(for c in memory pids freezer cpu; do v1_dir $c "$PID"; done; v2_dir "$PID")
  rt delete --force "$ID" || fail "delete --force of a paused container"
  local x
  for x in $dirs; do [ -e "$x" ] && fail "cgroup $x left behind"; done
  local i
  for i in $(seq 100); do kill -0 "$PID" 2>/dev/null || break; sleep 0.05; done
  kill -0 "$PID" 2>/dev/null && fail "init survived delete"
  return 0
}

test_cgroups_delete_kills_leftovers() {
  # Without a pid namespace, processes outlive init: delete must kill
  # what is left in the cgroup before removing it.
  cfg "$B" '.linux.namespaces |= map(select(.type != "pid"))'
  args "$B" sh -c 'setsid sleep 300 > /dev/null 2>&1 < /dev/null & echo $! > /dev/null; exit 0'
  local id
  id=$(new_id leftover)
  rt run -d --bundle "$B" "$id" > /dev/null || fail "run -d"
  wait_status "$id" stopped
  local sleeper dirs d
  sleeper=$(pgrep -f "^sleep 300$" | while read -r p; do grep -q "$id" /proc/$p/cgroup 2>/dev/null && echo "$p"; done | head -1)
  [ -n "$sleeper" ] || fail "no leftover process found in the container's cgroup"
  dirs=$(for c in memory pids freezer cpu; do v1_dir $c "$sleeper"; done; v2_dir "$sleeper")
  rt delete "$id" || fail "delete of a stopped container with leftovers"
  local i
  for i in $(seq 100); do kill -0 "$sleeper" 2>/dev/null || break; sleep 0.05; done
  kill -0 "$sleeper" 2>/dev/null && fail "leftover process $sleeper survived delete"
  for d in $dirs; do [ -e "$d" ] && fail "cgroup $d left behind"; done
  return 0
}

# --- misc -----------------------------------------------------------------------

test_cgroups_features() {
  skip_on_runc "runc's features differ"
  assert_eq '{"v1":true,"v2":true,"systemd":true,"systemdUser":false,"rdma":true}' \
    "$(rt features | jq -c .linux.cgroup)"
}

test_cgroups_path_must_be_below_root() {
  skip_on_runc "haven-runc's messages"
  cfg "$B" '.linux.cgroupsPath = "/"'
  run_ctr "$B"
  [ "$RC" != 0 ] || fail "cgroupsPath / accepted"
  assert_contains "$OUT" ".linux.cgroupsPath: cgroup path \"/\" must name a cgroup below the root"
  cfg "$B" '.linux.cgroupsPath = "/a/../../b"'
  run_ctr "$B"
  [ "$RC" != 0 ] || fail "cgroupsPath with .. accepted"
  assert_contains "$OUT" "may not contain \".\" or \"..\""
}
