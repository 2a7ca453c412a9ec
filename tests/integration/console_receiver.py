#!/usr/bin/env python3
"""Console socket receiver for tests: accept one connection, take the one
fd of its SCM_RIGHTS message, check that it is a pty master, then copy
everything the container writes to the terminal (until the last slave is
closed, or 20 s) to OUT after a first line "pty-master /dev/pts/N" (N from
TIOCGPTN: the pty's number in the container's devpts)."""
import array
import fcntl
import os
import select
import socket
import struct
import sys
import termios
import time

path, out = sys.argv[1], sys.argv[2]
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(1)
srv.settimeout(20)
conn, _ = srv.accept()
fds = array.array("i")
msg, anc, _, _ = conn.recvmsg(4096, socket.CMSG_SPACE(4 * fds.itemsize))
for level, kind, data in anc:
    if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
        fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
if len(fds) != 1:
    sys.exit("expected exactly one fd, got %d" % len(fds))
master = fds[0]
TIOCGPTN = 0x80045430
try:
    n = struct.unpack("I", fcntl.ioctl(master, TIOCGPTN, b"\0\0\0\0"))[0]
except OSError as e:
    sys.exit("received fd is not a pty master: %s (%s)" % (e, os.readlink("/proc/self/fd/%d" % master)))
data = b""
deadline = time.monotonic() + 20
while time.monotonic() < deadline:
    r, _, _ = select.select([master], [], [], 0.5)
    if not r:
        continue
    try:
        chunk = os.read(master, 4096)
    except OSError:  # EIO: every slave fd is closed
        break
    if not chunk:
        break
    data += chunk
with open(out, "wb") as f:
    f.write(b"pty-master /dev/pts/%d\n" % n + data)
