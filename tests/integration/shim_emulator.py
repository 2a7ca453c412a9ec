#!/usr/bin/env python3
"""What containerd-shim-runc-v2 does with a runtime, as far as a runtime
can tell: the shim is a child subreaper, gives the container pipes for
its stdio, runs `create --pid-file`, `start`, then `kill ID 9`, waits for
the pid in the pid file to exit through its own waitpid (the subreaper
sees init only if no other process reaps it), waits for EOF on the
pipes, runs `delete ID` (no --force) and reaps what is left.  Any of these steps not ending
in time means an engine's shim would hang or stay.

  shim_emulator.py RUNTIME ROOT BUNDLE ID PIDFILE
Prints one line per step; exits 0 when every step ended in time and no
process is left whose parent is this one."""
import ctypes
import os
import select
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def step(msg):
    print(msg, flush=True)


def fail(msg):
    print("FAIL " + msg, flush=True)
    # What is left under this subreaper goes with it (bounded test).
    for pid, _ in children():
        try:
            os.kill(pid, 9)
        except OSError:
            pass
    sys.exit(1)


def children():
    """Pids whose parent is this process (reparented ones included)."""
    me, out = os.getpid(), []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                st = f.read()
        except OSError:
            continue
        fields = st[st.rindex(")") + 2:].split()
        if int(fields[1]) == me and fields[0] != "Z":
            out.append((int(d), st[st.index("(") + 1:st.rindex(")")]))
    return out


def main():
    runtime, root, bundle, cid, pidfile = sys.argv[1:6]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        fail("prctl(PR_SET_CHILD_SUBREAPER)")
    rt = [runtime, "--root", root]
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    r = subprocess.run(rt + ["create", "--bundle", bundle, "--pid-file", pidfile, cid],
                       stdin=subprocess.DEVNULL, stdout=out_w, stderr=err_w, timeout=30)
    os.close(out_w)
    os.close(err_w)
    if r.returncode != 0:
        fail(f"create exited {r.returncode}")
    init = int(open(pidfile).read())
    step(f"created init {init}")
    if subprocess.run(rt + ["start", cid], timeout=30).returncode != 0:
        fail("start")
    time.sleep(0.3)
    if subprocess.run(rt + ["kill", cid, "9"], timeout=30).returncode != 0:
        fail("kill")
    # The shim's reaper: every child exit, until init's.  The runtime's
    # own commands above were waited for by subprocess already.
    deadline, status = time.monotonic() + 10, None
    while status is None and time.monotonic() < deadline:
        pid, st = os.waitpid(-1, os.WNOHANG)
        if pid == init:
            status = st
        elif pid == 0:
            time.sleep(0.05)
        else:
            step(f"reaped {pid} (not init), status {st}")
    if status is None:
        fail(f"init {init} never exited to its subreaper within 10 s (left: {children()})")
    step(f"init exited, signal {os.WTERMSIG(status) if os.WIFSIGNALED(status) else None}")
    # EOF on both pipes once init is gone, before delete (as with runc):
    # no process of the runtime's (its monitor lives until delete) holds
    # the container's stdio, which the shim copies until EOF.
    deadline, open_fds = time.monotonic() + 5, {out_r, err_r}
    while open_fds and time.monotonic() < deadline:
        ready, _, _ = select.select(list(open_fds), [], [], 0.2)
        for fd in ready:
            if not os.read(fd, 65536):
                open_fds.discard(fd)
    if open_fds:
        fail("the container's stdio pipes got no EOF within 5 s after init exited")
    step("stdio EOF")
    r = subprocess.run(rt + ["delete", cid], capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        fail(f"delete exited {r.returncode}: {r.stderr.strip()}")
    step("deleted")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass
        left = children()
        if not left:
            step("nothing left")
            return
        time.sleep(0.1)
    fail(f"processes left under the subreaper after delete: {left}")


main()
