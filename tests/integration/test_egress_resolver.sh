# The egress resolver (runtime/egress/egress_resolver.c) in the test world of
# test_egress_table.sh (egress_world: sandbox and world namespaces, TEST-NET
# addresses, TCP listeners that log).  The world also runs a test DNS
# server (egress_dns.py) on 198.51.100.54 and 2001:db8:2::54 that logs
# every query.  tests/helpers/egress_resolver_tool (built by make check)
# makes the table in the sandbox (port 53 of any address redirected to
# 127.0.0.1:53 and [::1]:53), the listening sockets there, and runs the
# resolver from the root netns with its upstream sockets in the world.

RESOLVER_TOOL=$(cd "$(dirname "$RUNTIME")" && pwd)/tests/helpers/egress_resolver_tool
DNS_PY=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/egress_dns.py

# resolver_world [TOOL OPTIONS...]: the world, its DNS server with ZONE
# (zone.json, written here; tests may rewrite it), and the resolver with
# the rules every test shares plus the options given.  Sets DNSLOG,
# RESOLVER_PID, TOOL_OUT.
resolver_world() {
  [ -x "$RESOLVER_TOOL" ] || skip "tests/helpers/egress_resolver_tool not built (make check builds it)"
  egress_world
  ip -n "$W" addr add 198.51.100.54/32 dev lo
  ip -n "$W" addr add 2001:db8:2::54/128 dev lo
  cat > zone.json <<'EOF'
{"api.example.com": {"A": [["203.0.113.10", 300]], "AAAA": [["2001:db8:2::10", 300]]},
 "web.example.com": {"A": [["198.51.100.10", 300]]},
 "a.zone.example": {"A": [["203.0.113.10", 300]]},
 "b.c.zone.example": {"A": [["203.0.113.10", 300]]},
 "zone.example": {"A": [["203.0.113.10", 300]]},
 "www.cdn.example.com": {"CNAME": ["edge.cdnnet.example", 120]},
 "edge.cdnnet.example": {"CNAME": ["e1.edge.cdnnet.example", 90]},
 "e1.edge.cdnnet.example": {"A": [["203.0.113.20", 60]], "AAAA": [["2001:db8:2::20", 60]]},
 "secret.example.com": {"A": [["203.0.113.10", 300]]},
 "evil.example": {"A": [["203.0.113.10", 300]]},
 "big.example.com": {"truncate": true, "A": [["203.0.113.10", 30]]},
 "private.example.com": {"A": [["10.0.0.5", 300], ["127.0.0.1", 300], ["203.0.113.10", 300]]},
 "nat64.example.com": {"AAAA": [["64:ff9b:1::a00:5", 300], ["64:ff9b:1::cb00:710a", 300],
                                ["2002:a00:5::1", 300], ["::ffff:0:127.0.0.1", 300], ["2001:db8:2::10", 300]]},
 "short.example.com": {"A": [["198.51.100.10", 1]]},
 "slow.example.com": {"silent": true}}
EOF
  DNSLOG=$PWD/dns.log
  : > "$DNSLOG"
  ip netns exec "$W" python3 "$DNS_PY" server "$PWD/zone.json" "$DNSLOG" "$PWD/dns.ready" \
    198.51.100.54 2001:db8:2::54 > dns.err 2>&1 &
  defer "kill $!"
  wait_file "$PWD/dns.ready"
  TOOL_OUT=$PWD/tool.out
  "$RESOLVER_TOOL" "/run/netns/$SB" haven --upstream 198.51.100.54 --upstream-netns "/run/netns/$W" \
    --policy testpol --allow api.example.com 443 --allow web.example.com 80 \
    --allow '*.zone.example' 443 --allow www.cdn.example.com 8080 --allow '*.example.com' 443 \
    --deny secret.example.com any --allow private.example.com 443 "$@" > "$TOOL_OUT" 2> tool.err &
  RESOLVER_PID=$!
  defer "kill $RESOLVER_PID 2>/dev/null"
  local i
  for i in $(seq 100); do grep -q ready "$TOOL_OUT" && break; sleep 0.05; done
  grep -q ready "$TOOL_OUT" || fail "resolver did not start: $(cat tool.err)"
}

