# Connectivity through pasta (runtime/egress/egress_pasta.c) behind the egress
# table.  pasta's outside is a "host" network namespace made by the test,
# joined by veth to a TEST-NET world, so nothing reaches the real
# machine's network; tests/helpers/egress_pasta_tool (built by make check)
# runs in the host namespace and makes the sandbox's namespace, the table
# and pasta, then runs a command in the sandbox.
#
#   host ph0 192.0.2.2/24 192.0.2.3 2001:db8:1::2/64 -- pw0 192.0.2.1 2001:db8:1::1 world
#   host's own: lo 127.0.0.1 ::1, a second veth pair (10.9.9.9, fd99::9)
#   world's lo: 198.51.100.10 198.51.100.53 203.0.113.10 2001:db8:2::10 2001:db8:2::53

PASTA_TOOL=$(cd "$(dirname "$RUNTIME")" && pwd)/tests/helpers/egress_pasta_tool
PASTA_PY=$(dirname "${BASH_SOURCE[0]}")/egress_world.py

# pasta_world: sets PH (host netns), PW (world), PWLOG and PHLOG (what the
# world's and the host's listeners saw).
pasta_world() {
  [ -x "$PASTA_TOOL" ] || skip "tests/helpers/egress_pasta_tool not built (make check builds it)"
  [ -x /usr/bin/pasta ] || [ -x /usr/local/bin/pasta ] || skip "pasta missing (Debian package passt)"
  PASTA_PY=$(cd "$(dirname "$PASTA_PY")" && pwd)/$(basename "$PASTA_PY")
  PH=$CTR_PREFIX-ph-$RANDOM
  PW=$CTR_PREFIX-pw-$RANDOM
  ip netns add "$PH" || fail "ip netns add $PH"
  defer "ip netns del $PH"
  ip netns add "$PW" || fail "ip netns add $PW"
  defer "ip netns del $PW"
  ip link add ph0 netns "$PH" type veth peer name pw0 netns "$PW" || fail "veth"
  # The host's other interface (docker0, a VPN...): a veth pair of its own.
  ip link add px0 netns "$PH" type veth peer name px1 netns "$PH" || fail "veth px0"
  local a
  ip -n "$PH" link set lo up
  ip -n "$PW" link set lo up
  ip -n "$PH" addr add 192.0.2.2/24 dev ph0
  ip -n "$PH" addr add 2001:db8:1::2/64 dev ph0 nodad
  ip -n "$PW" addr add 192.0.2.1/24 dev pw0
  ip -n "$PW" addr add 2001:db8:1::1/64 dev pw0 nodad
  ip -n "$PH" addr add 10.9.9.9/32 dev px0
  ip -n "$PH" addr add fd99::9/128 dev px0 nodad
  for a in ph0 px0 px1; do ip -n "$PH" link set "$a" up; done
  ip -n "$PW" link set pw0 up
  ip -n "$PH" route add default via 192.0.2.1
  ip -n "$PH" -6 route add default via 2001:db8:1::1
  for a in 198.51.100.10 198.51.100.53 203.0.113.10; do
    ip -n "$PW" addr add "$a/32" dev lo
  done
  for a in 2001:db8:2::10 2001:db8:2::53; do
    ip -n "$PW" addr add "$a/128" dev lo
  done
  PWLOG=$PWD/pworld.log
  PHLOG=$PWD/phost.log
  : > "$PWLOG"
  : > "$PHLOG"
  ip netns exec "$PW" python3 "$PASTA_PY" listen "$PWLOG" "$PWD/pworld.ready" \
    tcp:198.51.100.10:80 tcp:198.51.100.10:81 tcp:203.0.113.10:443 tcp:192.0.2.1:8082 \
    udp:198.51.100.53:53 udp:192.0.2.1:53 'tcp:[2001:db8:2::10]:443' 'tcp:[2001:db8:2::10]:444' \
    'udp:[2001:db8:2::53]:53' > "$PWD/pworld.err" 2>&1 &
  defer "kill $!"
  # The host's services: loopback only, and every address.
  ip netns exec "$PH" python3 "$PASTA_PY" listen "$PHLOG" "$PWD/phost.ready" \
    tcp:127.0.0.1:8080 'tcp:[::1]:8080' tcp:0.0.0.0:8085 'tcp:[::]:8085' > "$PWD/phost.err" 2>&1 &
  defer "kill $!"
  pasta_wait_file "$PWD/pworld.ready"
  pasta_wait_file "$PWD/phost.ready"
}

