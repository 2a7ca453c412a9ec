#!/usr/bin/env python3
"""Drive a command on a terminal of its own, as a person would.

    pty_drive.py [--timeout S] STEP... -- CMD ARGS...

CMD runs on a fresh pty (its stdin, stdout and stderr, its controlling
terminal); the steps run in order:

    expect=REGEX   wait until the output since the last match matches REGEX
    send=TEXT      type TEXT (Python escapes: \\r is Enter)
    shell=CMD      run CMD with sh -c (another process, as another terminal
                   would); its output goes to the transcript's end, marked
    sleep=S        wait S seconds

then the output is read until CMD exits.  Prints the transcript (what the
terminal showed) and a last line "exit=N".  An expect that times out
prints the transcript, "expect-timeout: REGEX" and exits 3; the command is
killed.  Every wait is bounded by --timeout (default 20 s each).
"""
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import fcntl
import time


def main():
    args = sys.argv[1:]
    timeout = 20.0
    if args[:1] == ["--timeout"]:
        timeout = float(args[1])
        args = args[2:]
    sep = args.index("--")
    steps, cmd = args[:sep], args[sep + 1:]
    pid, fd = os.forkpty()
    if pid == 0:
        os.execvp(cmd[0], cmd)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    out = bytearray()
    notes = []
    mark = 0

    def read_some(until):
        left = until - time.monotonic()
        if left <= 0:
            return False
        r, _, _ = select.select([fd], [], [], left)
        if not r:
            return False
        try:
            data = os.read(fd, 4096)
        except OSError:
            data = b""
        if not data:
            return None
        out.extend(data)
        return True

    def finish(code, why=None):
        sys.stdout.write(out.decode("utf-8", "replace"))
        for n in notes:
            sys.stdout.write("\n" + n)
        if why:
            sys.stdout.write("\n" + why)
        sys.stdout.write("\nexit=%s\n" % code)
        sys.stdout.flush()

    for step in steps:
        kind, _, arg = step.partition("=")
        if kind == "expect":
            rx = re.compile(arg.encode())
            until = time.monotonic() + timeout
            while True:
                m = rx.search(out, mark)
                if m:
                    mark = m.end()
                    break
                got = read_some(until)
                if not got:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    finish("killed", "expect-timeout: " + arg)
                    sys.exit(3)
        elif kind == "send":
            os.write(fd, arg.encode().decode("unicode_escape").encode())
        elif kind == "shell":
            p = subprocess.run(["sh", "-c", arg], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=timeout)
            notes.append("shell[%d]: %s" % (p.returncode, p.stdout.decode("utf-8", "replace").strip()))
        elif kind == "sleep":
            until = time.monotonic() + float(arg)
            while read_some(until):
                pass
        else:
            sys.exit("pty_drive.py: unknown step " + step)
    until = time.monotonic() + timeout
    while True:
        got = read_some(until)
        if got is None:
            break
        if got is False:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            finish("killed", "end-timeout")
            sys.exit(3)
    _, status = os.waitpid(pid, 0)
    finish(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main()
