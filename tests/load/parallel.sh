#!/usr/bin/env bash
# N container lifecycles at once, in four kinds, one kind at a time
# (all N of a kind started together):
#   runc         haven-runc create, start, wait until stopped, delete, of
#                a busybox bundle (`echo`); the output is checked.
#   runc-egress  the same with the per-container monitor (run.haven.audit:
#                a trail, mkdir answered EPERM through seccomp notify) and
#                an egress allowlist (run.haven.egress: the nftables table
#                and the resolver in the monitor) in a network namespace
#                of the container's own; init's mkdir must be refused and
#                recorded, and a query for an unlisted name answered NXDOMAIN by the
#                resolver and recorded.
#   run          `haven run -- sh -c 'echo ...'` under the default policy.
#   run-allow    `haven run` under an allowlist policy (table, resolver,
#                pasta): an unlisted name must be NXDOMAIN.
# Each run is bounded; a failure is reported with its reason.  Afterwards
# nothing of them may be left (lib.sh, load_leaks_check), and no process
# in the network namespace they all ran in.
#
#   sudo tests/load/parallel.sh N [KIND...]      (default: all four)
#
# Prints per kind: wall time from the first start to the last end, runs/s
# and failures.
source "$(dirname "$0")/lib.sh"

n=${1:?usage: parallel.sh N [KIND...]}
shift
kinds=("$@")
[ ${#kinds[@]} -gt 0 ] || kinds=(runc runc-egress run run-allow)

# Everything runs in a network namespace of its own (LOADNS) with a
# default route over a veth into a second one (TEST-NET addresses, no
# packet leaves the machine): pasta needs a route to attach to,
# and every process left in LOADNS afterwards (a monitor, a pasta) is a
# leak.  nsenter switches the network namespace only (`ip netns exec`
# would remount /sys and hide the cgroup hierarchies).
LOADNS=$LOAD_PREFIX-host
WORLDNS=$LOAD_PREFIX-world
load_world "$LOADNS" "$WORLDNS" lv0 lv1
in_loadns() { nsenter --net="/run/netns/$LOADNS" "$@"; }

mkdir -p "$WORK/res" "$WORK/out" "$WORK/trails" "$WORK/projects"

# --- the kinds: each worker writes "ok" or why not to res/KIND.I ---

load_bundle "$WORK/b-runc" '.process.args = ["sh", "-c", "echo lifecycle-ok"]'
EGRESS_JSON='{"policy":"load","connect":"engine","allow":[{"cidr":"203.0.113.0/24","ports":"443"}],"deny":[],
  "names":[{"name":"api.example.com","subdomains":false,"ports":"443"}],"deny_names":[]}'
load_bundle "$WORK/b-egress" '.process.args = ["sh", "-c", "mkdir /denied; echo mkdir-rc=$?; nslookup evil.example 127.0.0.1 2>&1; exit 0"]
  | .annotations["run.haven.egress"] = $e
  | .linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", listenerMetadata: "load",
                      syscalls: [{names: ["mkdir", "mkdirat"], action: "SCMP_ACT_NOTIFY"}]}' \
  --arg e "$EGRESS_JSON"
cat > "$WORK/allow.yaml" <<'YAML'
name: load-allow
extends: default
network:
  allow: [api.example.com]
YAML

