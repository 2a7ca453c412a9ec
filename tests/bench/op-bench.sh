#!/usr/bin/env bash
# Benchmark (not a test): the cost of one file-system operation inside the
# sandbox.  tests/bench/op_loop (built here with cc) opens and closes a file
# in a loop and prints its median nanoseconds per operation; this script runs
# it side by side, in interleaved rounds, on the host, under bubblewrap and
# under haven, and prints each setting's median over the rounds.
#
#   sudo tests/bench/op-bench.sh [ROUNDS] [OP] [PATH]   (default 9 open /etc/passwd)
#
# The haven settings, to attribute the cost:
#   haven-run          haven run -- op_loop, default policy
#   haven-run-nosc     the same with `syscalls: {profile: none}`
#   runc-full          haven-runc run of the config `haven policy compile default` gives
#   runc-nolandlock    that config without its Landlock rules (no policy can
#                      say this: the annotation is taken out of config.json)
#   runc-noseccomp     that config without its seccomp filter
#   runc-neither       without both
# runc-* skip haven run's session (monitor, audit trail), which costs the
# command nothing per operation; they show which layer the time goes to.
set -euo pipefail
rounds=${1:-9}
op=${2:-open}
target=${3:-/etc/passwd}
here=$(cd "$(dirname "$0")" && pwd)
haven=${HAVEN_RUNC:-$here/../../haven-runc}
haven_cli=$(dirname "$haven")/haven
work=$(mktemp -d /tmp/haven-opbench.XXXXXX)
# shellcheck source=lib.sh
source "$here/lib.sh"
trap 'bench_forget_project "$work/proj"; rm -rf "$work"' EXIT

# The project is $work/proj: op_loop lies there, visible in every setting
# (haven hides the host's /tmp behind its own tmpfs).  The policy file stays
# outside it (haven refuses a policy the sandbox could rewrite).
mkdir "$work/proj"
cc -O2 -o "$work/proj/op_loop" "$here/op_loop.c"
args=(./op_loop "$op" "$target" 100000 9)

cat > "$work/nosc.yaml" <<'EOF'
name: bench-nosc
extends: default
syscalls:
  profile: none
EOF

(cd "$work/proj" && "$haven_cli" policy compile default --project "$work/proj" -- "${args[@]}") > "$work/config.json"
variant() { # name jq-filter
  mkdir -p "$work/$1/rootfs"
  jq "$2" "$work/config.json" > "$work/$1/config.json"
}
variant runc-full '.'
variant runc-nolandlock 'del(.annotations["run.haven.landlock"])'
variant runc-noseccomp 'del(.linux.seccomp)'
variant runc-neither 'del(.annotations["run.haven.landlock"]) | del(.linux.seccomp)'

settings=(host bwrap haven-run haven-run-nosc runc-full runc-nolandlock runc-noseccomp runc-neither)
run_setting() { # name round
  case $1 in
    host) "${args[@]}" ;;
    bwrap) bwrap --ro-bind / / --unshare-all --die-with-parent "${args[@]}" ;;
    haven-run) "$haven_cli" run -- "${args[@]}" ;;
    haven-run-nosc) "$haven_cli" run --policy "$work/nosc.yaml" -- "${args[@]}" ;;
    runc-*) "$haven" --root "$work/state" run --bundle "$work/$1" "opbench-$$-$1-$2" ;;
  esac
}

declare -A got
cd "$work/proj"
for ((r = 0; r < rounds; r++)); do
  for s in "${settings[@]}"; do
    v=$(run_setting "$s" "$r") || { echo "op-bench: $s failed" >&2; exit 1; }
    got[$s]+="$v "
  done
done

median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "$op $target: ns per operation, median of $rounds interleaved rounds ($(uname -r), $(nproc) cpus, load $(cut -d' ' -f1 /proc/loadavg))"
bw=$(median <<< "${got[bwrap]}")
for s in "${settings[@]}"; do
  m=$(median <<< "${got[$s]}")
  awk -v s="$s" -v m="$m" -v b="$bw" 'BEGIN {printf "  %-16s %8.1f ns  %5.2fx bwrap\n", s, m, m / b}'
done
