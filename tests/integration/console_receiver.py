#!/usr/bin/env python3
"""Console socket receiver for tests: accept one connection, take the pty
master from its SCM_RIGHTS message, print everything the container writes
to the terminal (until it closes), then exit."""
import array
import os
import socket
import sys

path = sys.argv[1]
out = sys.argv[2]
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(1)
srv.settimeout(20)
conn, _ = srv.accept()
fds = array.array("i")
msg, anc, _, _ = conn.recvmsg(4096, socket.CMSG_LEN(fds.itemsize))
for level, kind, data in anc:
    if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
        fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
if len(fds) != 1:
    sys.exit("no fd received")
master = fds[0]
data = b""
while True:
    try:
        chunk = os.read(master, 4096)
    except OSError:
        break
    if not chunk:
        break
    data += chunk
with open(out, "wb") as f:
    f.write(msg + b"\n" + data)
