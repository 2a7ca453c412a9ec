# The egress table and the resolver's sockets for a rootless
# runtime (runtime/egress/egress_sandbox.c: a helper child enters the user
# namespace that owns the sandbox's netns, then the netns, and hands the
# sockets back).  `haven run` as uid 65534 with an allowlist policy
# starts, its netns has table inet haven, DNS (to the resolver's address
# and redirected from elsewhere) reaches the resolver's sockets, which the
# monitor uses through the netlink sockets create handed it, and what the
# policy does not allow is refused at once.

# rootless_haven_run MARKER CMD...: haven run --policy claude-code as uid
# 65534 in a fresh project $P, in the background, its output in
# $P.out; $RL_PID the pid of the haven process.
rootless_haven_run() {
  local marker=$1 haven
  shift
  make_project
  chown -R 65534:65534 "$P"
  # A home the user can write: claude-code keeps its audit trail in
  # ~/.local/state/haven (and a policy whose trail cannot be written
  # fails to start).
  mkdir -p "$P.home"
  chown 65534:65534 "$P.home"
  haven=$(world_readable_copy "$HAVEN")
  # pasta opens /dev/net/tun as the user: some hosts (this one's CI)
  # have it 0600.  A node of the same device, 0666, bound over it in a
  # mount namespace of this run only; the host's stays as it is.
  (cd "$P" && exec unshare -m --propagation private sh -c '
     h=$1.home
     if ! setpriv --reuid=65534 --regid=65534 --clear-groups test -w /dev/net/tun; then
       mknod -m 666 "$1.tun" c 10 200 && mount --bind "$1.tun" /dev/net/tun && rm -f "$1.tun" || exit 99
     fi
     shift
     exec setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$h" XDG_RUNTIME_DIR= \
       timeout 30 "$@"' sh "$P" "$haven" run --policy claude-code -- "$@" "$marker" > "$P.out" 2>&1 </dev/null) &
  RL_PID=$!
}

# The probe inside: waits (bounded) for $P/go, then asks for DNS at the
# resolver's address and elsewhere; each line says how it ended, and
# how long all of it took.
RL_PROBE='
import os, socket, sys, time
for _ in range(100):
    if os.path.exists("go"): break
    time.sleep(0.1)
q = bytes.fromhex("123401000001000000000000076578616d706c6503636f6d0000010001")
t0 = time.monotonic()
def probe(name, family, kind, addr):
    s = socket.socket(family, kind)
    s.settimeout(3)
    try:
        s.connect(addr)
        s.send(q if kind == socket.SOCK_DGRAM else len(q).to_bytes(2, "big") + q)
        r = s.recv(512)
        r = r if kind == socket.SOCK_DGRAM else r[2:]
        print(name, "answered", "id", r[:2].hex(), "rcode", r[3] & 15)
    except OSError as e:
        print(name, type(e).__name__, e.errno)
probe("udp4-loopback", socket.AF_INET, socket.SOCK_DGRAM, ("127.0.0.1", 53))
probe("tcp4-loopback", socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", 53))
probe("udp6-loopback", socket.AF_INET6, socket.SOCK_DGRAM, ("::1", 53))
probe("udp4-redirected", socket.AF_INET, socket.SOCK_DGRAM, ("192.0.2.1", 53))
probe("tcp4-out", socket.AF_INET, socket.SOCK_STREAM, ("192.0.2.1", 443))
print("took", round(time.monotonic() - t0, 1))
'

test_egress_rootless_run() {
  need_haven
  [ -n "$(ip route show | grep -v ' dev lo'; ip -6 route show | grep -v '^fe80\|^ff00\|^multicast\| dev lo')" ] \
    || skip "the host has no route: haven run gives the sandbox loopback only (no pasta)"
  local marker pid i rules
  marker=rl-probe-$RANDOM$RANDOM
  rootless_haven_run "$marker" python3 -c "$RL_PROBE"
  defer "kill $RL_PID 2>/dev/null"
  # The probe, inside the sandbox (its marker argument names it).
  for i in $(seq 100); do
    pid=$(pgrep -u 65534 -f "$marker" | while read -r p; do
            [ "$(readlink /proc/$p/ns/net)" != "$(readlink /proc/self/ns/net)" ] && echo "$p"; done | head -1)
    [ -n "$pid" ] && break
    sleep 0.1
  done
  [ -n "$pid" ] || { wait "$RL_PID"; fail "no sandbox process: $(cat "$P.out")"; }
  rules=$(nsenter -t "$pid" -n nft list table inet haven 2>&1)
  touch "$P/go"
  wait "$RL_PID"
  local rc=$? out
  out=$(cat "$P.out")
  assert_eq 0 "$rc" "rootless haven run with an allowlist policy ($out)"
  assert_contains "$rules" "table inet haven" "the table in the sandbox's netns"
  assert_contains "$rules" "policy drop"
  assert_contains "$rules" "dnat ip to 127.0.0.1:53" "DNS redirected to the resolver's sockets"
  # example.com is not in claude-code: the resolver itself refuses it
  # ("not found", NXDOMAIN, rcode 3), over UDP and TCP, at its address and redirected
  # from another; an address nothing allows is refused by the table.
  assert_contains "$out" "udp4-loopback answered id 1234 rcode 3"
  assert_contains "$out" "tcp4-loopback answered id 1234 rcode 3"
  assert_contains "$out" "udp6-loopback answered id 1234 rcode 3"
  assert_contains "$out" "udp4-redirected answered id 1234 rcode 3"
  assert_contains "$out" "tcp4-out ConnectionRefusedError 111"
  assert_not_contains "$out" "timeout"
  [ "$(echo "$out" | sed -n 's/^took \([0-9]*\).*/\1/p')" -lt 2 ] || fail "DNS did not fail at once: $out"
}

# The same policy as root: one code path (the helper joins no user
# namespace when the netns's owner is ours).
test_egress_rootless_root_run_too() {
  need_haven
  make_project
  haven_in "$P" run --policy claude-code -- sh -c 'echo ran'
  assert_eq 0 "$RC" "root haven run with an allowlist policy ($OUT)"
  assert_contains "$OUT" "ran"
}
