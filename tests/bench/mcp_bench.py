#!/usr/bin/env python3
"""haven mcp's figures: the time from its start to the answer to
initialize (the sandbox is made before the first message is read), and
the round trip of run_command ["true"], 200 times, as an MCP client sees
it over stdio.

    tests/bench/mcp_bench.py HAVEN POLICY [haven mcp's options...]

With --socket naming a running `haven serve` whose pool holds POLICY,
the start takes a pooled sandbox; without, haven mcp starts a private
service and makes the sandbox fresh.  Prints one line."""
import json
import statistics
import subprocess
import sys
import time

CALLS = 200


def main():
    haven, policy = sys.argv[1], sys.argv[2]
    p = subprocess.Popen([haven, "mcp", "--policy", policy] + sys.argv[3:],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def send(obj):
        p.stdin.write((json.dumps(obj) + "\n").encode())
        p.stdin.flush()

    def recv():
        line = p.stdout.readline()
        if not line:
            sys.exit("haven mcp ended early (status %s)" % p.wait())
        return json.loads(line)

    t0 = time.monotonic()
    send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
          "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                     "clientInfo": {"name": "mcp_bench", "version": "1"}}})
    recv()
    start_ms = (time.monotonic() - t0) * 1000
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    times = []
    for i in range(1, CALLS + 1):
        t = time.monotonic()
        send({"jsonrpc": "2.0", "id": i, "method": "tools/call",
              "params": {"name": "run_command", "arguments": {"argv": ["true"]}}})
        r = recv()
        if r.get("result", {}).get("structuredContent", {}).get("exit_code") != 0:
            sys.exit("run_command failed: %s" % json.dumps(r)[:300])
        times.append((time.monotonic() - t) * 1000)
    p.stdin.close()
    p.wait(timeout=30)
    times.sort()
    print("start to initialize answered %.1f ms; run_command true x%d: median %.2f ms, p90 %.2f ms, max %.2f ms"
          % (start_ms, CALLS, statistics.median(times), times[int(CALLS * 0.9) - 1], times[-1]))


if __name__ == "__main__":
    main()
