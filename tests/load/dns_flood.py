#!/usr/bin/env python3
"""Many DNS queries at haven's resolver (tests/load/fds.sh), in turn:

  api.example.com A over UDP          allowed, asked upstream: NOERROR
  nN.svc.example.com A over UDP       allowed (subdomains), a new name
                                      each time, so never cached:
                                      upstream says NXDOMAIN
  evil-N.example A over UDP           not in the policy: NXDOMAIN
  api.example.com AAAA over TCP       allowed: NOERROR
  evil-N.example A over TCP           NXDOMAIN
  and every 100th: silent.svc.example.com, which upstream never answers
  (the resolver's pending upstream query must time out and go away):
  any answer, or none within 0.5 s, is fine.

  dns_flood.py SERVER COUNT

Prints "queries=N unexpected=M" and each unexpected answer (at most 20);
exits 1 when any was unexpected.  Uses egress_dns.py's client.
"""
import os
import socket
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from egress_dns import TYPES, ask  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    server, count = sys.argv[1], int(sys.argv[2])
    kinds = [
        (lambda i: "api.example.com", "A", False, "NOERROR"),
        (lambda i: "n%d.svc.example.com" % i, "A", False, "NXDOMAIN"),
        (lambda i: "evil-%d.example" % i, "A", False, "NXDOMAIN"),
        (lambda i: "api.example.com", "AAAA", True, "NOERROR"),
        (lambda i: "evil-%d.example" % i, "A", True, "NXDOMAIN"),
    ]
    bad = 0
    for i in range(count):
        if i % 100 == 99:
            try:
                ask(server, "silent.svc.example.com", TYPES["A"], False, timeout=0.5)
            except OSError:
                pass
            continue
        name_of, qtype, tcp, want = kinds[i % len(kinds)]
        name = name_of(i)
        try:
            got = ask(server, name, TYPES[qtype], tcp)[0]
        except OSError as e:
            got = "error %s" % e
        if got != want:
            bad += 1
            if bad <= 20:
                print("unexpected: %s %s %s: %s (want %s)" % (name, qtype, "tcp" if tcp else "udp", got, want))
    print("queries=%d unexpected=%d" % (count, bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