# dnsq SERVER NAME TYPE [tcp]: the reply as egress_dns.py prints it.
dnsq() { in_sb python3 "$DNS_PY" query "$@"; }

# expect_refused NAME WHY [RCODE]: RCODE (NXDOMAIN unless given: a
# definite "not found", egress_decide.h) with haven's EDE, and the
# world's DNS server never heard of NAME.  An unlisted name's text ends
# with the line that would allow it (denial_explain.h).
expect_refused() {
  local out allow=""
  [ "$2" = "not in the policy" ] && allow=";_allow_it_with_network:_{allow:_[$1]}"
  out=$(dnsq 192.0.2.1 "$1" A)
  assert_eq "${3:-NXDOMAIN} ede=haven_egress_policy_\"testpol\":_$1_(type_1):_${2// /_}$allow" "$out" "query $1"
  assert_not_contains "$(cat "$DNSLOG")" " $1 " "DNS server log"
}

test_egress_resolver_allowed_v4_v6_connect_at_once() {
  resolver_world
  local out
  out=$(dnsq 192.0.2.1 api.example.com A)
  assert_eq "NOERROR ede= A:203.0.113.10:300" "$out" "A"
  out=$(dnsq 192.0.2.1 api.example.com AAAA)
  assert_eq "NOERROR ede= AAAA:2001:db8:2::10:300" "$out" "AAAA"
  assert_contains "$(cat "$TOOL_OUT")" "pinned api.example.com 203.0.113.10 310 api.example.com"
  # 500 of 500: resolve, then connect the moment the answer is there.
  out=$(timeout 60 ip netns exec "$SB" python3 "$DNS_PY" resolve-connect 192.0.2.1 api.example.com A 443 500)
  echo "$out"
  assert_contains "$out" "ok 500/500" "IPv4 resolve+connect"
  out=$(timeout 60 ip netns exec "$SB" python3 "$DNS_PY" resolve-connect 2001:db8:1::1 api.example.com AAAA 443 500)
  echo "$out"
  assert_contains "$out" "ok 500/500" "IPv6 resolve+connect"
  echo "resolver VmRSS after 1000 queries: $(grep VmRSS /proc/$RESOLVER_PID/status)"
  # Over TCP too, to the resolver directly.
  out=$(dnsq ::1 api.example.com AAAA tcp)
  assert_eq "NOERROR ede= AAAA:2001:db8:2::10:300" "$out" "AAAA over TCP"
}

test_egress_resolver_port_scoped() {
  resolver_world
  assert_eq "NOERROR ede= A:198.51.100.10:300" "$(dnsq 192.0.2.1 web.example.com A)"
  expect_connects 198.51.100.10 80
  expect_refused_fast 198.51.100.10 81
  assert_not_contains "$(in_sb nft list set inet haven pin4)" "198.51.100.10 . 81"
}

test_egress_resolver_wildcard() {
  resolver_world
  assert_eq "NOERROR ede= A:203.0.113.10:300" "$(dnsq 192.0.2.1 a.zone.example A)"
  assert_eq "NOERROR ede= A:203.0.113.10:300" "$(dnsq 192.0.2.1 b.c.zone.example A)"
  expect_connects 203.0.113.10 443
  # The apex of *.zone.example is not allowed, and nobody upstream is
  # asked.  Names below it are: "no data" (NOERROR, no records), never
  # NXDOMAIN, which a cache may take to cover every name below (RFC 8020).
  expect_refused zone.example "not in the policy" NOERROR
  assert_contains "$(dnsq 192.0.2.1 Zone.Example A)" "NOERROR ede=haven" "Zone.Example"
  expect_refused zone.example.evil "not in the policy"
}

