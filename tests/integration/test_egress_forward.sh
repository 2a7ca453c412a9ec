# haven's forwarder (runtime/egress/egress_forward.h): an allowlist's way
# out for a user who cannot open /dev/net/tun (pasta needs it).  As uid
# 65534 on this host's own /dev/net/tun (0600 here: never changed; where
# the user can open it, HAVEN_EGRESS_WAY=forwarder forces the forwarder)
# the claude-code policy reaches what it lists in a TEST-NET world
# (test_egress_policies.sh's policies_world), and nothing else: an
# unlisted name, a listed one's address on a port it does not allow, an
# address no name gave, all refused at once and recorded in the trail;
# DNS to any address is haven's resolver's; IPv6, which this host has no
# route for, fails at connect (ENETUNREACH, as under pasta: a client falls
# back to IPv4).  Afterwards nothing of the
# run is left: no process, no connection.  As root (tun opens) pasta is
# still the way out.

# The client in the sandbox: the default route's interface, then each
# argument: NAME:PORT (resolve, connect, read the world's first line),
# ip:ADDR:PORT (connect to the address), dns:ADDR (a query for
# example.com sent to ADDR:53 over UDP and over TCP).
FWD_CLIENT='
import socket, sys, time
route = "none"
for l in open("/proc/net/route").read().splitlines()[1:]:
    f = l.split()
    if f[1] == "00000000": route = f[0]; break
print("route", route)
q = bytes.fromhex("123401000001000000000000076578616d706c6503636f6d0000010001")
def connect(label, addr):
    s = socket.socket(socket.AF_INET6 if ":" in addr[0] else socket.AF_INET); s.settimeout(5)
    try:
        s.connect(addr); line = s.makefile().readline().strip()
        r = "connected " + line.replace(" ", "_")
    except ConnectionRefusedError: r = "refused"
    except socket.timeout: r = "timeout"
    except OSError as e: r = "error:%d" % e.errno
    s.close(); print(label, r)
for arg in sys.argv[1:]:
    kind, rest = arg.split(":", 1)
    if kind == "ip":
        a, p = rest.rsplit(":", 1); connect(arg, (a.strip("[]"), int(p)))
    elif kind == "dns":
        for t in (socket.SOCK_DGRAM, socket.SOCK_STREAM):
            s = socket.socket(socket.AF_INET, t); s.settimeout(3)
            label = arg + (":udp" if t == socket.SOCK_DGRAM else ":tcp")
            try:
                s.connect((rest, 53))
                s.send(q if t == socket.SOCK_DGRAM else len(q).to_bytes(2, "big") + q)
                r = s.recv(512); r = r if t == socket.SOCK_DGRAM else r[2:]
                print(label, "answered rcode", r[3] & 15)
            except OSError as e: print(label, type(e).__name__)
    else:
        name, port = kind, rest
        try:
            addr = socket.getaddrinfo(name, int(port), socket.AF_INET, socket.SOCK_STREAM)[0][4]
        except socket.gaierror: print(arg, "no-address"); continue
        connect(arg, addr)
'

# fwd_run_65534 OUTVAR POLICY ARGS...: the client under haven run as uid
# 65534 in the world's host namespace, in a fresh project; $FWD_HOME the
# user's home (the trail is there).
fwd_run_65534() {
  local pol=$1 haven
  shift
  make_project
  chown -R 65534:65534 "$P"
  FWD_HOME=$P.home
  mkdir -p "$FWD_HOME"
  chown 65534:65534 "$FWD_HOME"
  haven=$(world_readable_copy "$HAVEN")
  if setpriv --reuid=65534 --regid=65534 --clear-groups test -w /dev/net/tun; then
    # A host whose tun the user can open would pick pasta.
    export HAVEN_EGRESS_WAY=forwarder
  fi
  FWD_OUT=$(cd "$P" && timeout -k 2 60 ip netns exec "$EH" setpriv --reuid=65534 --regid=65534 --clear-groups \
            env HOME="$FWD_HOME" XDG_RUNTIME_DIR= ${HAVEN_EGRESS_WAY:+HAVEN_EGRESS_WAY=$HAVEN_EGRESS_WAY} \
            "$haven" run --policy "$pol" -- python3 -c "$FWD_CLIENT" "$@" 2> "$PWD/run.err")
  FWD_RC=$?
  FWD_ERR=$(cat "$PWD/run.err")
}

