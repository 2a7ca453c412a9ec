#!/usr/bin/env bash
# Benchmark (not a test): the start latency of `haven run -- /bin/true`
# under the default policy against bubblewrap doing the least it can,
# `bwrap --ro-bind / / --unshare-all --die-with-parent /bin/true`
# (the target: at most 1.5x bwrap).  The two run in turn
# (A B A B ...) after a few untimed warm-up runs, so that drift of the
# machine's speed hits both alike; each run is timed from outside, from
# the fork of the command to its reaping (bash's $EPOCHREALTIME, no
# process of its own).  Prints each one's min/median/max wall time, the
# ratio of the medians and the median of the pair-by-pair ratios.
#
#   sudo HAVEN=/path/to/haven tests/bench/startup-bench.sh [N]   (default N=50)
#
# HAVEN must be a build without --enable-sanitizers (ASan makes haven
# several times slower); the default is the haven of this checkout.  The
# project is a fresh empty directory; the home is the caller's (the
# default policy's copy-on-write home_allow entries that exist there are
# mounted, as in real use).
set -euo pipefail
n=${1:-50}
warmup=${WARMUP:-3}
here=$(cd "$(dirname "$0")" && pwd)
haven=${HAVEN:-$here/../../haven}
[ -x "$haven" ] || { echo "startup-bench: $haven missing (build first)" >&2; exit 1; }
command -v bwrap >/dev/null || { echo "startup-bench: bwrap missing (Debian package bubblewrap)" >&2; exit 1; }
if ldd "$haven" 2>/dev/null | grep -q libasan; then
  echo "startup-bench: $haven is a sanitizer build: its times say nothing (./configure without --enable-sanitizers)" >&2
  exit 1
fi

work=$(mktemp -d /tmp/haven-startup-bench.XXXXXX)
# shellcheck source=lib.sh
source "$here/lib.sh"
trap 'bench_forget_project "$work/project"; rm -rf "$work"' EXIT
mkdir -p "$work/project"
chmod 755 "$work" "$work/project"
cd "$work/project"

# Output goes to a file, read only when a run fails.
run_haven() { "$haven" run -- /bin/true > "$work/out" 2>&1; }
run_bwrap() { bwrap --ro-bind / / --unshare-all --die-with-parent /bin/true > "$work/out" 2>&1; }
failed() { echo "startup-bench: $1 failed (exit $2): $(cat "$work/out")" >&2; exit 1; }

# Both must work before they are timed.
for ((i = 0; i < (warmup > 0 ? warmup : 1); i++)); do
  run_haven || failed "haven run -- /bin/true" $?
  run_bwrap || failed bwrap $?
done

usec() { # command; prints its wall time in microseconds
  local s e r=0
  s=$EPOCHREALTIME
  "$@" || r=$?
  e=$EPOCHREALTIME
  [ "$r" = 0 ] || failed "a timed run of $1" "$r"
  echo $(( (10#${e/./} - 10#${s/./}) ))
}
: > "$work/times"
for ((i = 0; i < n; i++)); do
  a=$(usec run_haven)
  b=$(usec run_bwrap)
  echo "$a $b" >> "$work/times"
done

stats() { # one number a line: min median max
  sort -g | awk '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; print a[1], m, a[NR]}'
}
ms() { awk '{printf "min %6.2f  median %6.2f  max %6.2f ms", $1 / 1000, $2 / 1000, $3 / 1000}'; }

ha=$(awk '{print $1}' "$work/times" | stats)
bw=$(awk '{print $2}' "$work/times" | stats)
echo "startup: $n runs each, in turn, after $warmup warm-up runs ($(uname -r), $(nproc) cpus)"
printf '  haven run   %s   (haven run -- /bin/true, default policy)\n' "$(echo "$ha" | ms)"
printf '  bwrap       %s   (bwrap --ro-bind / / --unshare-all --die-with-parent /bin/true)\n' "$(echo "$bw" | ms)"
awk -v a="$ha" -v b="$bw" 'BEGIN {split(a, x, " "); split(b, y, " "); printf "  haven run / bwrap, ratio of the medians: %.2f\n", x[2] / y[2]}'
awk '{printf "%.4f\n", $1 / $2}' "$work/times" | stats |
  awk '{printf "  haven run / bwrap, pair by pair: min %.2f  median %.2f  max %.2f\n", $1, $2, $3}'