pasta_wait_file() {
  local i
  for i in $(seq 100); do [ -e "$1" ] && return 0; sleep 0.05; done
  fail "$1 never appeared ($(cat "$PWD"/*.err 2>/dev/null))"
}

# pasta_run [TOOL OPTIONS] -- CMD...: the tool in the host namespace
# (PASTA_BIN: another pasta to test).
pasta_run() { timeout -k 2 60 ip netns exec "$PH" "$PASTA_TOOL" ${PASTA_BIN:+--pasta "$PASTA_BIN"} "$@"; }

# A script of probes for the sandbox: "probe tcp ADDR PORT" lines, each
# printing "ADDR PORT RESULT MS".
pasta_probes() {
  local p=$PWD/probes.sh
  {
    echo 'probe() { printf "%s %s %s\n" "$2" "$3" "$(python3 '"${PASTA_PROBE_PY:-$PASTA_PY}"' connect "$@" 2>&1 | tr "\n" " ")"; }'
    printf '%s\n' "$@"
  } > "$p"
  echo "$p"
}

# expect_line OUTPUT "ADDR PORT RESULT": that probe gave that result
# (refusals in under a second).
expect_probe() {
  local line
  line=$(grep "^$2 " <<< "$1") || fail "no probe of $2 in: $1"
  case "$3" in
    refused)
      assert_eq refused "$(awk '{print $3}' <<< "$line")" "$2"
      [ "$(awk '{print $4}' <<< "$line")" -lt 1000 ] || fail "$2 refused, but not at once: $line"
      ;;
    *) assert_eq "$3" "$(awk '{print $3}' <<< "$line")" "$2" ;;
  esac
}

test_egress_pasta_allowed_and_refused() {
  pasta_world
  local probes out
  probes=$(pasta_probes 'probe tcp 198.51.100.10 80' 'probe tcp 2001:db8:2::10 443' \
    'probe tcp 198.51.100.10 81' 'probe tcp 203.0.113.10 443' 'probe tcp 2001:db8:2::10 444' \
    'probe tcp 192.0.2.1 8082')
  out=$(pasta_run --allow 198.51.100.10/32 80 --allow 2001:db8:2::/64 443 -- sh "$probes" 2> tool.err) \
    || fail "tool failed: $(cat tool.err)"
  expect_probe "$out" "198.51.100.10 80" connected:hi_198.51.100.10_80
  expect_probe "$out" "2001:db8:2::10 443" connected:hi_2001:db8:2::10_443
  expect_probe "$out" "198.51.100.10 81" refused
  expect_probe "$out" "203.0.113.10 443" refused
  expect_probe "$out" "2001:db8:2::10 444" refused
  # The host's gateway is a host like any other: refused unless allowed.
  expect_probe "$out" "192.0.2.1 8082" refused
  local wlog
  wlog=$(cat "$PWLOG")
  assert_contains "$wlog" "tcp 198.51.100.10 80"
  assert_contains "$wlog" "tcp 2001:db8:2::10 443"
  assert_not_contains "$wlog" "tcp 198.51.100.10 81"
  assert_not_contains "$wlog" "tcp 203.0.113.10"
  assert_not_contains "$wlog" "tcp 2001:db8:2::10 444"
  assert_not_contains "$wlog" "tcp 192.0.2.1"
}