# Nothing of the run: no process of uid 65534 (the monitor and its relays
# included), no TCP connection in the host's or the world's namespace.
fwd_nothing_left() {
  local i left pid ehns
  ehns=$(ip netns exec "$EH" readlink /proc/self/ns/net)
  for i in $(seq 50); do
    # Ours: in the host's namespace (the monitor, its relays) or in the
    # project (the sandbox's processes); other tests may run as 65534.
    left=$(for pid in $(pgrep -u 65534); do
             if [ "$(readlink "/proc/$pid/ns/net")" = "$ehns" ] || case "$(readlink "/proc/$pid/cwd")" in "$P"*) true ;; *) false ;; esac; then
               echo "$pid $(tr '\0' ' ' < "/proc/$pid/cmdline")"
             fi
           done)
    [ -z "$left" ] && break
    sleep 0.1
  done
  [ -z "$left" ] || fail "processes of uid 65534 left: $left"
  left=$(ip netns exec "$EH" ss -Htan state established state close-wait state fin-wait-1 state fin-wait-2 state syn-sent)
  [ -z "$left" ] || fail "connections left in the host's namespace: $left"
  left=$(ip netns exec "$EW" ss -Htan state established state close-wait state fin-wait-1 state fin-wait-2)
  [ -z "$left" ] || fail "connections left in the world: $left"
}

test_egress_forward_claude_code_as_user() {
  need_haven
  local names n p args=() first trail
  names=$(policy_names claude-code)
  [ -n "$names" ] || fail "claude-code lists no names"
  # shellcheck disable=SC2086
  policies_world $(echo "$names" | awk '{print $1}' | sort -u)
  while read -r n p; do args+=("$n:$p"); done <<< "$names"
  first=${args[0]%%:*}
  # Unlisted: a name, a subdomain of a listed one, the port a listed
  # name's address does not allow, an address no answer held; DNS sent
  # to the world's own server and to another address.
  args+=("evil.example:443" "x.$first:443" "$first:8443" "ip:203.0.113.1:8443" "ip:203.0.113.200:443"
         "dns:198.51.100.54" "dns:192.0.2.1" "ip:[2001:db8::1]:443")
  fwd_run_65534 claude-code "${args[@]}"
  echo "$FWD_OUT" > client.out
  assert_eq 0 "$FWD_RC" "haven run as uid 65534 ($FWD_ERR)"
  assert_not_contains "$FWD_ERR" "pasta" "haven's stderr"
  # The forwarder's namespace: the default route is lo.
  assert_contains "$FWD_OUT" "route lo" "the sandbox's default route"
  while read -r n p; do
    assert_contains "$FWD_OUT" "$n:$p connected hi_203.0.113." "$n:$p through the forwarder ($FWD_ERR)"
  done <<< "$names"
  local line
  for line in "evil.example:443 no-address" "x.$first:443 no-address" "$first:8443 refused" \
              "ip:203.0.113.1:8443 refused" "ip:203.0.113.200:443 refused" \
              "dns:198.51.100.54:udp answered rcode 3" "dns:198.51.100.54:tcp answered rcode 3" \
              "dns:192.0.2.1:udp answered rcode 3" "dns:192.0.2.1:tcp answered rcode 3" \
              "ip:[2001:db8::1]:443 error:101"; do
    assert_contains "$FWD_OUT" "$line" "$line"
  done
  assert_not_contains "$FWD_OUT" "timeout"
  # The world saw only what is allowed: no query for an unlisted name
  # (haven's resolver answered every one), no connection to the unlisted
  # host or to a port nothing allows.
  assert_not_contains "$(cat "$PDNSLOG")" "evil.example" "world DNS log"
  assert_not_contains "$(cat "$PDNSLOG")" "example.com" "world DNS log"
  assert_not_contains "$(cat "$PWLOG")" "203.0.113.200" "world connection log"
  assert_not_contains "$(cat "$PWLOG")" "8443" "world connection log"
  # The trail: the refusals, as under pasta.
  trail=$(find "$FWD_HOME/.local/state/haven" -name 'audit*.log' -o -name '*.jsonl' 2>/dev/null | head -1)
  [ -n "$trail" ] || fail "no trail under $FWD_HOME/.local/state/haven"
  jq -se 'any(.[]; .event == "net-denied" and .destination == "203.0.113.200" and .port == 443)' "$trail" \
    > /dev/null || fail "no net-denied record for 203.0.113.200:443: $(cat "$trail")"
  jq -se 'any(.[]; .event == "net-denied" and .destination == "203.0.113.1" and .port == 8443)' "$trail" \
    > /dev/null || fail "no net-denied record for 203.0.113.1:8443: $(cat "$trail")"
  jq -se 'any(.[]; .event == "dns-refused" and .name == "evil.example")' "$trail" > /dev/null \
    || fail "no dns-refused record: $(cat "$trail")"
  fwd_nothing_left
}

