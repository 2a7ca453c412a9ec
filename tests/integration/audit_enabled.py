#!/usr/bin/env python3
"""The kernel's audit switch, for tests: `get` prints 0 or 1, `set N`
sets it (AUDIT_SET, needs CAP_AUDIT_CONTROL).  Tests that need Landlock's
audit records turn it on for their run and put back what they found."""
import socket, struct, sys

AUDIT_GET, AUDIT_SET, NLMSG_ERROR = 1000, 1001, 2
STATUS = "=10I"  # struct audit_status up to backlog_wait_time

def request(s, mtype, payload=b"", flags=1):
    s.sendto(struct.pack("=IHHII", 16 + len(payload), mtype, flags, 1, 0) + payload, (0, 0))
    data = s.recv(65536)
    _, rtype, _, _, _ = struct.unpack("=IHHII", data[:16])
    return rtype, data[16:]

s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 9)  # NETLINK_AUDIT
if sys.argv[1] == "get":
    rtype, body = request(s, AUDIT_GET)
    if rtype != AUDIT_GET:
        sys.exit("AUDIT_GET failed")
    print(struct.unpack("=5I", body[:20])[1])
else:
    status = struct.pack(STATUS, 1, int(sys.argv[2]), 0, 0, 0, 0, 0, 0, 0, 0)  # mask AUDIT_STATUS_ENABLED
    rtype, body = request(s, AUDIT_SET, status, flags=1 | 4)  # NLM_F_REQUEST | NLM_F_ACK
    if rtype != NLMSG_ERROR or struct.unpack("=i", body[:4])[0] != 0:
        sys.exit("AUDIT_SET failed")
