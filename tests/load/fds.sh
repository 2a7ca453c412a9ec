#!/usr/bin/env bash
# The long-lived process of a container, its monitor, under load: no fd
# growth.  One container with the per-container monitor (run.haven.audit:
# a trail; mkdir answered EPERM through seccomp notify) and an egress
# allowlist with names (run.haven.egress: the resolver runs in the
# monitor), in a network namespace like an engine's with a DNS server
# upstream (tests/integration/egress_dns.py).  Then, in two halves:
#   - M `haven-runc exec`s, each making a denied mkdir (every exec sends
#     its seccomp listener fd to the monitor, which records the denial);
#   - D DNS queries at the resolver over UDP and TCP (dns_flood.py:
#     allowed names asked upstream, new names each time, refused names,
#     an upstream that never answers).
# The monitor's open fds are counted before (after a warm-up), halfway
# and after; after must not exceed before.  Its RSS is printed, not
# checked (a sanitizer build's allocator keeps freed memory quarantined).
# Every exec must succeed and every denial be refused; the container
# and the monitor must end at delete with nothing left.
#
#   sudo tests/load/fds.sh M D
source "$(dirname "$0")/lib.sh"

m=${1:?usage: fds.sh EXECS QUERIES}
d=${2:?usage: fds.sh EXECS QUERIES}

# The container's network namespace (SB) with a veth to the world (W),
# where the DNS server answers on 198.51.100.54.
SB=$LOAD_PREFIX-sb
W=$LOAD_PREFIX-w
load_world "$SB" "$W" fs0 fw0
ip -n "$W" addr add 198.51.100.54/32 dev lo
cat > "$WORK/zone.json" <<'ZONE'
{"api.example.com": {"A": [["203.0.113.10", 300]], "AAAA": [["2001:db8:2::10", 300]]},
 "silent.svc.example.com": {"silent": true}}
ZONE
ip netns exec "$W" python3 "$SRC_DIR/tests/integration/egress_dns.py" server "$WORK/zone.json" /dev/null \
  "$WORK/dns.ready" 198.51.100.54 > "$WORK/dns.err" 2>&1 &
LOAD_BG+=($!)
for ((i = 0; i < 100; i++)); do [ -e "$WORK/dns.ready" ] && break; sleep 0.05; done
[ -e "$WORK/dns.ready" ] || { echo "fds: the DNS server did not start: $(cat "$WORK/dns.err")" >&2; exit 1; }
printf 'nameserver 198.51.100.54\n' > "$WORK/resolv.conf"

NAMES_JSON='{"policy":"load","connect":"engine","allow":[],"deny":[],
  "names":[{"name":"api.example.com","subdomains":false,"ports":"443"},
           {"name":"svc.example.com","subdomains":true,"ports":"443"}],"deny_names":[]}'
load_rootfs
touch "$WORK/rootfs/etc/resolv.conf"
load_bundle "$WORK/b" '.process.args = ["sleep", "900"]
  | .annotations["run.haven.audit"] = $t | .annotations["run.haven.egress"] = $e
  | .linux.namespaces = [.linux.namespaces[] | select(.type != "network")] + [{type: "network", path: $p}]
  | .mounts += [{destination: "/etc/resolv.conf", type: "bind", source: $r, options: ["rbind", "ro"]}]
  | .linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", listenerMetadata: "load",
                      syscalls: [{names: ["mkdir", "mkdirat"], action: "SCMP_ACT_NOTIFY"}]}' \
  --arg t "$WORK/trail.jsonl" --arg e "$NAMES_JSON" --arg p "/run/netns/$SB" --arg r "$WORK/resolv.conf"

id=$LOAD_PREFIX-fds
load_inventory_snapshot
( in_load_cg; rt create --bundle "$WORK/b" "$id" > "$WORK/init.out" 2>&1 < /dev/null ) || { echo "fds: create failed: $(cat "$WORK/init.out")" >&2; exit 1; }
rt start "$id" || { echo "fds: start failed" >&2; exit 1; }
mon=$(cut -d' ' -f1 "$STATE_ROOT/$id/monitor.pid")
LOAD_PIDS+=("$mon")
[ "$(cat "/proc/$mon/comm")" = haven-monitor ] || { echo "fds: no monitor at pid $mon" >&2; exit 1; }

# execs K: K execs, each a denied mkdir (EPERM through the monitor).
execs() {
  local i out
  for ((i = 0; i < $1; i++)); do
    out=$(in_load_cg; rt exec "$id" sh -c 'mkdir /d 2>&1; echo rc=$?' 2>&1 < /dev/null)
    [[ "$out" == *"Operation not permitted"*"rc=1" ]] || load_fail "exec: $out"
  done
}
# queries K: K queries at the resolver, from the container's namespace.
queries() {
  local out
  out=$(nsenter --net="/run/netns/$SB" timeout -k 5 600 python3 "$LOAD_DIR/dns_flood.py" 127.0.0.1 "$1" 2>&1)
  [ $? = 0 ] || load_fail "dns: $out"
  echo "  $out"
}
# The resolver's upstream attempts end after 2 s (egress_resolver_config.h):
# wait that long before counting, so that pending ones are not counted.
settle() { sleep 3; }
snap() {
  printf '  %-7s monitor fds %3d  rss %6d kB\n' "$1" "$(fd_count "$mon")" "$(rss_kb "$mon")"
}

# A warm-up: the first exec and query set up what the monitor keeps.
execs 5
queries 50 > /dev/null
settle
fd0=$(fd_count "$mon")
t0=$(date +%s%N)
snap before
execs $((m / 2))
queries $((d / 2))
settle
fd1=$(fd_count "$mon")
snap halfway
execs $((m - m / 2))
queries $((d - d / 2))
settle
fd2=$(fd_count "$mon")
snap after
t1=$(date +%s%N)
awk -v m="$m" -v d="$d" -v ns=$((t1 - t0)) 'BEGIN {printf "fds: %d execs, %d queries: wall %.1f s, %.1f execs/s\n", m, d, ns / 1e9, m / (ns / 1e9)}'
[ "$fd1" -le "$fd0" ] && [ "$fd2" -le "$fd0" ] || load_fail "the monitor's fds grew: $fd0 -> $fd1 -> $fd2: $(ls -l /proc/$mon/fd | awk '{print $NF}' | sed "s/:\[.*//" | sort | uniq -c | tr -s " \n" " ")"
denied=$(jq -s '[.[] | select(.event == "denied")] | length' "$WORK/trail.jsonl")
refused=$(jq -s '[.[] | select(.event == "dns-refused")] | length' "$WORK/trail.jsonl")
echo "fds: trail: $denied denied, $refused dns-refused records (rate-limited per second)"
[ "$denied" -gt 0 ] && [ "$refused" -gt 0 ] || load_fail "trail lacks denied or dns-refused records"

rt delete --force "$id" || load_fail "delete"
for ((i = 0; i < 50; i++)); do [ -e "/proc/$mon" ] || break; sleep 0.1; done
left=$(ip netns pids "$SB")
[ -z "$left" ] || load_fail "processes left in the container's network namespace: $left"
# The namespace outlives the container (an engine's): delete removes
# the egress table from it (runtime/egress/egress_netns_record.c).
nft_left=$(ip netns exec "$SB" nft list tables 2>&1)
[ -z "$nft_left" ] || load_fail "after delete, the container's network namespace still has: $nft_left"
load_leaks_check fds
load_finish