# Debian 12's pasta sends a connection's reply data from :: or a
# link-local address now and then, which stalls the client; the table
# drops what the sandbox sends from those.  One connect proves little.
test_egress_pasta_ipv6_repeated() {
  pasta_world
  local out n
  out=$(pasta_run --allow 2001:db8:2::/64 443 -- python3 -c '
import socket, sys
ok = 0
for i in range(50):
    s = socket.create_connection(("2001:db8:2::10", 443), timeout=3)
    data = b""
    while not data.endswith(b"\n"):
        chunk = s.recv(100)
        if not chunk:
            break
        data += chunk
    s.close()
    ok += data == b"hi 2001:db8:2::10 443\n"
print(ok)' 2> tool.err) || fail "tool failed: $(cat tool.err)"
  assert_eq 50 "$out" "IPv6 connects that got their answer"
  n=$(grep -c "tcp 2001:db8:2::10 443" "$PWLOG")
  [ "$n" -ge 50 ] || fail "the world saw $n connects of 50"
}

test_egress_pasta_host_unreachable() {
  pasta_world
  local probes out
  # Everything allowed: what stays out of reach is pasta's doing.
  probes=$(pasta_probes 'probe tcp 127.0.0.1 8080' 'probe tcp ::1 8080' 'probe tcp 10.9.9.9 8085' \
    'probe tcp fd99::9 8085' 'probe tcp 192.0.2.1 8080' 'probe tcp 192.0.2.2 8085' 'probe tcp 198.51.100.10 80')
  out=$(pasta_run --allow 0.0.0.0/0 any --allow ::/0 any -- sh "$probes" 2> tool.err) \
    || fail "tool failed: $(cat tool.err)"
  # The sandbox's loopback is its own.
  expect_probe "$out" "127.0.0.1 8080" refused
  expect_probe "$out" "::1 8080" refused
  # The address pasta copied from the host is the sandbox's own too.
  expect_probe "$out" "192.0.2.2 8085" refused
  # The host's own addresses on another interface: the table denies every
  # address of the host (pasta's sockets follow the host's routes).
  expect_probe "$out" "10.9.9.9 8085" refused
  expect_probe "$out" "fd99::9 8085" refused
  # The gateway's address is the gateway (--no-map-gw), not the host's
  # loopback: nothing listens there on 8080.
  [[ "$(grep '^192.0.2.1 ' <<< "$out")" != *connected* ]] || fail "192.0.2.1:8080 reached: $out"
  expect_probe "$out" "198.51.100.10 80" connected:hi_198.51.100.10_80
  assert_eq "" "$(cat "$PHLOG")" "what the host's listeners saw"
}

test_egress_pasta_table_before_network() {
  pasta_world
  # A loop in the sandbox from before pasta starts: every 10 ms a connect
  # to an address the table refuses, and to one it allows.  The world must
  # never see the refused one.
  local loop="python3 -c '
import socket, time
end = time.monotonic() + 1.5
with open(\"$PWD/early.log\", \"a\") as log:
    while time.monotonic() < end:
        for addr, port in ((\"203.0.113.10\", 443), (\"198.51.100.10\", 80)):
            s = socket.socket()
            s.settimeout(0.5)
            try:
                s.connect((addr, port))
                r = \"connected\"
            except OSError as e:
                r = type(e).__name__
            s.close()
            log.write(\"%s %d %s\n\" % (addr, port, r))
            log.flush()
        time.sleep(0.01)'"
  pasta_run --allow 198.51.100.10/32 80 --early "$loop" --early-ms 300 -- sleep 1.5 2> tool.err \
    || fail "tool failed: $(cat tool.err)"
  # The loop ran across pasta's start: no route before, connected after.
  assert_contains "$(cat early.log)" "198.51.100.10 80 OSError" "before pasta"
  assert_contains "$(cat early.log)" "198.51.100.10 80 connected" "after pasta"
  assert_not_contains "$(cat "$PWLOG")" "tcp 203.0.113.10 443" "world log"
  # The same with the table made 300 ms after pasta: the world sees it, so
  # the check above can fail.
  : > early.log
  pasta_run --allow 198.51.100.10/32 80 --early "$loop" --early-ms 300 --table-after 300 -- sleep 1.5 2> tool.err \
    || fail "tool (table after pasta) failed: $(cat tool.err)"
  assert_contains "$(cat "$PWLOG")" "tcp 203.0.113.10 443" "world log with the table late"
}

test_egress_pasta_dns_to_resolver() {
  pasta_world
  # The resolver's stand-in inside the sandbox, started before pasta.
  local resolver="ip link set lo up && python3 $PASTA_PY listen $PWD/resolver.log $PWD/resolver.ready udp:127.0.0.1:53 'udp:[::1]:53'"
  local probes out
  probes=$(pasta_probes "for i in \$(seq 100); do [ -e $PWD/resolver.ready ] && break; sleep 0.05; done" \
    'probe udp 198.51.100.53 53' 'probe udp 2001:db8:2::53 53' 'probe udp 192.0.2.1 53' 'probe udp 198.51.100.10 9999')
  out=$(pasta_run --allow 198.51.100.0/24 any --dns4 127.0.0.1 53 --dns6 ::1 53 --early "$resolver" \
    -- sh "$probes" 2> tool.err) || fail "tool failed: $(cat tool.err)"
  expect_probe "$out" "198.51.100.53 53" reply:hi_127.0.0.1_53
  expect_probe "$out" "2001:db8:2::53 53" reply:hi_::1_53
  expect_probe "$out" "192.0.2.1 53" reply:hi_127.0.0.1_53
  # Other UDP stays closed, allowed CIDR or not.
  expect_probe "$out" "198.51.100.10 9999" denied
  assert_eq "" "$(cat "$PWLOG")" "world log"
  assert_eq 3 "$(wc -l < resolver.log)" "queries at the resolver"
}

# pasta_netns_users INODE: processes whose network namespace that is.
pasta_netns_users() {
  local f
  for f in /proc/[0-9]*/ns/net; do
    [ "$(readlink "$f" 2>/dev/null)" = "net:[$1]" ] && echo "${f%/ns/net}"
  done
  return 0
}

test_egress_pasta_nothing_left() {
  pasta_world
  local pid ino
  pasta_run --allow 198.51.100.10/32 80 -- true 2> tool.err || fail "tool failed: $(cat tool.err)"
  pid=$(awk '/^pasta /{print $2}' tool.err)
  ino=$(sed -n 's/^netns net:\[\([0-9]*\)\]$/\1/p' tool.err)
  [ -n "$pid" ] && [ -n "$ino" ] || fail "no pasta pid or netns in: $(cat tool.err)"
  [ -e "/proc/$pid" ] && fail "pasta $pid still runs"
  assert_eq "" "$(pasta_netns_users "$ino")" "processes in the sandbox's netns"
  # Killed with SIGKILL while the command runs: pasta dies with it.
  : > tool.err
  ip netns exec "$PH" "$PASTA_TOOL" --allow 198.51.100.10/32 80 -- sleep 30 2> tool.err &
  local tool=$!
  defer "kill -9 $tool 2>/dev/null"
  local i
  for i in $(seq 100); do grep -q '^netns ' tool.err && break; sleep 0.05; done
  pid=$(awk '/^pasta /{print $2}' tool.err)
  ino=$(sed -n 's/^netns net:\[\([0-9]*\)\]$/\1/p' tool.err)
  [ -n "$pid" ] && [ -n "$ino" ] || fail "no pasta pid or netns in: $(cat tool.err)"
  [ -e "/proc/$pid" ] || fail "pasta $pid is not running"
  kill -9 "$tool"
  for i in $(seq 100); do [ -e "/proc/$pid" ] || break; sleep 0.05; done
  [ -e "/proc/$pid" ] && fail "pasta $pid outlived its parent by 5 s"
  for i in $(seq 100); do [ -z "$(pasta_netns_users "$ino")" ] && break; sleep 0.05; done
  assert_eq "" "$(pasta_netns_users "$ino")" "processes in the sandbox's netns after a kill"
}

test_egress_pasta_fails_closed() {
  pasta_world
  local out
  # A pasta that exits at once: the tool reports it and runs nothing.
  printf '#!/bin/sh\necho "pasta: cannot work today" >&2\nexit 3\n' > fake-pasta
  chmod +x fake-pasta
  out=$(pasta_run --pasta "$PWD/fake-pasta" -- touch ran 2>&1) && fail "tool succeeded with a failing pasta"
  assert_contains "$out" "pasta exited with status 3 before the sandbox's network was up: pasta: cannot work today"
  [ -e ran ] && fail "the command ran without its network"
  # One that never gets ready: killed after the bound.
  printf '#!/bin/sh\nexec sleep 60\n' > slow-pasta
  chmod +x slow-pasta
  out=$(pasta_run --pasta "$PWD/slow-pasta" -- touch ran 2>&1) && fail "tool succeeded with a hanging pasta"
  assert_contains "$out" "pasta did not bring the sandbox's network up within 30000 ms (killed)"
  [ -e ran ] && fail "the command ran without its network"
  return 0
}

# pasta processes running in the test host's namespace (haven's children
# there; none of another test's).
pasta_in_host() {
  local ino f pid
  ino=$(ip netns exec "$PH" readlink /proc/self/ns/net)
  # argv[0] is pasta; the executable may be passt.avx2 (pasta re-executes
  # itself where AVX2 is there).
  for f in /proc/[0-9]*/cmdline; do
    pid=${f#/proc/}
    pid=${pid%/cmdline}
    [ "$(tr '\0' '\n' < "$f" 2>/dev/null | head -1)" = pasta ] || continue
    [ "$(readlink "/proc/$pid/ns/net" 2>/dev/null)" = "$ino" ] && echo "$pid"
  done
  return 0
}

# pasta_policy FILE ALLOW...: an allowlist policy beside the project.
pasta_policy() {
  local f=$1
  shift
  { echo "name: pasta-test"; echo "extends: default"; echo "network:"; echo "  mode: allowlist"; echo "  allow:"
    printf '    - "%s"\n' "$@"; } > "$f"
}

test_egress_pasta_haven_run() {
  need_haven
  pasta_world
  local proj probes out
  proj=$(mktemp -d "$WORK/project-XXXXXX")
  chmod 755 "$proj"
  pasta_policy "$proj.allow.yaml" 198.51.100.10/32:80 "[2001:db8:2::10]:443"
  # The client goes into the project: the sandbox's /tmp is its own, and
  # a checkout under /tmp (CI's clone) is not there.
  cp "$PASTA_PY" "$proj/egress_world.py"
  probes=$(PASTA_PROBE_PY=egress_world.py pasta_probes 'probe tcp 198.51.100.10 80' 'probe tcp 2001:db8:2::10 443' \
    'probe tcp 198.51.100.10 81' 'probe tcp 203.0.113.10 443' 'probe tcp 2001:db8:2::10 444' \
    'probe tcp 127.0.0.1 8080' 'probe tcp ::1 8080' 'probe tcp 192.0.2.1 8082' 'probe udp 198.51.100.53 53')
  cp "$probes" "$proj/probes.sh"
  out=$(cd "$proj" && timeout 60 ip netns exec "$PH" "$HAVEN" run --policy "$proj.allow.yaml" -- sh probes.sh 2> haven.err) \
    || fail "haven run failed: $(cat "$proj/haven.err")"
  expect_probe "$out" "198.51.100.10 80" connected:hi_198.51.100.10_80
  expect_probe "$out" "2001:db8:2::10 443" connected:hi_2001:db8:2::10_443
  expect_probe "$out" "198.51.100.10 81" refused
  expect_probe "$out" "203.0.113.10 443" refused
  expect_probe "$out" "2001:db8:2::10 444" refused
  expect_probe "$out" "127.0.0.1 8080" refused
  expect_probe "$out" "::1 8080" refused
  expect_probe "$out" "192.0.2.1 8082" refused
  # UDP, DNS included, never leaves (no resolver yet: nothing answers).
  [[ "$(grep '^198.51.100.53 ' <<< "$out")" != *reply* ]] || fail "DNS answered from outside: $out"
  local wlog
  wlog=$(cat "$PWLOG")
  assert_contains "$wlog" "tcp 198.51.100.10 80"
  assert_contains "$wlog" "tcp 2001:db8:2::10 443"
  assert_not_contains "$wlog" "tcp 198.51.100.10 81"
  assert_not_contains "$wlog" "tcp 203.0.113.10"
  assert_not_contains "$wlog" "udp"
  assert_eq "" "$(cat "$PHLOG")" "what the host's listeners saw"
  # haven kills pasta on its way out and does not wait for the kernel to
  # finish its exit (the tap device's teardown, 10-20 ms): gone soon
  # after, never left running.
  local i
  for i in $(seq 40); do [ -z "$(pasta_in_host)" ] && break; sleep 0.05; done
  assert_eq "" "$(pasta_in_host)" "pasta 2 s after haven run"
  # The same policy in mode none: no way out at all.
  sed -i 's/mode: allowlist/mode: none/; /allow:/,$d' "$proj.allow.yaml"
  out=$(cd "$proj" && timeout 60 ip netns exec "$PH" "$HAVEN" run --policy "$proj.allow.yaml" -- sh probes.sh 2>&1)
  [[ "$(grep '^198.51.100.10 80 ' <<< "$out")" == *unreachable* ]] || fail "mode none reached out: $out"
}

# pasta starts while the container is set up and is waited for just
# before create returns: the command's very first connect (bash's
# /dev/tcp, no interpreter to start first) finds the network up, every
# time.  Without that wait it meets a namespace with no route yet.
test_egress_pasta_haven_run_first_connect() {
  need_haven
  pasta_world
  [ -x /bin/bash ] || skip "bash missing"
  local proj out i
  proj=$(mktemp -d "$WORK/project-XXXXXX")
  chmod 755 "$proj"
  pasta_policy "$proj.allow.yaml" 198.51.100.10/32:80
  for i in $(seq 8); do
    out=$(cd "$proj" && timeout 30 ip netns exec "$PH" "$HAVEN" run --policy "$proj.allow.yaml" -- \
      /bin/bash -c 'exec 3<>/dev/tcp/198.51.100.10/80 && echo up' 2>&1) || true
    assert_eq up "$out" "the first connect of run $i"
  done
}

test_egress_pasta_haven_killed() {
  need_haven
  pasta_world
  local proj i pids
  proj=$(mktemp -d "$WORK/project-XXXXXX")
  chmod 755 "$proj"
  pasta_policy "$proj.allow.yaml" 198.51.100.10/32:80
  (cd "$proj" && exec ip netns exec "$PH" "$HAVEN" run --policy "$proj.allow.yaml" -- sleep 30) > /dev/null 2>&1 &
  local haven=$!
  defer "kill -9 $haven 2>/dev/null"
  for i in $(seq 100); do pids=$(pasta_in_host); [ -n "$pids" ] && break; sleep 0.05; done
  [ -n "$pids" ] || fail "no pasta while haven runs"
  kill -9 "$haven"
  for i in $(seq 100); do [ -z "$(pasta_in_host)" ] && break; sleep 0.05; done
  assert_eq "" "$(pasta_in_host)" "pasta 5 s after haven was killed"
}

# lab_link HOSTNS: a "lab" network on a new interface of HOSTNS (its
# only route is the connected subnet): host lh0 10.77.0.2/24 fd77::2/64
# -- ll0 10.77.0.1/24 fd77::1/64 in netns $PL, where a server listens on
# port 8080 of both (what it saw: $PLLOG).  The internal model API of an
# isolated lab.
lab_link() {
  local host=$1
  PL=$CTR_PREFIX-pl-$RANDOM
  ip netns add "$PL" || fail "ip netns add $PL"
  defer "ip netns del $PL"
  ip link add lh0 netns "$host" type veth peer name ll0 netns "$PL" || fail "veth lh0"
  ip -n "$PL" link set lo up
  ip -n "$host" link set lo up
  ip -n "$host" addr add 10.77.0.2/24 dev lh0
  ip -n "$host" addr add fd77::2/64 dev lh0 nodad
  ip -n "$PL" addr add 10.77.0.1/24 dev ll0
  ip -n "$PL" addr add fd77::1/64 dev ll0 nodad
  ip -n "$host" link set lh0 up
  ip -n "$PL" link set ll0 up
  PLLOG=$PWD/plab.log
  : > "$PLLOG"
  ip netns exec "$PL" python3 "$PASTA_PY" listen "$PLLOG" "$PWD/plab.ready" \
    tcp:10.77.0.1:8080 'tcp:[fd77::1]:8080' > "$PWD/plab.err" 2>&1 &
  defer "kill $!"
  pasta_wait_file "$PWD/plab.ready"
}

# haven_probe NS POLICY-ENTRIES -- PROBES...: haven run in netns NS with an
# allowlist of the entries, running the probes; their output in $OUT.
haven_probe() {
  local ns=$1 proj probes
  shift
  proj=$(mktemp -d "$WORK/project-XXXXXX")
  chmod 755 "$proj"
  local allow=()
  while [ "$1" != -- ]; do allow+=("$1"); shift; done
  shift
  pasta_policy "$proj.allow.yaml" "${allow[@]}"
  cp "$PASTA_PY" "$proj/egress_world.py"
  probes=$(PASTA_PROBE_PY=egress_world.py pasta_probes "$@")
  cp "$probes" "$proj/probes.sh"
  OUT=$(cd "$proj" && timeout 60 ip netns exec "$ns" "$HAVEN" run --policy "$proj.allow.yaml" -- sh probes.sh \
        2> haven.err) || fail "haven run failed: $(cat "$proj/haven.err")"
  ERR=$(cat "$proj/haven.err")
}

# An isolated lab: the host's only routes are its connected subnets (no
# default route), and the allowed host is on one of them.  What the host
# reaches, the sandbox reaches; nothing else is opened.
test_egress_pasta_no_default_route() {
  need_haven
  [ -x /usr/bin/pasta ] || [ -x /usr/local/bin/pasta ] || skip "pasta missing (Debian package passt)"
  PASTA_PY=$(cd "$(dirname "$PASTA_PY")" && pwd)/$(basename "$PASTA_PY")
  local host=$CTR_PREFIX-nd-$RANDOM
  ip netns add "$host" || fail "ip netns add $host"
  defer "ip netns del $host"
  lab_link "$host"
  [ -z "$(ip -n "$host" route show default; ip -n "$host" -6 route show default)" ] || fail "the test host has a default route"
  ip netns exec "$host" python3 "$PASTA_PY" connect tcp 10.77.0.1 8080 | grep -q '^connected' \
    || fail "the host itself does not reach the lab"
  : > "$PLLOG"
  haven_probe "$host" 10.77.0.1/32:8080 "[fd77::1]:8080" -- 'probe tcp 10.77.0.1 8080' 'probe tcp fd77::1 8080' \
    'probe tcp 10.77.0.1 8081' 'probe tcp 10.77.0.9 8080'
  assert_not_contains "$ERR" "no network"
  expect_probe "$OUT" "10.77.0.1 8080" connected:hi_10.77.0.1_8080
  expect_probe "$OUT" "fd77::1 8080" connected:hi_fd77::1_8080
  expect_probe "$OUT" "10.77.0.1 8081" refused
  expect_probe "$OUT" "10.77.0.9 8080" refused
  assert_contains "$(cat "$PLLOG")" "tcp 10.77.0.1 8080"
  assert_contains "$(cat "$PLLOG")" "tcp fd77::1 8080"
  # A default route for one family only: the other still reaches its
  # connected subnet.
  ip -n "$host" route add default via 10.77.0.1 || fail "default route"
  : > "$PLLOG"
  haven_probe "$host" 10.77.0.1/32:8080 "[fd77::1]:8080" -- 'probe tcp 10.77.0.1 8080' 'probe tcp fd77::1 8080'
  expect_probe "$OUT" "10.77.0.1 8080" connected:hi_10.77.0.1_8080
  expect_probe "$OUT" "fd77::1 8080" connected:hi_fd77::1_8080
}

# A host with a default route and a second network on another interface
# (a lab's internal API, a VPN): an allowed host there is reached through
# the host's route to it, not sent to the default route's gateway.  The
# host's own addresses stay out of reach with everything allowed, on every
# interface: the second network's (10.77.0.2), a second address on the
# default route's interface (192.0.2.3), another interface's (10.9.9.9).
test_egress_pasta_second_network() {
  need_haven
  pasta_world
  lab_link "$PH"
  ip -n "$PH" addr add 192.0.2.3/24 dev ph0
  ip -n "$PH" addr add 2001:db8:1::3/64 dev ph0 nodad
  haven_probe "$PH" 0.0.0.0/0 ::/0 -- 'probe tcp 10.77.0.1 8080' 'probe tcp fd77::1 8080' \
    'probe tcp 198.51.100.10 80' 'probe tcp 10.77.0.2 8085' 'probe tcp fd77::2 8085' 'probe tcp 192.0.2.3 8085' \
    'probe tcp 2001:db8:1::3 8085' 'probe tcp 10.9.9.9 8085' 'probe tcp fd99::9 8085' 'probe tcp ::ffff:10.77.0.2 8085'
  expect_probe "$OUT" "10.77.0.1 8080" connected:hi_10.77.0.1_8080
  expect_probe "$OUT" "fd77::1 8080" connected:hi_fd77::1_8080
  expect_probe "$OUT" "198.51.100.10 80" connected:hi_198.51.100.10_80
  local a
  for a in 10.77.0.2 fd77::2 192.0.2.3 2001:db8:1::3 10.9.9.9 fd99::9 ::ffff:10.77.0.2; do
    expect_probe "$OUT" "$a 8085" refused
  done
  assert_eq "" "$(cat "$PHLOG")" "what the host's listeners saw"
}

# An offline host (no route at all): haven run with an allowlist runs,
# says the sandbox has no network, and nothing gets out (there is no
# pasta to carry it).
test_egress_pasta_offline_host() {
  need_haven
  local ns proj out
  ns=$CTR_PREFIX-off-$RANDOM
  ip netns add "$ns" || fail "ip netns add $ns"
  defer "ip netns del $ns"
  ip -n "$ns" link set lo up
  proj=$(mktemp -d "$WORK/project-XXXXXX")
  chmod 755 "$proj"
  pasta_policy "$proj.allow.yaml" 198.51.100.10/32:80
  out=$(cd "$proj" && timeout 60 ip netns exec "$ns" "$HAVEN" run --policy "$proj.allow.yaml" -- \
        sh -c 'echo ran; echo "links=$(ip -o link show | grep -vc " lo:")"' 2>&1) || fail "haven run failed: $out"
  assert_contains "$out" "the host has no route (IPv4 or IPv6, on any interface but lo): the sandbox gets no network"
  assert_contains "$out" "ran"
  assert_contains "$out" "links=0"
  # pasta in this host namespace only: other suites on the machine run theirs.
  PH=$ns
  assert_eq "" "$(pasta_in_host)" "pasta after an offline run"
}