test_egress_resolver_cname_chain() {
  resolver_world
  local out
  # A chain through names the policy does not list: pinned for the name
  # asked, with the lowest TTL on the chain for every record.
  out=$(dnsq 192.0.2.1 www.cdn.example.com A)
  assert_eq "NOERROR ede= CNAME:edge.cdnnet.example:60 CNAME:e1.edge.cdnnet.example:60 A:203.0.113.20:60" "$out"
  assert_contains "$(cat "$TOOL_OUT")" "pinned www.cdn.example.com 203.0.113.20 70 www.cdn.example.com"
  expect_connects 203.0.113.20 8080
  out=$(dnsq 192.0.2.1 www.cdn.example.com AAAA)
  assert_contains "$out" "AAAA:2001:db8:2::20:60"
  expect_connects 2001:db8:2::20 8080
  # The CDN name by itself is not listed.
  expect_refused edge.cdnnet.example "not in the policy"
}

test_egress_resolver_unlisted_refused_upstream_never_asked() {
  resolver_world
  expect_refused evil.example "not in the policy"
  assert_contains "$(cat "$TOOL_OUT")" "refused evil.example 1 not in the policy"
  # Any type, any transport, any server address the sandbox picks.
  out=$(dnsq 198.51.100.54 x.evil.example TXT)
  assert_contains "$out" "NXDOMAIN ede=haven_egress_policy_\"testpol\":_x.evil.example_(type_16):_not_in_the_policy"
  out=$(dnsq 8.8.8.8 evil.example A tcp)
  assert_contains "$out" "NXDOMAIN ede=haven" "over TCP to 8.8.8.8"
  assert_eq "" "$(cat "$DNSLOG")" "queries that reached the world's DNS server"
  # Allowed names but other types: REFUSED (the name exists), HTTPS empty.
  assert_contains "$(dnsq 192.0.2.1 api.example.com TXT)" "REFUSED ede=haven_egress_policy_\"testpol\":_api.example.com_(type_16):_type_not_allowed"
  assert_eq "NOERROR ede=" "$(dnsq 192.0.2.1 api.example.com HTTPS)" "HTTPS"
  assert_eq "" "$(cat "$DNSLOG")" "queries that reached the world's DNS server"
  expect_refused_fast 203.0.113.10 443
}

test_egress_resolver_deny_wins() {
  resolver_world
  # *.example.com allows it; the deny rule wins.  *.example.com still
  # allows the names below it: "no data", not NXDOMAIN.
  expect_refused secret.example.com "denied by the policy" NOERROR
  expect_refused_fast 203.0.113.10 443
}

test_egress_resolver_any_server_address_lands_at_haven() {
  resolver_world
  local s
  # `dig @8.8.8.8`, @ the world's real DNS server, @ an IPv6 address:
  # all answered by haven (the table redirects port 53).
  for s in 8.8.8.8 198.51.100.54 2001:db8:2::54 2001:4860:4860::8888; do
    assert_eq "NOERROR ede= A:203.0.113.10:300" "$(dnsq "$s" api.example.com A)" "@$s"
    assert_contains "$(dnsq "$s" evil.example A)" "NXDOMAIN ede=haven" "@$s"
  done
  assert_not_contains "$(cat "$DNSLOG")" "evil"
}

test_egress_resolver_tcp_fallback() {
  resolver_world
  assert_eq "NOERROR ede= A:203.0.113.10:30" "$(dnsq 192.0.2.1 big.example.com A)"
  assert_eq "udp big.example.com A
tcp big.example.com A" "$(cat "$DNSLOG")" "queries upstream"
  expect_connects 203.0.113.10 443
}

test_egress_resolver_private_answers_not_pinned() {
  resolver_world
  assert_eq "NOERROR ede= A:203.0.113.10:300" "$(dnsq 192.0.2.1 private.example.com A)"
  local pins
  pins=$(in_sb nft list set inet haven pin4)
  assert_contains "$pins" "203.0.113.10 . 443"
  assert_not_contains "$pins" "10.0.0.5"
  assert_not_contains "$pins" "127.0.0.1"
}

