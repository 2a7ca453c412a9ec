#!/usr/bin/env bash
# Benchmark (not a test): `haven run -- /bin/true` under an allowlist policy
# (egress table, resolver, pasta) against the same policy with
# `network: {mode: none}`, run in turn (A B A B ...) so that drift of the
# machine's speed hits both alike.  Prints each one's min/median/max wall
# time and the median of the pair-by-pair ratios allowlist / none
# (the target: at most 1.5).
#
#   sudo tests/bench/egress-bench.sh [N]        (default N=30)
#
# It runs in a network namespace of its own with a veth to a second one
# holding the default route's gateway (TEST-NET addresses): pasta needs a
# default route to attach to (without one haven runs an allowlist with
# loopback only, which is not what this measures), and no packet leaves
# the machine.  HAVEN=path/to/haven picks the binary (default: the one of
# this checkout; build it without --enable-sanitizers for figures).
set -euo pipefail
n=${1:-30}
here=$(cd "$(dirname "$0")" && pwd)
haven=${HAVEN:-$here/../../haven}
[ "$(id -u)" = 0 ] || { echo "egress-bench: needs root (network namespaces)" >&2; exit 1; }
[ -x "$haven" ] || { echo "egress-bench: $haven missing (build first)" >&2; exit 1; }
[ -x /usr/bin/pasta ] || [ -x /usr/local/bin/pasta ] || { echo "egress-bench: pasta missing (Debian package passt)" >&2; exit 1; }

work=$(mktemp -d /tmp/haven-egress-bench.XXXXXX)
host=hv-eb-host-$$
world=hv-eb-world-$$
cleanup() {
  ip netns del "$host" 2>/dev/null || true
  ip netns del "$world" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

ip netns add "$host"
ip netns add "$world"
ip link add eb0 netns "$host" type veth peer name eb1 netns "$world"
ip -n "$host" link set lo up
ip -n "$world" link set lo up
ip -n "$host" addr add 192.0.2.2/24 dev eb0
ip -n "$world" addr add 192.0.2.1/24 dev eb1
ip -n "$host" link set eb0 up
ip -n "$world" link set eb1 up
ip -n "$host" route add default via 192.0.2.1

# Two policies that differ in their network only.
cat > "$work/allow.yaml" <<'YAML'
name: bench-allow
extends: default
network:
  allow: [example.com]
YAML
cat > "$work/none.yaml" <<'YAML'
name: bench-none
extends: default
network:
  mode: none
YAML
mkdir -p "$work/project"
chmod 755 "$work" "$work/project"

# The timing loop runs inside the namespace: `ip netns exec` (which
# remounts /sys) stays out of every figure.
cat > "$work/loop.sh" <<'LOOP'
set -u
haven=$1 n=$2 allow=$3 none=$4 out=$5
cd "$(dirname "$out")/project"
run() { "$haven" run --policy "$1" -- /bin/true > /dev/null 2>&1; }
# Both must work before they are timed.
"$haven" run --policy "$allow" -- /bin/true || { echo "egress-bench: the allowlist run failed" >&2; exit 1; }
"$haven" run --policy "$none" -- /bin/true || { echo "egress-bench: the mode: none run failed" >&2; exit 1; }
: > "$out"
for ((i = 0; i < n; i++)); do
  s=$(date +%s%N); run "$allow"; e=$(date +%s%N); a=$(( (e - s) / 1000 ))
  s=$(date +%s%N); run "$none"; e=$(date +%s%N); b=$(( (e - s) / 1000 ))
  echo "$a $b" >> "$out"
done
LOOP
ip netns exec "$host" bash "$work/loop.sh" "$haven" "$n" "$work/allow.yaml" "$work/none.yaml" "$work/times"

stats() { # column of $work/times or ratio: min median max
  sort -g | awk '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; print a[1], m, a[NR]}'
}
ms() { awk '{printf "min %.1f  median %.1f  max %.1f ms", $1 / 1000, $2 / 1000, $3 / 1000}'; }

echo "haven run -- /bin/true, $n runs each, in turn ($(uname -r), $(nproc) cpus, passt $(dpkg-query -W -f '${Version}' passt 2>/dev/null || echo '?'))"
printf '  allowlist    %s\n' "$(awk '{print $1}' "$work/times" | stats | ms)"
printf '  mode: none   %s\n' "$(awk '{print $2}' "$work/times" | stats | ms)"
awk '{printf "%.4f\n", $1 / $2}' "$work/times" | stats |
  awk '{printf "  allowlist / none (pair by pair): min %.2f  median %.2f  max %.2f\n", $1, $2, $3}'
