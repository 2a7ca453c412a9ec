#!/usr/bin/env python3
"""Looks for a secret everywhere a process in the sandbox can read it.

    leak_scan.py HEX[,HEX...] [DIR...]

HEX is a secret, hex-encoded: the scan runs as an agent's tool call,
and neither that call (which the agent keeps in its transcript) nor this
command line may hold the secret itself, or the scan would plant what it
looks for.  Finds a secret as it is and base64-encoded (as in a Basic
credential or an encoded blob).  Looks in its own environment (what `env` prints), in every
/proc/PID/environ and /proc/PID/cmdline it can read, and in every regular
file under the DIRs (links not followed, /proc, /sys and /dev not
entered).  Never prints the secret: one line "LEAK WHERE" per place that
holds it, then "environ read: COMM,..." (the processes whose environment
it read, so that a test can check the agent's own was among them),
"files read: N, unreadable: N" and last "clean" or "leaked".
"""
import base64
import os
import stat
import sys

CHUNK = 1 << 20
SKIP = ("/proc", "/sys", "/dev")


def base64_forms(key):
    """What a base64 encoding of data holding KEY (at any offset: three
    alignments) always contains: the key's own characters, without the
    ones its neighbours share."""
    forms = []
    for skip in range(3):
        enc = base64.b64encode(b"\0" * skip + key).rstrip(b"=")
        # The first characters carry bits of the padding bytes, the last
        # four may carry bits of whatever follows the key.
        forms.append(enc[(skip * 8 + 5) // 6:-4])
    return forms


def found(data, secrets):
    return any(s in data for s in secrets)


def holds(path, secrets):
    """Whether the regular file PATH holds one of SECRETS (read in chunks
    that overlap by the longest's length, so a match across two is
    found)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return False
        tail = b""
        while True:
            data = f.read(CHUNK)
            if not data:
                return False
            if found(tail + data, secrets):
                return True
            tail = data[-(max(map(len, secrets)) - 1):]


def main():
    keys = [bytes.fromhex(h) for h in sys.argv[1].split(",")]
    if min(map(len, keys)) < 16:
        sys.exit("leak_scan: secrets of at least 16 bytes, hex-encoded")
    secrets = keys + [b for k in keys for b in base64_forms(k)]
    leaks = []
    if any(found((k + "=" + v).encode(), secrets) for k, v in os.environ.items()):
        leaks.append("env")
    comms = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        for name in ("environ", "cmdline"):
            try:
                with open("/proc/%s/%s" % (pid, name), "rb") as f:
                    data = f.read()
                with open("/proc/%s/comm" % pid) as f:
                    comm = f.read().strip()
            except OSError:
                continue
            if name == "environ":
                comms.add(comm)
            if found(data, secrets):
                leaks.append("/proc/%s/%s (%s)" % (pid, name, comm))
    files = unreadable = 0
    for top in sys.argv[2:]:
        for root, dirs, names in os.walk(top, onerror=lambda e: None):
            dirs[:] = [d for d in dirs if os.path.join(root, d) not in SKIP]
            for n in names:
                path = os.path.join(root, n)
                try:
                    if not stat.S_ISREG(os.lstat(path).st_mode):
                        continue
                    files += 1
                    if holds(path, secrets):
                        leaks.append(path)
                except OSError:
                    unreadable += 1
    for where in sorted(set(leaks)):
        print("LEAK", where)
    print("environ read:", ",".join(sorted(comms)))
    print("files read: %d, unreadable: %d" % (files, unreadable))
    print("leaked" if leaks else "clean")


if __name__ == "__main__":
    main()
