# The egress tests' two namespaces (sourced by the integration and the
# service suites): a "host" joined by veth to a TEST-NET "world", both
# made here and removed by defer, never in the machine's own namespace.
#
#   host eh0 192.0.2.2/24 -- ew0 192.0.2.1 world; world's lo: 198.51.100.54
#   (the DNS stand-in's address), 203.0.113.200 (the unlisted host)
#
# /etc/netns/HOST/resolv.conf points the host at 198.51.100.54.  The
# caller adds its own addresses to the world and starts what listens.

# egress_world_link HOST WORLD: the two namespaces, named by the caller.
egress_world_link() {
  local host=$1 world=$2
  [ -x /usr/bin/pasta ] || skip "pasta missing (Debian package passt)"
  command -v nft > /dev/null || skip "nft missing (Debian package nftables)"
  command -v ip > /dev/null || skip "ip missing (iproute2)"
  ip netns add "$host" || fail "ip netns add $host"
  defer "ip netns del $host"
  ip netns add "$world" || fail "ip netns add $world"
  defer "ip netns del $world"
  mkdir -p "/etc/netns/$host"
  defer "rm -rf /etc/netns/$host"
  echo "nameserver 198.51.100.54" > "/etc/netns/$host/resolv.conf"
  ip link add eh0 netns "$host" type veth peer name ew0 netns "$world" || fail "veth"
  ip -n "$host" link set lo up
  ip -n "$world" link set lo up
  ip -n "$host" addr add 192.0.2.2/24 dev eh0
  ip -n "$world" addr add 192.0.2.1/24 dev ew0
  ip -n "$host" link set eh0 up
  ip -n "$world" link set ew0 up
  ip -n "$host" route add default via 192.0.2.1
  ip -n "$world" addr add 198.51.100.54/32 dev lo
  ip -n "$world" addr add 203.0.113.200/32 dev lo
}