# A bulk copy both ways with half-closes: the client sends 8 MiB and
# shuts its side; the world's server answers, after the whole of it, its
# length and digest, then 8 MiB of its own and closes.  The relay passes
# every byte and each end in order.
FWD_BULK_SERVER='
import hashlib, socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 443)); s.listen(4); open(sys.argv[2], "w").close()
while True:
    c, _ = s.accept(); h = hashlib.sha256(); n = 0
    while True:
        b = c.recv(65536)
        if not b: break
        h.update(b); n += len(b)
    c.sendall(("%d %s\n" % (n, h.hexdigest())).encode())
    c.sendall(bytes(range(256)) * 32768); c.close()
'
FWD_BULK_CLIENT='
import hashlib, socket, sys
data = bytes(range(251)) * (8 * 1048576 // 251)
s = socket.create_connection(("bulk.example", 443), timeout=20)
s.sendall(data); s.shutdown(socket.SHUT_WR)
got = b""
while True:
    b = s.recv(65536)
    if not b: break
    got += b
head, _, rest = got.partition(b"\n")
print("sent", len(data), hashlib.sha256(data).hexdigest())
print("echo", head.decode())
print("back", len(rest), rest == bytes(range(256)) * 32768)
'
test_egress_forward_bulk_half_close() {
  need_haven
  POLICIES_EXTRA_ZONE='"bulk.example": {"A": [["203.0.113.150", 300]]}, '
  policies_world allowed.example
  ip -n "$EW" addr add 203.0.113.150/32 dev lo
  ip netns exec "$EW" python3 -c "$FWD_BULK_SERVER" 203.0.113.150 "$PWD/bulk.ready" > bulk.err 2>&1 &
  defer "kill $!"
  local i
  for i in $(seq 50); do [ -e bulk.ready ] && break; sleep 0.1; done
  local pol=$WORK/fwd-bulk-$$.yaml
  printf 'extends: claude-code\nname: fwd-bulk\nnetwork:\n  allow: ["bulk.example:443"]\n' > "$pol"
  chmod 644 "$pol"
  FWD_CLIENT=$FWD_BULK_CLIENT fwd_run_65534 "$pol"
  assert_eq 0 "$FWD_RC" "haven run ($FWD_ERR)"
  local sent
  sent=$(echo "$FWD_OUT" | sed -n 's/^sent //p')
  [ -n "$sent" ] || fail "the client did not finish: $FWD_OUT $FWD_ERR"
  assert_contains "$FWD_OUT" "echo $sent" "what the world received"
  assert_contains "$FWD_OUT" "back 8388608 True" "what the client received after its half-close"
  fwd_nothing_left
}

# The cap on connections (HV_FWD_MAX_CONNS, 128): the sandbox holds 128
# open to a world server that waits for their end; one more is reset at
# once (not queued); once they end, a new one is relayed again.
FWD_HOLD_SERVER='
import socket, sys, threading
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 80)); s.listen(256); open(sys.argv[2], "w").close()
def hold(c):
    c.sendall(b"held\n")
    while c.recv(4096): pass
    c.close()
while True:
    c, _ = s.accept(); threading.Thread(target=hold, args=(c,), daemon=True).start()
'
FWD_CAP_CLIENT='
import socket, time
def one():
    s = socket.create_connection(("bulk.example", 80), timeout=5)
    try: return s, s.makefile().readline().strip()
    except OSError as e: return s, type(e).__name__
held = []
for i in range(128):
    s, r = one(); held.append(s)
    if r != "held": print("connection", i, r)