# The local-use NAT64 prefix (RFC 8215) was once pinned; so were 6to4
# and translated forms of private addresses.  Only the public one is.
test_egress_resolver_nat64_local_and_embedded_private_not_pinned() {
  resolver_world
  assert_eq "NOERROR ede= AAAA:2001:db8:2::10:300" "$(dnsq 192.0.2.1 nat64.example.com AAAA)"
  local pins
  pins=$(in_sb nft list set inet haven pin6)
  assert_contains "$pins" "2001:db8:2::10 . 443"
  assert_not_contains "$pins" "64:ff9b"
  assert_not_contains "$pins" "2002:"
  assert_not_contains "$pins" "ffff"
}

test_egress_resolver_private_answer_allowed_by_cidr() {
  resolver_world --allow-cidr 10.0.0.0/24 443
  assert_eq "NOERROR ede= A:10.0.0.5:300 A:203.0.113.10:300" "$(dnsq 192.0.2.1 private.example.com A)"
  assert_not_contains "$(in_sb nft list set inet haven pin4)" "127.0.0.1"
}

test_egress_resolver_upstream_timeout_servfail() {
  resolver_world --timeout-ms 400
  local start end out
  start=$(date +%s%N)
  out=$(dnsq 192.0.2.1 slow.example.com A)
  end=$(date +%s%N)
  assert_eq "SERVFAIL ede=" "$out" "silent upstream"
  [ $(((end - start) / 1000000)) -lt 1500 ] || fail "SERVFAIL after $(((end - start) / 1000000)) ms"
  # The resolver still answers afterwards.
  assert_eq "NOERROR ede= A:203.0.113.10:300" "$(dnsq 192.0.2.1 api.example.com A)"
}

test_egress_resolver_ttl_expiry_and_renewal() {
  resolver_world --ttl-floor 1 --ttl-cap 2 --grace 1 --allow short.example.com 80
  # TTL 1: pinned for 1 + 1 s, answered with TTL 1.
  assert_eq "NOERROR ede= A:198.51.100.10:1" "$(dnsq 192.0.2.1 short.example.com A)"
  assert_contains "$(cat "$TOOL_OUT")" "pinned short.example.com 198.51.100.10 2"
  expect_connects 198.51.100.10 80
  sleep 2.5
  : > "$WLOG"
  expect_refused_fast 198.51.100.10 80
  # Asked again every second: the pin is renewed and never lapses.
  local i
  for i in 1 2 3 4; do
    echo "renewal round $i"
    dnsq 192.0.2.1 short.example.com A > /dev/null
    sleep 1
    expect_connects 198.51.100.10 80
  done
  # TTLs above the cap are cut in the reply.
  assert_eq "NOERROR ede= A:203.0.113.10:2" "$(dnsq 192.0.2.1 api.example.com A)"
}

test_egress_resolver_death_fails_closed() {
  resolver_world --ttl-floor 1 --ttl-cap 2 --grace 1 --allow short.example.com 80
  assert_eq "NOERROR ede= A:198.51.100.10:1" "$(dnsq 192.0.2.1 short.example.com A)"
  expect_connects 198.51.100.10 80
  kill -9 "$RESOLVER_PID"
  wait "$RESOLVER_PID" 2>/dev/null
  # No answers: the listening sockets went with the process, and the
  # table still sends every port 53 there.
  local out
  out=$(dnsq 192.0.2.1 api.example.com A)
  [[ "$out" == error:* || "$out" == timeout ]] || fail "DNS answered after the resolver died: $out"
  out=$(dnsq 198.51.100.54 api.example.com A tcp)
  [[ "$out" == error:* || "$out" == timeout ]] || fail "DNS over TCP answered after the resolver died: $out"
  assert_not_contains "$(cat "$DNSLOG")" "api.example.com" "world DNS log"
  sleep 2.5
  : > "$WLOG"
  expect_refused_fast 198.51.100.10 80
  assert_not_contains "$(in_sb nft list set inet haven pin4)" "198.51.100.10"
}
