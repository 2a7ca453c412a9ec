#!/usr/bin/env python3
"""Listeners and a client for test_egress_table.sh (run inside a netns).

  egress_world.py listen LOG READY SPEC...   SPEC: tcp:ADDR:PORT or
      udp:ADDR:PORT (ADDR of IPv6 in brackets).  Every connection or
      datagram appends "PROTO ADDR PORT" (the listening side) to LOG and
      is answered with "hi ADDR PORT".  READY is created once all are bound.
  egress_world.py connect PROTO ADDR PORT [MARK]
      Prints "connected|refused|denied|unreachable|error:ERRNO|timeout|reply:TEXT"
      and the milliseconds it took.  tcp: a connect (and the first line the
      peer sends); udp: one datagram and its answer.  Gives up after 3 s.
"""
import errno
import os
import select
import socket
import sys
import time


def parse(spec):
    proto, rest = spec.split(":", 1)
    if rest.startswith("["):
        addr, port = rest[1:].split("]:")
    else:
        addr, port = rest.rsplit(":", 1)
    return proto, addr, int(port)


def family(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def listen(log, ready, specs):
    socks = {}
    for spec in specs:
        proto, addr, port = parse(spec)
        kind = socket.SOCK_STREAM if proto == "tcp" else socket.SOCK_DGRAM
        s = socket.socket(family(addr), kind)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family(addr) == socket.AF_INET6:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        s.bind((addr, port))
        if proto == "tcp":
            s.listen(16)
        socks[s] = (proto, addr, port)
    open(ready, "w").close()
    # Ends when the test kills it; select wakes at least every second.
    while True:
        readable, _, _ = select.select(list(socks), [], [], 1.0)
        for s in readable:
            proto, addr, port = socks[s]
            with open(log, "a") as f:
                f.write("%s %s %d\n" % (proto, addr, port))
            answer = ("hi %s %d\n" % (addr, port)).encode()
            if proto == "tcp":
                c, _ = s.accept()
                try:
                    c.sendall(answer)
                finally:
                    c.close()
            else:
                _, peer = s.recvfrom(2048)
                s.sendto(answer, peer)


def connect(proto, addr, port, mark=0):
    start = time.monotonic()
    kind = socket.SOCK_STREAM if proto == "tcp" else socket.SOCK_DGRAM
    s = socket.socket(family(addr), kind)
    if mark:
        s.setsockopt(socket.SOL_SOCKET, 36, mark)  # SO_MARK
    s.settimeout(3.0)
    try:
        s.connect((addr, port))
        if proto == "udp":
            s.send(b"query\n")
            result = "reply:" + s.recv(2048).decode().strip().replace(" ", "_")
        else:
            data = s.recv(2048).decode().strip().replace(" ", "_")
            result = "connected" + (":" + data if data else "")
    except socket.timeout:
        result = "timeout"
    except OSError as e:
        # EPERM: the send itself was dropped by the table (a rejected
        # packet the socket sent).
        result = {errno.ECONNREFUSED: "refused", errno.EPERM: "denied", errno.EHOSTUNREACH: "unreachable",
                  errno.ENETUNREACH: "unreachable", errno.EACCES: "unreachable"}.get(
                      e.errno, "error:%s" % errno.errorcode.get(e.errno, e.errno))
    ms = int((time.monotonic() - start) * 1000)
    print("%s %d" % (result, ms))


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "listen":
        listen(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif len(sys.argv) in (5, 6) and sys.argv[1] == "connect":
        connect(sys.argv[2], sys.argv[3], int(sys.argv[4]),
                int(sys.argv[5], 0) if len(sys.argv) == 6 else 0)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
