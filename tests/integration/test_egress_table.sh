# The egress table (runtime/egress/egress_table.c) in a test world: a sandbox
# netns joined by veth to a world netns, TEST-NET addresses only, TCP and
# UDP listeners in the world that log what reaches them.  The table is
# made, pinned and checked through tests/helpers/egress_table_tool (built
# by make check) run inside the sandbox netns.
#
#   sandbox sb0 192.0.2.2/24 2001:db8:1::2/64 -- w0 192.0.2.1 2001:db8:1::1 world
#   world's lo: 198.51.100.10 198.51.100.53 203.0.113.10 203.0.113.20
#               169.254.169.254 2001:db8:2::10 2001:db8:2::20 2001:db8:2::53

EGRESS_TOOL=$(cd "$(dirname "$RUNTIME")" && pwd)/tests/helpers/egress_table_tool
EGRESS_PY=$(dirname "${BASH_SOURCE[0]}")/egress_world.py

# egress_world: make the namespaces and the world's listeners; sets SB, W,
# WLOG (the world's connection log), in_sb (run a command in the sandbox).
egress_world() {
  [ -x "$EGRESS_TOOL" ] || skip "tests/helpers/egress_table_tool not built (make check builds it)"
  command -v nft >/dev/null || skip "nft missing (Debian package nftables)"
  EGRESS_PY=$(cd "$(dirname "$EGRESS_PY")" && pwd)/$(basename "$EGRESS_PY")
  SB=$CTR_PREFIX-esb-$RANDOM
  W=$CTR_PREFIX-ew-$RANDOM
  ip netns add "$SB" || fail "ip netns add $SB"
  defer "ip netns del $SB"
  ip netns add "$W" || fail "ip netns add $W"
  defer "ip netns del $W"
  ip link add sb0 netns "$SB" type veth peer name w0 netns "$W" || fail "veth"
  local a
  ip -n "$SB" link set lo up
  ip -n "$W" link set lo up
  ip -n "$SB" addr add 192.0.2.2/24 dev sb0
  ip -n "$SB" addr add 2001:db8:1::2/64 dev sb0 nodad
  ip -n "$W" addr add 192.0.2.1/24 dev w0
  ip -n "$W" addr add 2001:db8:1::1/64 dev w0 nodad
  ip -n "$SB" link set sb0 up
  ip -n "$W" link set w0 up
  ip -n "$SB" route add default via 192.0.2.1
  ip -n "$SB" -6 route add default via 2001:db8:1::1
  for a in 198.51.100.10 198.51.100.53 203.0.113.10 203.0.113.20 169.254.169.254; do
    ip -n "$W" addr add "$a/32" dev lo
  done
  for a in 2001:db8:2::10 2001:db8:2::20 2001:db8:2::53; do
    ip -n "$W" addr add "$a/128" dev lo
  done
  WLOG=$PWD/world.log
  : > "$WLOG"
  ip netns exec "$W" python3 "$EGRESS_PY" listen "$WLOG" "$PWD/world.ready" \
    tcp:198.51.100.10:80 tcp:198.51.100.10:81 tcp:203.0.113.10:443 tcp:203.0.113.20:8080 \
    tcp:169.254.169.254:80 udp:198.51.100.10:9999 udp:198.51.100.53:53 tcp:198.51.100.53:53 \
    'tcp:[2001:db8:2::10]:443' 'tcp:[2001:db8:2::10]:444' 'tcp:[2001:db8:2::20]:8080' \
    'udp:[2001:db8:2::10]:9999' 'udp:[2001:db8:2::53]:53' 'tcp:[2001:db8:2::53]:53' \
    > "$PWD/world.err" 2>&1 &
  defer "kill $!"
  wait_file "$PWD/world.ready"
}

in_sb() { timeout -k 2 20 ip netns exec "$SB" "$@"; }
tool() { in_sb "$EGRESS_TOOL" "$@"; }

wait_file() {
  local i
  for i in $(seq 100); do [ -e "$1" ] && return 0; sleep 0.05; done
  fail "$1 never appeared ($(cat "$PWD"/*.err 2>/dev/null))"
}

# probe PROTO ADDR PORT: "RESULT MS" from the sandbox.
probe() { in_sb python3 "$EGRESS_PY" connect "$@"; }

