#!/usr/bin/env bash
# Benchmark (not a test): `RUNTIME run` of /bin/true in a busybox bundle,
# for haven-runc and, when installed, runc and crun.  Prints each runtime's
# median wall time over N runs and the ratios to runc and crun.
#
#   sudo tests/bench/run-bench.sh [N]        (default N=50)
#
# crun refuses hybrid cgroup hosts; there it runs with cgroupsPath unset and
# the v2 mount hidden (CRUN_HIDE_UNIFIED=1, default on hybrid hosts), which
# costs it an extra mount namespace.
set -euo pipefail
n=${1:-50}
here=$(cd "$(dirname "$0")" && pwd)
haven=${HAVEN_RUNC:-$here/../../haven-runc}
work=$(mktemp -d /tmp/haven-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT

"$here/../make-bundle.sh" "$work/bundle" "$haven" >/dev/null
jq '.process.args = ["/bin/true"] | .ociVersion = "1.0.2"' "$work/bundle/config.json" > "$work/c" && mv "$work/c" "$work/bundle/config.json"

median_ms() { # runtime-command... ; runs it n times, prints the median in ms
  local times=() i start end
  for ((i = 0; i < n; i++)); do
    start=$(date +%s%N)
    "$@" "bench-$$-$i" >/dev/null 2>&1 || { echo "run failed: $*" >&2; return 1; }
    end=$(date +%s%N)
    times+=($(( (end - start) / 1000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.2f\n", m / 1000}'
}

declare -A med
med[haven-runc]=$(median_ms "$haven" --root "$work/state-haven" run --bundle "$work/bundle")
if command -v runc >/dev/null; then
  med[runc]=$(median_ms runc --root "$work/state-runc" run --bundle "$work/bundle")
fi
if command -v crun >/dev/null; then
  if [ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ]; then
    # Hybrid host: crun only runs with the unified mount hidden and no cgroup.
    crun_cmd=(unshare -m sh -c 'umount -l /sys/fs/cgroup/unified 2>/dev/null; exec crun "$@"' crun)
  else
    crun_cmd=(crun)
  fi
  med[crun]=$(median_ms "${crun_cmd[@]}" --root "$work/state-crun" run --bundle "$work/bundle") || true
fi

# haven run under the default policy against bubblewrap doing the least it can.
haven_cli=$(dirname "$haven")/haven
if [ -x "$haven_cli" ] && command -v bwrap >/dev/null; then
  mkdir -p "$work/project"
  med[haven-run]=$(cd "$work/project" && median_ms sh -c '"$0" run -- /bin/true' "$haven_cli")
  med[bwrap]=$(median_ms sh -c 'bwrap --ro-bind / / --unshare-all --die-with-parent /bin/true')
fi

echo "runtime run /bin/true, median of $n runs ($(uname -r), $(nproc) cpus)"
for r in haven-runc runc crun; do
  [ -n "${med[$r]:-}" ] && printf '  %-11s %8s ms\n' "$r" "${med[$r]}"
done
[ -n "${med[runc]:-}" ] && awk -v h="${med[haven-runc]}" -v r="${med[runc]}" 'BEGIN {printf "  haven-runc / runc = %.2f\n", h / r}'
[ -n "${med[crun]:-}" ] && awk -v h="${med[haven-runc]}" -v r="${med[crun]}" 'BEGIN {printf "  haven-runc / crun = %.2f\n", h / r}'
if [ -n "${med[bwrap]:-}" ]; then
  printf '  %-11s %8s ms   (haven run -- /bin/true, default policy)\n' haven-run "${med[haven-run]}"
  printf '  %-11s %8s ms   (bwrap --ro-bind / / --unshare-all --die-with-parent /bin/true)\n' bwrap "${med[bwrap]}"
  awk -v h="${med[haven-run]}" -v b="${med[bwrap]}" 'BEGIN {printf "  haven run / bwrap = %.2f\n", h / b}'
fi
exit 0
