#!/usr/bin/env bash
# Pods through CRI on the CRI tests' private containerd (tests/cri): the
# start of a pod under haven's runtime handlers against runc's, and the
# memory a pod costs under a haven handler.
#
#   sudo tests/bench/cri-bench.sh [start] [memory]     # both by default
#
# start:  N pods (default 20, after WARMUP=2 rounds) under each handler of
#         HANDLERS (default "runc haven-default"), interleaved: each round
#         starts one pod per handler, the order turning by one each round.
#         A pod is timed from RunPodSandbox through CreateContainer and
#         StartContainer until its command's first line is in its CRI log,
#         all calls from one Node process (tests/bench/cri-bench.js: a
#         program start per call would cost more than the difference).
#         Prints min/median/max, the median of each step, the ratio of
#         the medians to the first handler's and the median of the ratios
#         round by round.
# memory: MEM_PODS pods (default 100) under MEM_HANDLER (default
#         haven-default), each a pause container and one `sleep`, all
#         running at once; then the proportional set size (PSS, from
#         /proc/PID/smaps_rollup) of haven's monitors (one per container:
#         monitor.pid in the runtime's state), the shims and the pause
#         processes, per pod; private (USS) and resident (RSS) sizes
#         beside.  Then every pod is removed.
#
# Runs inside the harness (tests/cri/run.sh --run), which starts
# containerd, checks that every pod left nothing and removes it all.  The
# summary goes to stdout and to SUMMARY (default /tmp/cri-bench-DATE.txt).
# Take the lock the CRI tests take: flock /tmp/haven-cri.lock ...
set -u
here=$(cd "$(dirname "$0")" && pwd)

if [ -z "${CRI_BENCH_INNER:-}" ]; then
  [ "$(id -u)" = 0 ] || { echo "cri-bench.sh needs root"; exit 77; }
  : "${SUMMARY:=/tmp/cri-bench-$(date -u +%Y%m%dT%H%M%S).txt}"
  export SUMMARY CRI_BENCH_INNER=1
  "$here/../cri/run.sh" --run "$here/cri-bench.sh" "$@"
  rc=$?
  echo "# summary in $SUMMARY"
  exit $rc
fi

source "$here/../cri/lib.sh"
export CGROUP_PARENT
: "${N:=20}" "${WARMUP:=2}" "${HANDLERS:=runc haven-default}"
: "${MEM_PODS:=100}" "${MEM_HANDLER:=haven-default}"
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(start memory)
BENCH_JS=$here/cri-bench.js
# Every pod and container made (cri-bench.js notes them), for
# nothing_left_by_bench.
BENCH_PODS=$PWD/bench-pods
BENCH_CONTAINERS=$PWD/bench-containers
export BENCH_PODS BENCH_CONTAINERS
: > "$BENCH_PODS"
: > "$BENCH_CONTAINERS"

say() { echo "$*" | tee -a "$SUMMARY"; }
machine() {
  echo "$(uname -r), $(nproc) cpus, load $(cut -d' ' -f1-3 /proc/loadavg), $RUNTIME $(git -C "$(dirname "$RUNTIME")" describe --always --dirty 2> /dev/null)"
}

bench_start() {
  local d=$PWD
  say "# pod start through CRI, $N interleaved rounds after $WARMUP, $(date -u +%FT%TZ), $(machine)"
  # shellcheck disable=SC2086 # the handlers, one word each
  node "$BENCH_JS" start "$d" "$N" "$WARMUP" $HANDLERS || return 1
  say "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
  # min/median/max of the whole, median of each step; ratios to the first
  # handler: of the medians, and the median of the ratios round by round.
  jq -rs --arg base "${HANDLERS%% *}" '
    def med: sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
    def f: . * 10 | round / 10;
    (map(select(.handler == $base)) | map({key: (.round | tostring), value: .total}) | from_entries) as $b
    | ([.[] | select(.handler == $base) | .total] | med) as $bmed
    | "  handler              n     min  median     max |  run create  start     up |  remove | x median  x rounds",
      (group_by(.handler) | sort_by(.[0].handler != $base)[] | . as $g
       | ($g | map(.total)) as $t
       | ($g | map(.total / $b[.round | tostring]) | med) as $rr
       | "  \($g[0].handler | .[0:18] | . + " " * (18 - length)) \($t | length | tostring | (" " * (4 - length)) + .)"
         + " \([($t | min), ($t | med), ($t | max)] | map(f | tostring | (" " * (7 - length)) + .) | join(" "))"
         + " | \([($g | map(.run) | med), ($g | map(.create) | med), ($g | map(.start) | med), ($g | map(.up) | med)] | map(f | tostring | (" " * (5 - length)) + .) | join("  "))"
         + " | \($g | map(.remove) | med | f | tostring | (" " * (7 - length)) + .)"
         + " | \(($t | med) / $bmed * 1000 | round / 1000 | tostring | (" " * (8 - length)) + .)"
         + "  \($rr * 1000 | round / 1000 | tostring | (" " * (8 - length)) + .)"),
      "  (ms; steps: RunPodSandbox, CreateContainer, StartContainer, then until the command ran; x: against \($base))"
  ' "$d/start.jsonl" | tee -a "$SUMMARY"
}

# kib PID: "PSS USS RSS" in KiB from smaps_rollup (0 0 0 if it is gone).
kib() {
  awk '/^Pss:/ {p = $2} /^Private_(Clean|Dirty):/ {u += $2} /^Rss:/ {r = $2} END {print p + 0, u + 0, r + 0}' \
    "/proc/$1/smaps_rollup" 2> /dev/null || echo 0 0 0
}

