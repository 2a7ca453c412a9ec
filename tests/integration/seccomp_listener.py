#!/usr/bin/env python3
"""Seccomp listener for tests: accept one connection, check it carries the
container process state and one fd, write the state to a file, then close
the notify fd (pending and later notifications then fail with ENOSYS)."""
import array
import json
import os
import socket
import sys

srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(sys.argv[1])
srv.listen(1)
srv.settimeout(20)
conn, _ = srv.accept()
fds = array.array("i")
msg, anc, _, _ = conn.recvmsg(65536, socket.CMSG_LEN(fds.itemsize))
for level, kind, data in anc:
    if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
        fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
state = json.loads(msg)
with open(sys.argv[2], "w") as f:
    json.dump({"state": state, "nfds": len(fds),
               "fd_is_seccomp": os.readlink("/proc/self/fd/%d" % fds[0]) == "anon_inode:seccomp notify"}, f)
for fd in fds:
    os.close(fd)
