#!/usr/bin/env bash
# Docker with its default cgroup driver on a cgroup v2 host, systemd, and
# haven-runc as the runtime: meant to run inside the test VM,
#   tests/vm/run-in-vm.sh -- tests/vm/docker-systemd.sh
# Starts a private dockerd (own socket and data root, no bridge, no
# iptables) with native.cgroupdriver=systemd and the runtime registered by
# `haven install docker`, imports a busybox image, and checks that each
# container is a transient docker-<id>.scope with its limits, that update
# and stats work and that rm -f removes the scope.  Prints "ok NAME" /
# "not ok NAME: reason" and "N passed, N failed"; exits non-zero on
# failures.  Needs root, systemd as PID 1, dockerd/containerd, busybox.
set -u
here=$(cd "$(dirname "$0")" && pwd)
RUNTIME=${RUNTIME:-$(cd "$here/../.." && pwd)/haven-runc}
WORK=$(mktemp -d /tmp/hvt-dsd.XXXXXX)
CTR_PREFIX=hvsd-$$
IMAGE=havenbox:sd
export RUNTIME WORK CTR_PREFIX IMAGE
# dk, wait_for, haven(), assert_*, fail/skip (with FAIL_FILE) and DOCKER_*.
source "$here/../engines/lib.sh"

passed=0
failed=0
DOCKERD_PID=

bail() { # the whole script cannot run: one failure, with the reason
  echo "not ok docker_systemd_setup: $*"
  echo "0 passed, 1 failed"
  exit 1
}

