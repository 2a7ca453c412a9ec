#!/usr/bin/env bash
# Benchmark (not a test): the two ways out of an allowlist sandbox
# (runtime/egress/include/egress_way.h), pasta and haven's forwarder,
# side by side on one host: a bulk copy through each (MB/s, to the world
# and back), and with farm-bench the start of `haven run -- true` under
# claude-code with each (HAVEN_EGRESS_WAY picks the way).  As root, so
# that pasta can run; the forwarder does the same work for any user.
#
#   sudo tests/bench/forward-bench.sh [MB] [RUNS]     (default 256 MB, 20 runs)
#
# A network namespace of its own with a veth to a second one (TEST-NET
# addresses, nothing leaves the machine), a sink and source in the second
# on 192.0.2.1:9000, reached through an allow CIDR (no DNS in the copy).
# HAVEN=path/to/haven picks the binary (build without sanitizers).
set -euo pipefail
mb=${1:-256}
runs=${2:-20}
here=$(cd "$(dirname "$0")" && pwd)
haven=${HAVEN:-$here/../../haven}
[ "$(id -u)" = 0 ] || { echo "forward-bench: needs root (network namespaces, pasta)" >&2; exit 1; }
[ -x "$haven" ] || { echo "forward-bench: $haven missing (build first)" >&2; exit 1; }

work=$(mktemp -d /tmp/haven-forward-bench.XXXXXX)
host=hv-fb-host-$$
world=hv-fb-world-$$
sink=
cleanup() {
  [ -z "$sink" ] || kill "$sink" 2> /dev/null || true
  ip netns del "$host" 2> /dev/null || true
  ip netns del "$world" 2> /dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
ip netns add "$host"
ip netns add "$world"
ip link add fb0 netns "$host" type veth peer name fb1 netns "$world"
ip -n "$host" link set lo up
ip -n "$world" link set lo up
ip -n "$host" addr add 192.0.2.2/24 dev fb0
ip -n "$world" addr add 192.0.2.1/24 dev fb1
ip -n "$host" link set fb0 up
ip -n "$world" link set fb1 up
ip -n "$host" route add default via 192.0.2.1
mkdir -p "/etc/netns/$host"
echo "nameserver 192.0.2.1" > "/etc/netns/$host/resolv.conf"
trap 'cleanup; rm -rf "/etc/netns/$host"' EXIT

cat > "$work/bulk.yaml" <<'YAML'
name: bench-bulk
extends: claude-code
network:
  allow: ["192.0.2.1/32:9000"]
YAML
mkdir -p "$work/project"
chmod 755 "$work" "$work/project"

# The world: "up N" reads N bytes then answers "ok"; "down N" sends N bytes.
cat > "$work/world.py" <<'PY'
import socket, sys, threading
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("192.0.2.1", 9000)); s.listen(8); open(sys.argv[1], "w").close()
def serve(c):
    f = c.makefile("rb"); kind, n = f.readline().split(); n = int(n)
    if kind == b"up":
        left = n
        while left > 0:
            b = f.read1(min(left, 1 << 20))
            if not b: break
            left -= len(b)
        c.sendall(b"ok\n")
    else:
        chunk = b"x" * (1 << 20); left = n
        while left > 0:
            c.sendall(chunk[:min(left, len(chunk))]); left -= min(left, len(chunk))
    c.close()
while True:
    c, _ = s.accept(); threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
cat > "$work/project/client.py" <<'PY'
import socket, sys, time
n = int(sys.argv[1]) * 1048576
chunk = b"y" * (1 << 20)
s = socket.create_connection(("192.0.2.1", 9000)); t = time.monotonic()
s.sendall(b"up %d\n" % n); left = n
while left > 0:
    s.sendall(chunk[:min(left, len(chunk))]); left -= min(left, len(chunk))
assert s.makefile("rb").readline() == b"ok\n"
up = n / 1048576 / (time.monotonic() - t); s.close()
s = socket.create_connection(("192.0.2.1", 9000)); t = time.monotonic()
s.sendall(b"down %d\n" % n); got = 0
while got < n:
    b = s.recv(1 << 20)
    if not b: break
    got += len(b)
down = got / 1048576 / (time.monotonic() - t)
print("up %.0f MB/s down %.0f MB/s" % (up, down))
PY
ip netns exec "$world" python3 "$work/world.py" "$work/ready" &
sink=$!
for _ in $(seq 50); do [ -e "$work/ready" ] && break; sleep 0.1; done

echo "== bulk copy, $mb MB each way (3 runs each, in turn)"
echo "host namespace, no sandbox: $(cd "$work/project" && ip netns exec "$host" python3 client.py "$mb")"
for i in 1 2 3; do
  for way in pasta forwarder; do
    echo "$way: $(cd "$work/project" && HOME=$work HAVEN_EGRESS_WAY=$way ip netns exec "$host" "$haven" run \
                  --policy "$work/bulk.yaml" -- python3 client.py "$mb" 2>&1 | tail -1)"
  done
done

echo "== start: haven run --policy claude-code -- true, forwarder (A) vs pasta (B)"
if command -v farm-bench > /dev/null; then
  cd "$work/project"
  HOME=$work farm-bench -n "$runs" --warmup 2 --timeout 600 \
    --vs "env HAVEN_EGRESS_WAY=pasta ip netns exec $host $haven run --policy claude-code -- true" \
    -- env HAVEN_EGRESS_WAY=forwarder ip netns exec "$host" "$haven" run --policy claude-code -- true
else
  echo "farm-bench missing: start not measured"
fi