# expect_refused_fast ADDR PORT: TCP refused (a reset) in under a second,
# and the world saw nothing.
expect_refused_fast() {
  local out ms
  out=$(probe tcp "$1" "$2")
  ms=${out##* }
  assert_eq refused "${out%% *}" "tcp $1 $2"
  [ "$ms" -lt 1000 ] || fail "tcp $1 $2 refused after $ms ms, not at once"
  assert_not_contains "$(cat "$WLOG")" "tcp $1 $2" "world log"
}

expect_connects() {
  local out
  out=$(probe tcp "$1" "$2")
  assert_eq "connected:hi_$1_$2" "${out%% *}" "tcp $1 $2"
  assert_contains "$(cat "$WLOG")" "tcp $1 $2" "world log"
}

test_egress_table_tcp_allowed_and_refused() {
  egress_world
  # 169.254.0.0/16 is allowed here on purpose: the table denies it anyway.
  tool create "hv_$RANDOM" --allow 198.51.100.10/32 80 --allow 203.0.113.0/24 443 \
    --allow 2001:db8:2::/64 443 --allow 169.254.0.0/16 any --nflog 5 > /dev/null \
    || fail "create failed"
  expect_connects 198.51.100.10 80
  expect_connects 203.0.113.10 443
  expect_connects 2001:db8:2::10 443
  expect_refused_fast 198.51.100.10 81      # allowed address, other port
  expect_refused_fast 203.0.113.20 8080     # other address
  expect_refused_fast 2001:db8:2::10 444
  expect_refused_fast 2001:db8:2::20 8080
  expect_refused_fast 169.254.169.254 80    # metadata, though a CIDR covers it
  local rules
  rules=$(in_sb nft list ruleset)
  assert_contains "$rules" "type filter hook output priority filter; policy drop;"
  assert_contains "$rules" "ip daddr 169.254.0.0/16 goto deny"
  assert_contains "$rules" "ip6 daddr fd00:ec2::254 goto deny"
  assert_contains "$rules" "reject with tcp reset"
}

# Deny wins over allow and over pins; the resolver's mark
# (its upstream queries) passes.
test_egress_table_deny_wins() {
  egress_world
  tool create "hv_$RANDOM" --allow 203.0.113.0/24 any --deny 203.0.113.10/32 443 \
    --allow 2001:db8:2::/64 any --deny 2001:db8:2::/64 8080 \
    --allow 198.51.100.10/32 81 --pin 198.51.100.10 80 60000 --deny 198.51.100.10/32 80 \
    --mark 0x6876 > /dev/null || fail "create failed"
  expect_connects 203.0.113.20 8080
  expect_connects 2001:db8:2::10 443
  expect_connects 198.51.100.10 81
  expect_refused_fast 203.0.113.10 443      # allowed CIDR, denied address and port
  expect_refused_fast 2001:db8:2::20 8080
  expect_refused_fast 198.51.100.10 80      # pinned, but denied
  local rules
  rules=$(in_sb nft list ruleset)
  assert_contains "$rules" "@deny4 goto deny"
  assert_contains "$rules" "@deny6 goto deny"
  assert_contains "$rules" "meta mark 0x00006876 meta l4proto udp accept"
}

test_egress_table_udp_icmp_closed() {
  egress_world
  tool create "hv_$RANDOM" --allow 198.51.100.0/24 any --allow 2001:db8:2::/64 any --nflog 5 > /dev/null \
    || fail "create failed"
  # The CIDRs allow TCP on any port; UDP and ICMP stay closed.
  local out
  # A UDP send the table rejects fails in send() itself (EPERM).
  out=$(probe udp 198.51.100.10 9999)
  assert_eq denied "${out%% *}" "udp 198.51.100.10 9999"
  [ "${out##* }" -lt 1000 ] || fail "udp denied after ${out##* } ms"
  out=$(probe udp 2001:db8:2::10 9999)
  assert_eq denied "${out%% *}" "udp 2001:db8:2::10 9999"
  assert_not_contains "$(cat "$WLOG")" "udp" "world log"
  in_sb busybox ping -c 1 -W 1 198.51.100.10 > ping.out 2>&1 && fail "ping 198.51.100.10 went through"
  in_sb busybox ping -6 -c 1 -W 1 2001:db8:2::10 > ping.out 2>&1 && fail "ping 2001:db8:2::10 went through"
  # ...while TCP on the same addresses works, and IPv6 neighbour
  # discovery with it.
  expect_connects 198.51.100.10 81
  expect_connects 2001:db8:2::10 444
}

test_egress_table_pins_expire_and_renew() {
  egress_world
  local t="hv_$RANDOM" mode out
  tool create "$t" --nflog 5 > /dev/null || fail "create failed"
  expect_refused_fast 203.0.113.20 8080
  mode=$(tool pin "$t" 203.0.113.20 8080 1500 2001:db8:2::20 8080 1500) || fail "pin failed"
  # What the probe chose on this kernel (re-add refreshes since 6.12).
  echo "refresh mode: $mode"
  [[ "$mode" == re-add || "$mode" == delete+add ]] || fail "unknown refresh mode $mode"
  expect_connects 203.0.113.20 8080
  expect_connects 2001:db8:2::20 8080
  sleep 2.5
  : > "$WLOG"
  expect_refused_fast 203.0.113.20 8080
  expect_refused_fast 2001:db8:2::20 8080
  # Renewal, both ways: pinned for 2 s, renewed for 6 s after 1 s, still
  # open at 3.5 s.
  for mode in readd delete-add; do
    tool pin "$t" --mode "$mode" 203.0.113.20 8080 2000 > /dev/null || fail "pin ($mode) failed"
    sleep 1
    tool pin "$t" --mode "$mode" 203.0.113.20 8080 6000 > /dev/null || fail "renew ($mode) failed"
    sleep 2.5
    out=$(probe tcp 203.0.113.20 8080)
    assert_eq "connected:hi_203.0.113.20_8080" "${out%% *}" "renewed pin ($mode)"
    tool pin "$t" --mode "$mode" 203.0.113.20 8080 1 > /dev/null || fail "shorten ($mode) failed"
    sleep 0.5
  done
}

test_egress_table_dns_redirected() {
  egress_world
  local t="hv_$RANDOM" out
  # The resolver's stand-in, inside the sandbox netns.
  ip netns exec "$SB" python3 "$EGRESS_PY" listen "$PWD/resolver.log" "$PWD/resolver.ready" \
    udp:127.0.0.1:5353 tcp:127.0.0.1:5353 'udp:[::1]:5353' 'tcp:[::1]:5353' > resolver.err 2>&1 &
  defer "kill $!"
  wait_file "$PWD/resolver.ready"
  tool create "$t" --dns4 127.0.0.1 5353 --dns6 ::1 5353 --nflog 5 > /dev/null || fail "create failed"
  out=$(probe udp 198.51.100.53 53)
  assert_eq "reply:hi_127.0.0.1_5353" "${out%% *}" "udp 198.51.100.53 53"
  out=$(probe tcp 198.51.100.53 53)
  assert_eq "connected:hi_127.0.0.1_5353" "${out%% *}" "tcp 198.51.100.53 53"
  out=$(probe udp 2001:db8:2::53 53)
  assert_eq "reply:hi_::1_5353" "${out%% *}" "udp [2001:db8:2::53]:53"
  out=$(probe tcp 2001:db8:2::53 53)
  assert_eq "connected:hi_::1_5353" "${out%% *}" "tcp [2001:db8:2::53]:53"
  out=$(probe udp 192.0.2.1 53)
  assert_eq "reply:hi_127.0.0.1_5353" "${out%% *}" "udp 192.0.2.1 53 (the gateway)"
  # The world's DNS server saw none of it.
  assert_eq "" "$(cat "$WLOG")" "world log"
  assert_eq 5 "$(wc -l < resolver.log)" "queries at the resolver"
  # Without a redirect target, DNS is closed like other UDP.
  tool delete "$t" || fail "delete failed"
  tool create "$t" > /dev/null || fail "create without DNS failed"
  out=$(probe udp 198.51.100.53 53)
  assert_eq denied "${out%% *}" "udp 198.51.100.53 53 without a resolver"
  assert_eq "" "$(cat "$WLOG")" "world log"
}

test_egress_table_unprivileged_cannot_touch() {
  egress_world
  local t="hv_$RANDOM" fp out
  command -v setpriv >/dev/null || skip "setpriv missing (util-linux)"
  fp=$(tool create "$t" --allow 203.0.113.0/24 443) || fail "create failed"
  # Root without CAP_NET_ADMIN, as a sandboxed process is.
  out=$(in_sb setpriv --inh-caps=-all --bounding-set=-all nft list ruleset 2>&1) \
    && fail "nft list ruleset without CAP_NET_ADMIN worked: $out"
  assert_contains "$out" "Operation not permitted" "nft list without CAP_NET_ADMIN"
  out=$(in_sb setpriv --inh-caps=-all --bounding-set=-all nft add rule inet "$t" output accept 2>&1) \
    && fail "nft add rule without CAP_NET_ADMIN worked"
  out=$(in_sb setpriv --inh-caps=-all --bounding-set=-all nft delete table inet "$t" 2>&1) \
    && fail "nft delete table without CAP_NET_ADMIN worked"
  out=$(in_sb setpriv --inh-caps=-all --bounding-set=-all "$EGRESS_TOOL" pin "$t" 198.51.100.10 80 60000 2>&1) \
    && fail "pin without CAP_NET_ADMIN worked"
  assert_contains "$out" "Operation not permitted" "pin without CAP_NET_ADMIN"
  tool verify "$t" "$fp" || fail "table changed"
  expect_refused_fast 198.51.100.10 80
  # The check sees a change made with the capability, and a table gone.
  in_sb nft add rule inet "$t" output accept || fail "nft add rule as root"
  out=$(tool verify "$t" "$fp" 2>&1) && fail "verify missed an added rule"
  assert_contains "$out" "egress table inet $t changed since it was made"
  tool delete "$t" || fail "delete failed"
  out=$(tool verify "$t" "$fp" 2>&1) && fail "verify missed a deleted table"
  assert_contains "$out" "egress table inet $t is gone"
  assert_eq "" "$(in_sb nft list tables)" "tables after delete"
}

test_egress_table_failed_batch_leaves_nothing() {
  egress_world
  local out
  # A pin whose timeout the kernel refuses: the last message of the
  # batch, after the table, sets, chains and rules.
  out=$(tool create hv_bad --allow 203.0.113.0/24 443 --pin 203.0.113.9 443 18446744073709551615 2>&1) \
    && fail "create with an invalid element succeeded"
  assert_contains "$out" "create egress table hv_bad: element 203.0.113.9 . 443 (timeout 18446744073709551615 ms) of set pin4: Numerical result out of range"
  assert_eq "" "$(in_sb nft list tables)" "tables after a failed batch"
  # A second create of an existing table fails and leaves the first as it was.
  local fp
  fp=$(tool create hv_ok --allow 203.0.113.0/24 443) || fail "create failed"
  out=$(tool create hv_ok --allow 198.51.100.0/24 any 2>&1) && fail "second create succeeded"
  assert_contains "$out" "table inet hv_ok: File exists"
  tool verify hv_ok "$fp" || fail "first table changed"
  expect_connects 203.0.113.10 443
  expect_refused_fast 198.51.100.10 80
}

test_egress_table_nflog_records() {
  egress_world
  local t="hv_$RANDOM" i
  tool create "$t" --allow 203.0.113.0/24 443 --nflog 17 > /dev/null || fail "create failed"
  in_sb "$EGRESS_TOOL" nflog 17 2 10 > nflog.out 2> nflog.err &
  local listener=$!
  defer "kill $listener"
  for i in $(seq 100); do grep -q listening nflog.err && break; sleep 0.05; done
  grep -q listening nflog.err || fail "nflog listener did not start: $(cat nflog.err)"
  expect_refused_fast 198.51.100.10 81
  expect_refused_fast 2001:db8:2::10 444
  wait "$listener" || fail "nflog listener saw $(wc -l < nflog.out) of 2 records: $(cat nflog.out nflog.err)"
  assert_contains "$(cat nflog.out)" "haven-egress tcp 198.51.100.10 81"
  assert_contains "$(cat nflog.out)" "haven-egress tcp 2001:db8:2::10 444"
}

test_egress_table_dns_before_docker_rewrite() {
  egress_world
  command -v iptables-nft >/dev/null || skip "iptables-nft missing (comes with docker.io)"
  local t="hv_$RANDOM" out
  # Docker's embedded DNS: in the container's netns, iptables' nat OUTPUT
  # (priority -100) sends 127.0.0.11:53 to the resolver's real port.
  ip netns exec "$SB" python3 "$EGRESS_PY" listen "$PWD/resolver.log" "$PWD/resolver.ready" \
    udp:127.0.0.1:5353 udp:127.0.0.11:5399 > resolver.err 2>&1 &
  defer "kill $!"
  wait_file "$PWD/resolver.ready"
  in_sb iptables-nft -t nat -A OUTPUT -d 127.0.0.11 -p udp --dport 53 -j DNAT --to-destination 127.0.0.11:5399 \
    || fail "iptables-nft"
  assert_contains "$(in_sb nft list chain ip nat OUTPUT)" "type nat hook output priority -100;" \
    "iptables' nat OUTPUT priority"
  out=$(probe udp 127.0.0.11 53)
  assert_eq "reply:hi_127.0.0.11_5399" "${out%% *}" "127.0.0.11:53 before the table"
  tool create "$t" --dns4 127.0.0.1 5353 --mark 0x4856 > /dev/null || fail "create failed"
  # The table's nat chain comes first and maps the connection: Docker's
  # rewrite no longer sees it.
  out=$(probe udp 127.0.0.11 53)
  assert_eq "reply:hi_127.0.0.1_5353" "${out%% *}" "127.0.0.11:53 with the table"
  # The resolver's own upstream query (marked) passes to Docker's.
  out=$(probe udp 127.0.0.11 53 0x4856)
  assert_eq "reply:hi_127.0.0.11_5399" "${out%% *}" "marked query to 127.0.0.11:53"
}