# worker_runc I BUNDLE: one lifecycle; the container's stdout in out/ID.
worker_runc() {
  in_load_cg
  local i=$1 b=$2 kind=$3 id=$LOAD_PREFIX-$3-$1 out=$WORK/out/$LOAD_PREFIX-$3-$1 res=$WORK/res/$3.$1 err m
  if [ "$kind" = runc-egress ]; then
    # Every container its own trail: the annotation is per config, so
    # the worker passes its own copy of the bundle's config.
    mkdir -p "$WORK/b-$id"
    jq --arg t "$WORK/trails/$id.jsonl" '.annotations["run.haven.audit"] = $t' "$b/config.json" > "$WORK/b-$id/config.json"
    b=$WORK/b-$id
  fi
  # The container's stdio is create's: files, never a pipe that the
  # waiting init would hold open.
  if ! in_loadns timeout -k 5 60 "$RUNTIME" --root "$STATE_ROOT" create --bundle "$b" "$id" > "$out" 2> "$out.err" < /dev/null; then
    echo "create: $(tail -c 300 "$out.err")" > "$res"
    rt delete --force "$id" > /dev/null 2>&1
    return
  fi
  if [ -e "$STATE_ROOT/$id/monitor.pid" ]; then
    m=$(cut -d' ' -f1 "$STATE_ROOT/$id/monitor.pid")
    echo "$m" > "$WORK/res/$kind.$i.monitor"
  fi
  if ! err=$(rt start "$id" 2>&1); then
    echo "start: $err" > "$res"
  elif ! wait_stopped "$id"; then
    echo "did not stop within 30 s" > "$res"
  fi
  if ! err=$(rt delete "$id" 2>&1); then
    [ -s "$res" ] || echo "delete: $err" > "$res"
    rt delete --force "$id" > /dev/null 2>&1
  fi
  [ -s "$res" ] && return
  case $kind in
    runc)
      [ "$(cat "$out")" = lifecycle-ok ] || { echo "output: $(head -c 300 "$out")" > "$res"; return; } ;;
    runc-egress)
      grep -q 'mkdir-rc=1' "$out" && grep -q NXDOMAIN "$out" \
        || { echo "output: $(head -c 300 "$out")" > "$res"; return; }
      jq -se 'any(.[]; .event == "denied" and .syscall == "mkdir") and any(.[]; .event == "dns-refused" and .name == "evil.example")' \
        "$WORK/trails/$id.jsonl" > /dev/null 2>&1 \
        || { echo "trail: $(head -c 400 "$WORK/trails/$id.jsonl")" > "$res"; return; } ;;
  esac
  echo ok > "$res"
}

# worker_run I KIND: one `haven run` in a project of its own (its pid is
# recorded: its bundle and state are named after it).
worker_run() {
  local i=$1 kind=$2 p=$WORK/projects/$2-$1 res=$WORK/res/$2.$1 out=$WORK/out/$2-$1 policy=() cmd rc
  mkdir -p "$p"
  if [ "$kind" = run-allow ]; then
    policy=(--policy "$WORK/allow.yaml")
    cmd='busybox nslookup evil.example 2>&1; exit 0'
  else
    cmd='echo run-ok'
  fi
  haven_run "$LOADNS" "${policy[@]}" --project "$p" -- sh -c "$cmd" > "$out" 2>&1 < /dev/null
  rc=$?
  if [ $rc != 0 ]; then
    echo "exit status $rc: $(tail -c 300 "$out")" > "$res"
  elif [ "$kind" = run-allow ] && ! grep -q NXDOMAIN "$out"; then
    echo "output: $(head -c 300 "$out")" > "$res"
  elif [ "$kind" = run ] && [ "$(cat "$out")" != run-ok ]; then
    echo "output: $(head -c 300 "$out")" > "$res"
  else
    echo ok > "$res"
  fi
}

load_inventory_snapshot
for kind in "${kinds[@]}"; do
  case $kind in
    runc) worker=(worker_runc "$WORK/b-runc" runc) ;;
    runc-egress) worker=(worker_runc "$WORK/b-egress" runc-egress) ;;
    run | run-allow) worker=(worker_run "$kind") ;;
    *) echo "parallel: unknown kind $kind" >&2; exit 2 ;;
  esac
  t0=$(date +%s%N)
  pids=()
  for ((i = 0; i < n; i++)); do
    if [ "${worker[0]}" = worker_runc ]; then
      worker_runc "$i" "${worker[1]}" "${worker[2]}" &
    else
      worker_run "$i" "$kind" &
    fi
    pids+=($!)
  done
  wait "${pids[@]}"
  t1=$(date +%s%N)
  bad=0
  for ((i = 0; i < n; i++)); do
    r=$(cat "$WORK/res/$kind.$i" 2>/dev/null || echo "no result")
    if [ "$r" != ok ]; then
      bad=$((bad + 1))
      load_fail "$kind #$i: $r"
    fi
    [ -e "$WORK/res/$kind.$i.monitor" ] && LOAD_PIDS+=("$(cat "$WORK/res/$kind.$i.monitor")")
  done
  awk -v k="$kind" -v n="$n" -v ns=$((t1 - t0)) -v bad="$bad" \
    'BEGIN {printf "parallel %-11s %4d at once: wall %.2f s, %.1f runs/s, %d failed\n", k, n, ns / 1e9, n / (ns / 1e9), bad}'
done

# Nothing of the runs may be left: their processes ended (the monitors
# recorded), and no process at all in the namespace they ran in.
left=$(ip netns pids "$LOADNS")
[ -z "$left" ] || load_fail "processes left in the runs' network namespace: $(for p in $left; do printf '%s(%s) ' "$p" "$(cat /proc/$p/comm)"; done)"
load_leaks_check parallel
load_finish
