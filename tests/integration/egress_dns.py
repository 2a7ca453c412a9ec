#!/usr/bin/env python3
"""A test DNS server and client for test_egress_resolver.sh (run inside a netns).

  egress_dns.py server ZONE LOG READY ADDR...
      Answers UDP and TCP on ADDR:53 from ZONE (JSON, re-read on every
      query): {"NAME": {"A": [["ADDR", TTL]...], "AAAA": [...],
      "CNAME": ["TARGET", TTL], "truncate": true, "silent": true}}.
      "truncate": UDP answers carry TC and no records (TCP answers whole);
      "silent": no answer at all.  Names not in ZONE: NXDOMAIN.  Every
      query appends "PROTO QNAME QTYPE" to LOG.  READY is created once bound.
  egress_dns.py query SERVER NAME TYPE [tcp]
      One query; prints "RCODE ede=TEXT ANSWER..." (ANSWER: TYPE:DATA:TTL)
      or "timeout" / "error:ERRNO".  Gives up after 3 s.
  egress_dns.py resolve-connect SERVER NAME TYPE PORT COUNT
      COUNT times: ask, connect at once to the first address, read the
      peer's line.  Prints "ok N/COUNT max_ms=M avg_ms=A" (the slowest
      and the mean connect after its answer) and, per failure, one line saying why.
"""
import json
import os
import select
import socket
import struct
import sys
import time

TYPES = {"A": 1, "CNAME": 5, "SOA": 6, "TXT": 16, "AAAA": 28, "SVCB": 64, "HTTPS": 65, "ANY": 255}
NAMES = {v: k for k, v in TYPES.items()}
RCODES = {0: "NOERROR", 1: "FORMERR", 2: "SERVFAIL", 3: "NXDOMAIN", 4: "NOTIMP", 5: "REFUSED"}


def enc_name(name):
    out = b""
    for label in name.rstrip(".").split("."):
        if label:
            out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def read_name(msg, pos):
    labels, jumped, end, hops = [], False, pos, 0
    while True:
        n = msg[pos]
        if n & 0xC0 == 0xC0:
            if not jumped:
                end = pos + 2
            pos = ((n & 0x3F) << 8) | msg[pos + 1]
            jumped = True
            hops += 1
            if hops > 64:
                raise ValueError("pointer loop")
            continue
        if n == 0:
            if not jumped:
                end = pos + 1
            return ".".join(labels), end
        labels.append(msg[pos + 1:pos + 1 + n].decode("ascii", "replace"))
        pos += 1 + n


# --- server -------------------------------------------------------------------

def rr(name, rtype, ttl, rdata):
    return enc_name(name) + struct.pack(">HHIH", rtype, 1, ttl, len(rdata)) + rdata


def answer(zone, query, proto):
    qid, flags = struct.unpack(">HH", query[:4])
    qname, pos = read_name(query, 12)
    qtype, qclass = struct.unpack(">HH", query[pos:pos + 4])
    question = query[12:pos + 4]
    qname = qname.lower()
    records, rcode, tc = [], 0, False
    name, seen = qname, 0
    entry = zone.get(name)
    if entry is None:
        rcode = 3
    elif entry.get("silent"):
        return None, qname, qtype
    elif entry.get("truncate") and proto == "udp":
        tc = True
    else:
        while entry is not None and seen < 20:
            seen += 1
            if "CNAME" in entry:
                target, ttl = entry["CNAME"]
                records.append(rr(name, 5, ttl, enc_name(target)))
                name = target
                entry = zone.get(name)
                continue
            for addr, ttl in entry.get("A", []) if qtype == 1 else []:
                records.append(rr(name, 1, ttl, socket.inet_pton(socket.AF_INET, addr)))
            for addr, ttl in entry.get("AAAA", []) if qtype == 28 else []:
                records.append(rr(name, 28, ttl, socket.inet_pton(socket.AF_INET6, addr)))
            break
    out_flags = 0x8000 | (flags & 0x0100) | 0x0080 | (0x0200 if tc else 0) | rcode
    head = struct.pack(">HHHHHH", qid, out_flags, 1, len(records), 0, 0)
    return head + question + b"".join(records), qname, qtype


def server(zone_path, log, ready, addrs):
    udp, tcp = [], []
    for a in addrs:
        fam = socket.AF_INET6 if ":" in a else socket.AF_INET
        u = socket.socket(fam, socket.SOCK_DGRAM)
        u.bind((a, 53))
        t = socket.socket(fam, socket.SOCK_STREAM)
        t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        t.bind((a, 53))
        t.listen(16)
        udp.append(u)
        tcp.append(t)
    open(ready, "w").close()

    def handle(query, proto):
        with open(zone_path) as f:
            zone = json.load(f)
        reply, qname, qtype = answer(zone, query, proto)
        with open(log, "a") as f:
            f.write("%s %s %s\n" % (proto, qname, NAMES.get(qtype, qtype)))
        return reply

    # Ends when the test kills it.
    while True:
        readable, _, _ = select.select(udp + tcp, [], [], 1.0)
        for s in readable:
            if s in udp:
                query, peer = s.recvfrom(4096)
                reply = handle(query, "udp")
                if reply is not None:
                    s.sendto(reply, peer)
            else:
                c, _ = s.accept()
                c.settimeout(2)
                try:
                    ln = struct.unpack(">H", c.recv(2, socket.MSG_WAITALL))[0]
                    reply = handle(c.recv(ln, socket.MSG_WAITALL), "tcp")
                    if reply is not None:
                        c.sendall(struct.pack(">H", len(reply)) + reply)
                except (OSError, struct.error):
                    pass
                finally:
                    c.close()