bench_memory() {
  local ids=$PWD/mem-pods pod ctr pid id rows=$PWD/mem-rows
  say "# memory of $MEM_PODS pods under $MEM_HANDLER (a pause container and a sleep each), $(date -u +%FT%TZ), $(machine)"
  local t0=$EPOCHREALTIME
  if ! node "$BENCH_JS" up "$MEM_HANDLER" "$MEM_PODS" "$ids"; then
    [ -s "$ids" ] && node "$BENCH_JS" down "$ids"
    return 1
  fi
  say "# $MEM_PODS pods up in $(elapsed "$t0") s; load $(cut -d' ' -f1-3 /proc/loadavg)"
  sleep 2
  while read -r pod ctr; do
    pid=$(cat "$CTRD_STATE/io.containerd.runtime.v2.task/k8s.io/$pod/init.pid")
    echo "pause $(kib "$pid")"
    # The shim reaps the pod's processes (a subreaper): the pause's parent.
    echo "shim $(kib "$(awk '/^PPid:/ {print $2}' "/proc/$pid/status")")"
    echo "container $(kib "$(cat "$CTRD_STATE/io.containerd.runtime.v2.task/k8s.io/$ctr/init.pid")")"
    for id in "$pod" "$ctr"; do
      if [ -f "$CTRD_RUN/runc/k8s.io/$id/monitor.pid" ]; then
        # "PID STARTTIME"
        echo "monitor $(kib "$(cut -d' ' -f1 "$CTRD_RUN/runc/k8s.io/$id/monitor.pid")")"
      fi
    done
  done < "$ids" > "$rows"
  t0=$EPOCHREALTIME
  node "$BENCH_JS" down "$ids" || return 1
  awk -v pods="$MEM_PODS" '
    { n[$1]++; p[$1] += $2; u[$1] += $3; r[$1] += $4; if ($2 == 0) gone[$1]++ }
    END {
      printf "  per pod (KiB)          PSS     USS     RSS   processes\n"
      split("monitor shim pause container", k, " ")
      for (i = 1; i <= 4; i++) if (n[k[i]])
        printf "  %-18s %7.0f %7.0f %7.0f   %d%s\n", k[i], p[k[i]] / pods, u[k[i]] / pods, r[k[i]] / pods, n[k[i]],
          gone[k[i]] ? " (" gone[k[i]] " unreadable)" : ""
      if (!n["monitor"]) printf "  no monitor (the handler runs none)\n"
      else printf "  monitor per pod: %.2f MiB PSS (%.2f MiB private)\n", p["monitor"] / pods / 1024, u["monitor"] / pods / 1024
    }' "$rows" | tee -a "$SUMMARY"
  say "# removed in $(elapsed "$t0") s"
}

elapsed() {
  local now=$EPOCHREALTIME
  local ds=$(((${now/[.,]/} - ${1/[.,]/}) / 100000))
  echo "$((ds / 10)).$((ds % 10))"
}

# After the last pod: what every pod of the bench left, in one pass (the
# harness's check of each pod, pod_leftovers, costs seconds a pod through
# node: minutes for a bench's pods).  Each pod's cgroup (kubelet's part,
# below CGROUP_PARENT) is removed where it is empty, and pod_leftovers
# then looks at everything at once: no pod or container listed by CRI or
# containerd, no snapshot, shim, process, mount, cgroup or runtime state
# of any of the ids, no network namespace, veth or address, nothing below
# CGROUP_PARENT.  Two pods (the first and the last) also go through the
# harness's own check after the run.
nothing_left_by_bench() {
  local h pod cg left
  [ -s "$BENCH_PODS" ] || return 0
  if ! OUT=$(cri ListContainers 2>&1) || [ "$(json '.containers | length')" != 0 ]; then
    echo "containers left: $OUT"
    return 1
  fi
  for h in $(awk '{ for (i = 7; $i != "-"; i++) ; if ($(i + 1) == "cgroup" || $(i + 1) == "cgroup2") print $5 }' /proc/self/mountinfo); do
    while read -r pod cg; do
      [ -d "$h$cg" ] && rmdir "$h$cg" 2> /dev/null
    done < "$BENCH_PODS"
  done
  # 24 ids a pass: leaks.sh makes one pattern of all its ids and paths,
  # and one argument may not pass 128 KiB (about 140 ids).
  local ids=() i
  mapfile -t ids < <(cut -d' ' -f1 "$BENCH_PODS"; cat "$BENCH_CONTAINERS")
  for ((i = 0; i < ${#ids[@]}; i += 24)); do
    if ! left=$(pod_leftovers "${ids[i]}" "$CGROUP_PARENT" "${ids[@]:i:24}"); then
      echo "left by the bench's $(wc -l < "$BENCH_PODS") pods:"
      echo "$left" | head -20
      return 1
    fi
  done
  say "# nothing left by the $(wc -l < "$BENCH_PODS") pods (pod_leftovers over all their ids)"
  { head -1 "$BENCH_PODS"; tail -1 "$BENCH_PODS"; } >> "$WORK/pods"
}

rc=0
for part in "${parts[@]}"; do
  case $part in
    start) bench_start || rc=1 ;;
    memory) bench_memory || rc=1 ;;
    *) echo "unknown part $part (start, memory)"; rc=1 ;;
  esac
done
nothing_left_by_bench || rc=1
exit $rc