s, r = one(); print("over the cap:", r or "closed"); s.close()
for s in held: s.close()
time.sleep(1)
s, r = one(); print("after:", r); s.close()
'
test_egress_forward_connection_cap() {
  need_haven
  POLICIES_EXTRA_ZONE='"bulk.example": {"A": [["203.0.113.150", 300]]}, '
  policies_world allowed.example
  ip -n "$EW" addr add 203.0.113.150/32 dev lo
  ip netns exec "$EW" python3 -c "$FWD_HOLD_SERVER" 203.0.113.150 "$PWD/hold.ready" > hold.err 2>&1 &
  defer "kill $!"
  local i
  for i in $(seq 50); do [ -e hold.ready ] && break; sleep 0.1; done
  local pol=$WORK/fwd-cap-$$.yaml
  printf 'extends: claude-code\nname: fwd-cap\nnetwork:\n  allow: ["bulk.example:80"]\n' > "$pol"
  chmod 644 "$pol"
  FWD_CLIENT=$FWD_CAP_CLIENT fwd_run_65534 "$pol"
  assert_eq 0 "$FWD_RC" "haven run ($FWD_ERR)"
  assert_not_contains "$FWD_OUT" "connection " "the first 128 ($FWD_OUT)"
  case "$FWD_OUT" in
    *"over the cap: ConnectionResetError"* | *"over the cap: closed"*) ;;
    *) fail "the connection over the cap was not refused at once: $FWD_OUT" ;;
  esac
  assert_contains "$FWD_OUT" "after: held" "a connection once the others ended"
  fwd_nothing_left
}

# IPv6 through the forwarder (SO_ORIGINAL_DST of SOL_IPV6, the [::1]
# listener, a connect from the host over IPv6): the world gets IPv6
# addresses and the host a default route for it; an allow CIDR on 443.
test_egress_forward_ipv6() {
  need_haven
  policies_world allowed.example
  ip -n "$EH" addr add 2001:db8:ff::2/64 dev eh0 nodad
  ip -n "$EW" addr add 2001:db8:ff::1/64 dev ew0 nodad
  ip -n "$EH" -6 route add default via 2001:db8:ff::1
  ip -n "$EW" addr add 2001:db8:1::5/128 dev lo
  ip netns exec "$EW" python3 "$POLICIES_WORLD_PY" listen "$PWD/world6.log" "$PWD/world6.ready" \
    "tcp:[2001:db8:1::5]:443" "tcp:[2001:db8:1::5]:80" > world6.err 2>&1 &
  defer "kill $!"
  local i
  for i in $(seq 50); do [ -e world6.ready ] && break; sleep 0.1; done
  local pol=$WORK/fwd-v6-$$.yaml
  printf 'extends: claude-code\nname: fwd-v6\nnetwork:\n  allow: ["[2001:db8:1::5]:443"]\n' > "$pol"
  chmod 644 "$pol"
  fwd_run_65534 "$pol" "ip:[2001:db8:1::5]:443" "ip:[2001:db8:1::5]:80" "ip:[2001:db8:1::6]:443"
  assert_eq 0 "$FWD_RC" "haven run ($FWD_ERR)"
  assert_contains "$FWD_OUT" "route lo" "the forwarder"
  assert_contains "$FWD_OUT" "ip:[2001:db8:1::5]:443 connected hi_2001:db8:1::5_443" "an allowed IPv6 destination"
  assert_contains "$FWD_OUT" "ip:[2001:db8:1::5]:80 refused" "a port the CIDR does not allow"
  assert_contains "$FWD_OUT" "ip:[2001:db8:1::6]:443 refused" "an address nothing allows"
  assert_not_contains "$(cat world6.log)" " 80" "the world's log"
  fwd_nothing_left
}

# Root opens /dev/net/tun: pasta stays the way out (egress_way.h).
test_egress_forward_root_keeps_pasta() {
  need_haven
  [ -z "${HAVEN_EGRESS_WAY:-}" ] || skip "HAVEN_EGRESS_WAY is set"
  policies_world api.anthropic.com
  make_project
  local out
  out=$(cd "$P" && HOME=$P.home timeout -k 2 60 ip netns exec "$EH" "$HAVEN" run --policy claude-code -- \
        python3 -c "$FWD_CLIENT" api.anthropic.com:443 2> "$PWD/run.err")
  assert_contains "$out" "api.anthropic.com:443 connected" "$(cat run.err)"
  assert_not_contains "$out" "route lo" "the default route (pasta's interface, not lo)"
  assert_contains "$out" "route " "the default route"
}