# --- client ---------------------------------------------------------------------

def ask(server_addr, name, qtype, use_tcp=False, timeout=3.0):
    """(rcode name, ede text, [(type, data, ttl)]) or raises OSError/socket.timeout."""
    qid = struct.unpack(">H", os.urandom(2))[0]
    # RD, one question, one OPT (EDNS0, 1232 bytes) so EDE can come back.
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 1) + enc_name(name) + struct.pack(">HH", qtype, 1)
    q += b"\0" + struct.pack(">HHIH", 41, 1232, 0, 0)
    fam = socket.AF_INET6 if ":" in server_addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM if use_tcp else socket.SOCK_DGRAM)
    s.settimeout(timeout)
    try:
        s.connect((server_addr, 53))
        if use_tcp:
            s.sendall(struct.pack(">H", len(q)) + q)
            ln = struct.unpack(">H", s.recv(2, socket.MSG_WAITALL))[0]
            msg = s.recv(ln, socket.MSG_WAITALL)
        else:
            s.send(q)
            while True:
                msg = s.recv(65535)
                if msg[:2] == q[:2]:
                    break
    finally:
        s.close()
    flags, qd, an, ns, ar = struct.unpack(">HHHHH", msg[2:12])
    rcode = flags & 0xF
    pos = 12
    for _ in range(qd):
        _, pos = read_name(msg, pos)
        pos += 4
    answers, ede = [], ""
    for i in range(an + ns + ar):
        owner, pos = read_name(msg, pos)
        rtype, rclass, ttl, rdlen = struct.unpack(">HHIH", msg[pos:pos + 10])
        pos += 10
        rdata = msg[pos:pos + rdlen]
        if i < an:
            if rtype == 1:
                answers.append(("A", socket.inet_ntop(socket.AF_INET, rdata), ttl))
            elif rtype == 28:
                answers.append(("AAAA", socket.inet_ntop(socket.AF_INET6, rdata), ttl))
            elif rtype == 5:
                answers.append(("CNAME", read_name(msg, pos)[0], ttl))
        if rtype == 41:
            o = 0
            while o + 4 <= len(rdata):
                code, olen = struct.unpack(">HH", rdata[o:o + 4])
                if code == 15:
                    ede = rdata[o + 6:o + 4 + olen].decode("utf-8", "replace")
                o += 4 + olen
        pos += rdlen
    tc = " tc" if flags & 0x0200 else ""
    return RCODES.get(rcode, str(rcode)) + tc, ede, answers


def query(server_addr, name, qtype, use_tcp):
    try:
        rcode, ede, answers = ask(server_addr, name, TYPES[qtype], use_tcp)
    except socket.timeout:
        print("timeout")
        return
    except OSError as e:
        print("error:%s" % (os.strerror(e.errno) if e.errno else e))
        return
    print(" ".join([rcode, "ede=" + ede.replace(" ", "_")] + ["%s:%s:%d" % a for a in answers]))


def resolve_connect(server_addr, name, qtype, port, count):
    ok, worst, total = 0, 0.0, 0.0
    for i in range(count):
        try:
            rcode, ede, answers = ask(server_addr, name, TYPES[qtype])
            addrs = [a[1] for a in answers if a[0] == qtype]
            if not addrs:
                print("fail %d: %s %s no address" % (i, rcode, ede))
                continue
            start = time.monotonic()
            fam = socket.AF_INET6 if qtype == "AAAA" else socket.AF_INET
            c = socket.socket(fam, socket.SOCK_STREAM)
            c.settimeout(3)
            c.connect((addrs[0], port))
            took = time.monotonic() - start
            worst, total = max(worst, took), total + took
            data = c.recv(64)
            c.close()
            if data.startswith(b"hi"):
                ok += 1
            else:
                print("fail %d: read %r" % (i, data))
        except OSError as e:
            print("fail %d: %s" % (i, e))
    print("ok %d/%d max_ms=%.2f avg_ms=%.3f" % (ok, count, worst * 1000, total * 1000 / max(count, 1)))


def main():
    a = sys.argv
    if len(a) >= 6 and a[1] == "server":
        server(a[2], a[3], a[4], a[5:])
    elif len(a) in (5, 6) and a[1] == "query":
        query(a[2], a[3], a[4], len(a) == 6 and a[5] == "tcp")
    elif len(a) == 7 and a[1] == "resolve-connect":
        resolve_connect(a[2], a[3], a[4], int(a[5]), int(a[6]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
