#!/usr/bin/env bash
# Benchmark (not a test): haven serve through the Python SDK, side by side
# with `haven run` and bwrap, in one run (tests/bench/service_bench.py does
# the work; README.md in this directory says what each row means):
#   (a) from Sandbox() to the first instruction of the sandbox's first
#       command, from a warm pool: clock_now (built here, static) prints
#       CLOCK_MONOTONIC as its first act, against the reading Python took
#       just before Sandbox(); claims are paced (each waits until the pool
#       has remade the one before), so each finds the pool full;
#   (b) `haven run --policy offline -- true`, (c) `bwrap --ro-bind / /
#       --dev /dev --proc /proc --unshare-all true`, in turn, wall time;
#   (d) a pooled sandbox's idle memory (PSS and USS of its processes:
#       keeper, monitor, pasta when the policy has them), offline and default;
#   (e) 1,000 code blocks through run_code_blocks in one sandbox, and
#       nothing of it left after (processes, mounts, cgroups, state,
#       bundle, workspace, per-project state).
#
#   sudo [HAVEN=/path/to/haven] tests/bench/service-bench.sh [N] [BLOCKS]   (N=300, BLOCKS=1000)
#
# Runs its own `haven serve` on a private socket (never the user's).  The
# clock program is built in a directory under this one (the sandbox must
# see it: haven hides the host's /tmp and home).
set -euo pipefail
n=${1:-300}
blocks=${2:-1000}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
haven=${HAVEN:-$top/haven}
[ "$(id -u)" = 0 ] || { echo "service-bench: run as root (sudo)" >&2; exit 1; }
[ -x "$haven" ] || { echo "service-bench: $haven missing (build first)" >&2; exit 1; }
command -v bwrap > /dev/null || { echo "service-bench: bwrap missing (Debian package bubblewrap)" >&2; exit 1; }
command -v python3 > /dev/null || { echo "service-bench: python3 missing" >&2; exit 1; }
if ldd "$haven" 2> /dev/null | grep -q libasan; then
  echo "service-bench: $haven is a sanitizer build: its times say nothing" >&2
  exit 1
fi

work=$(mktemp -d /tmp/haven-service-bench.XXXXXX)
bin=$(mktemp -d "$here/.service-bench.XXXXXX")
# shellcheck source=lib.sh
source "$here/lib.sh"
trap 'bench_forget_project "$work/project"; rm -rf "$work" "$bin"' EXIT
chmod 755 "$work" "$bin"
cc -O2 -static -o "$bin/clock_now" "$here/clock_now.c" 2> /dev/null || cc -O2 -o "$bin/clock_now" "$here/clock_now.c"

PYTHONPATH="$top/python${PYTHONPATH:+:$PYTHONPATH}" python3 -B "$here/service_bench.py" \
  --haven "$haven" --clock "$bin/clock_now" --dir "$work" --n "$n" --blocks "$blocks"
