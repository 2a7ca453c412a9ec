#!/usr/bin/env bash
# N sequential runs of each kind, one after the other:
#   run    `haven run -- /bin/true` under the default policy (a project of
#          its own, the same for every run);
#   runc   `haven-runc run` of a busybox bundle running `true`, a new
#          container id each time.
# Every run must exit 0; the leak checks (lib.sh, load_leaks_check) run
# before, halfway and at the end of each kind, and no process may be left
# in the network namespace the runs were started in.
#
#   sudo tests/load/soak.sh N [KIND...]        (default: run runc)
#
# Prints per kind: wall time, runs/s and failures.
source "$(dirname "$0")/lib.sh"

n=${1:?usage: soak.sh N [KIND...]}
shift
kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(run runc)

# A network namespace of the soak's own (loopback only): whatever a run
# leaves running there (a monitor) is found afterwards.
LOADNS=$LOAD_PREFIX-soak
load_netns "$LOADNS"
load_bundle "$WORK/b-true" '.process.args = ["true"]'
mkdir -p "$WORK/project"

check_ns_empty() {
  local left p
  left=$(ip netns pids "$LOADNS")
  [ -z "$left" ] || load_fail "$1: processes left in the runs' network namespace: $(for p in $left; do printf '%s(%s) ' "$p" "$(cat /proc/$p/comm)"; done)"
}

for kind in "${kinds[@]}"; do
  case $kind in run | runc) ;; *) echo "soak: unknown kind $kind" >&2; exit 2 ;; esac
  load_inventory_snapshot
  bad=0
  t0=$(date +%s%N)
  for ((i = 0; i < n; i++)); do
    if [ "$kind" = run ]; then
      haven_run "$LOADNS" --project "$WORK/project" -- /bin/true > "$WORK/out" 2>&1 < /dev/null
    else
      (
        in_load_cg
        exec timeout -k 5 60 nsenter --net="/run/netns/$LOADNS" "$RUNTIME" --root "$STATE_ROOT" run \
          --bundle "$WORK/b-true" "$LOAD_PREFIX-$i" > "$WORK/out" 2>&1 < /dev/null
      )
    fi
    rc=$?
    if [ $rc != 0 ]; then
      bad=$((bad + 1))
      load_fail "soak $kind #$i: exit status $rc: $(tail -c 300 "$WORK/out")"
      [ "$kind" = runc ] && rt delete --force "$LOAD_PREFIX-$i" > /dev/null 2>&1
    fi
    if [ $i = $((n / 2)) ]; then
      check_ns_empty "soak $kind halfway"
      load_leaks_check "soak $kind halfway"
    fi
  done
  t1=$(date +%s%N)
  awk -v k="$kind" -v n="$n" -v ns=$((t1 - t0)) -v bad="$bad" \
    'BEGIN {printf "soak %-5s %6d in a row: wall %.1f s, %.1f runs/s, %d failed\n", k, n, ns / 1e9, n / (ns / 1e9), bad}'
  check_ns_empty "soak $kind"
  load_leaks_check "soak $kind"
done
load_finish
