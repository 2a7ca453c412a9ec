#!/usr/bin/env bash
# Benchmark (not a test): the rows of LLM-safe-haven's published overhead
# table (tests/bench/README.md), measured on this machine without a sandbox,
# under bubblewrap and under `haven run` (default policy), side by side in
# interleaved rounds; prints each row's median wall time in ms.
#
#   sudo tests/bench/seed-table.sh [ROUNDS]      (default 15)
#
# (/usr/bin/python3, not a pyenv shim on PATH: the shim costs more than
# Python itself.)
# Rows (each is one command, timed from outside, its start-up included):
#   python-100   sh -c 'for i in 1..100; do /usr/bin/python3 -c pass; done': 100 Python
#                starts inside ONE sandbox (the per-start cost of the sandbox)
#   python-1     /usr/bin/python3 -c pass: one sandboxed Python start
#   read-100k    cat of a 100 KB file to /dev/null: one sandboxed command
#   ls           ls -l of the project (20 entries): one sandboxed command
# The table's fourth row, an HTTPS request, is not measured: the default
# policy has no network, and a request to the outside measures the outside.
set -euo pipefail
rounds=${1:-15}
here=$(cd "$(dirname "$0")" && pwd)
haven_cli=${HAVEN:-$here/../../haven}
work=$(mktemp -d /tmp/haven-seedtable.XXXXXX)
# shellcheck source=lib.sh
source "$here/lib.sh"
trap 'bench_forget_project "$work/proj"; rm -rf "$work"' EXIT

mkdir "$work/proj"
head -c 102400 /dev/urandom > "$work/proj/data-100k.bin"
for i in $(seq 1 19); do echo "$i" > "$work/proj/file-$i.txt"; done

declare -A cmd
cmd[python-100]='for i in $(seq 1 100); do /usr/bin/python3 -c pass; done'
cmd[python-1]='exec /usr/bin/python3 -c pass'
cmd[read-100k]='exec cat data-100k.bin'
cmd[ls]='exec ls -l'
rows=(python-100 python-1 read-100k ls)
modes=(host bwrap haven)

run_ms() { # mode row: prints the command's wall time in ms
  local start end
  start=$(date +%s%N)
  case $1 in
    host) sh -c "${cmd[$2]}" ;;
    bwrap) bwrap --ro-bind / / --unshare-all --die-with-parent --chdir "$work/proj" sh -c "${cmd[$2]}" ;;
    haven) "$haven_cli" run -- sh -c "${cmd[$2]}" ;;
  esac > /dev/null || { echo "seed-table: $2 under $1 failed" >&2; return 1; }
  end=$(date +%s%N)
  echo $(( (end - start) / 1000 ))
}

declare -A got
cd "$work/proj"
for ((r = 0; r < rounds; r++)); do
  for row in "${rows[@]}"; do
    for m in "${modes[@]}"; do
      v=$(run_ms "$m" "$row") || exit 1
      got[$row.$m]+="$v "
    done
  done
done

median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)] / 1000}'; }
echo "median wall ms of $rounds interleaved rounds ($(uname -r), $(nproc) cpus, load $(cut -d' ' -f1 /proc/loadavg))"
printf '  %-11s %9s %9s %9s %8s %8s\n' row host bwrap haven "bwrap%" "haven%"
for row in "${rows[@]}"; do
  h=$(median <<< "${got[$row.host]}")
  b=$(median <<< "${got[$row.bwrap]}")
  v=$(median <<< "${got[$row.haven]}")
  awk -v r="$row" -v h="$h" -v b="$b" -v v="$v" \
    'BEGIN {printf "  %-11s %9.2f %9.2f %9.2f %+7.0f%% %+7.0f%%\n", r, h, b, v, 100 * (b / h - 1), 100 * (v / h - 1)}'
done