cleanup() {
  if [ -n "$DOCKERD_PID" ]; then
    local ids
    ids=$(dk ps -aq 2>/dev/null)
    [ -z "$ids" ] || dk rm -f $ids > /dev/null 2>&1
    kill -TERM "$DOCKERD_PID" 2>/dev/null
    local i
    for i in $(seq 300); do kill -0 "$DOCKERD_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$DOCKERD_PID" 2>/dev/null
    wait "$DOCKERD_PID" 2>/dev/null
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" = 0 ] || bail "needs root"
[ -d /run/systemd/system ] || bail "systemd is not running"
[ -f /sys/fs/cgroup/cgroup.controllers ] || bail "not a cgroup v2 host"
for tool in dockerd containerd busybox jq systemctl tar; do
  command -v "$tool" > /dev/null || bail "missing $tool"
done
[ -x "$RUNTIME" ] || bail "no runtime at $RUNTIME (build haven first)"

# busybox root filesystem, as every suite builds it.
r=$WORK/rootfs
"$here/../make-rootfs.sh" "$r" || bail "make-rootfs.sh failed"
tar -C "$r" -cf "$WORK/image.tar" .

d=$WORK/docker
mkdir -p "$d/data" "$d/exec"
cat > "$d/daemon.json" <<EOF
{
  "bridge": "none",
  "iptables": false,
  "ip6tables": false,
  "ip-forward": false,
  "ip-masq": false,
  "exec-opts": ["native.cgroupdriver=systemd"],
  "features": {"buildkit": false}
}
EOF
out=$(haven install docker --daemon-json "$d/daemon.json" --runtime "$RUNTIME" 2>&1) || bail "haven install docker: $out"
dockerd --data-root "$d/data" --exec-root "$d/exec" --pidfile "$d/dockerd.pid" -H "unix://$DOCKER_SOCK" \
  --config-file "$d/daemon.json" --containerd-namespace haven-sd --containerd-plugins-namespace haven-sd-plugins \
  > "$d/dockerd.log" 2>&1 < /dev/null &
DOCKERD_PID=$!
# Under emulation (TCG) dockerd takes a while to come up.
wait_for 120 "$DOCKER_CLI" version || bail "dockerd did not start: $(tail -3 "$d/dockerd.log" | tr '\n' ' ')"
out=$(dk import "$WORK/image.tar" "$IMAGE" 2>&1) || bail "docker import: $out"
echo "# dockerd $(dk version -f '{{.Server.Version}}' 2>/dev/null), cgroup driver $(dk info -f '{{.CgroupDriver}}' 2>/dev/null)"

# run_test NAME: the function test_NAME in its own process.
run_test() {
  local t=$1 tdir=$WORK/t-$1
  mkdir -p "$tdir"
  (
    FAIL_FILE=$tdir/.fail
    trap 'run_deferred' EXIT
    cd "$tdir" || exit 1
    "test_$t"
  ) > "$tdir/log" 2>&1 < /dev/null
  local rc=$?
  if [ $rc = 0 ] && [ ! -s "$tdir/.fail" ]; then
    echo "ok $t"
    passed=$((passed + 1))
  else
    echo "not ok $t: $(head -c 400 "$tdir/.fail" 2>/dev/null || echo "exit $rc")"
    sed 's/^/    /' "$tdir/log" | tail -20
    failed=$((failed + 1))
  fi
}

scope_dir() { echo "/sys/fs/cgroup/system.slice/docker-$1.scope"; }

test_cgroup_driver_is_systemd() {
  assert_eq systemd "$(dk info -f '{{.CgroupDriver}}')" "docker's cgroup driver"
  assert_eq 2 "$(dk info -f '{{.CgroupVersion}}')" "docker's cgroup version"
}

test_run_in_scope() {
  local out
  # (stderr apart: the docker CLI warns there that forwarding is off)
  out=$(dk run --rm --runtime=haven --cgroupns host --memory 64m --pids-limit 50 "$IMAGE" \
    sh -c 'cat /proc/self/cgroup' 2> run.err) || fail "docker run failed: $out $(cat run.err)"
  [[ "$out" =~ ^0::/system\.slice/docker-[0-9a-f]{64}\.scope$ ]] || fail "not in a docker-<id>.scope: $out"
}

test_limits_update_stats_rm() {
  local name id pid dir out i
  name=$(new_name lim)
  defer "dk rm -f $name"
  dk run -d --runtime=haven --name "$name" --memory 64m --pids-limit 50 "$IMAGE" sleep 600 > /dev/null \
    || fail "docker run -d failed"
  id=$(dk inspect -f '{{.Id}}' "$name")
  pid=$(dk inspect -f '{{.State.Pid}}' "$name")
  dir=$(scope_dir "$id")
  assert_eq "0::/system.slice/docker-$id.scope" "$(cat "/proc/$pid/cgroup")" "init's cgroup"
  assert_eq active "$(systemctl show "docker-$id.scope" -p ActiveState --value)" "scope ActiveState"
  assert_eq yes "$(systemctl show "docker-$id.scope" -p Delegate --value)" "scope Delegate"
  assert_eq 67108864 "$(cat "$dir/memory.max")" "memory.max"
  assert_eq 50 "$(cat "$dir/pids.max")" "pids.max"
  assert_eq 67108864 "$(systemctl show "docker-$id.scope" -p MemoryMax --value)" "MemoryMax"
  # docker run --memory 64m set memory+swap to 128m: raise both.
  out=$(dk update --memory 128m --memory-swap 256m "$name" 2>&1) || fail "docker update failed: $out"
  assert_eq 134217728 "$(cat "$dir/memory.max")" "memory.max after update"
  assert_eq 134217728 "$(systemctl show "docker-$id.scope" -p MemoryMax --value)" "MemoryMax after update"
  out=$(dk stats --no-stream --format '{{.MemUsage}} {{.PIDs}}' "$name" 2>&1) || fail "docker stats failed: $out"
  assert_contains "$out" "/ 128MiB" "docker stats memory limit"
  [[ "$out" =~ \ [1-9][0-9]*$ ]] || fail "docker stats shows no pids: $out"
  out=$(dk rm -f "$name" 2>&1) || fail "docker rm -f failed: $out"
  for i in $(seq 100); do
    [ "$(systemctl show "docker-$id.scope" -p LoadState --value)" = not-found ] && [ ! -e "$dir" ] && break
    sleep 0.1
  done
  assert_eq not-found "$(systemctl show "docker-$id.scope" -p LoadState --value)" "scope after rm -f"
  [ -e "$dir" ] && fail "$dir left behind"
  return 0
}

for t in cgroup_driver_is_systemd run_in_scope limits_update_stats_rm; do
  run_test "$t"
done
if [ "$failed" -gt 0 ]; then
  echo "# dockerd.log (end):"
  tail -15 "$d/dockerd.log" | sed 's/^/#   /'
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
