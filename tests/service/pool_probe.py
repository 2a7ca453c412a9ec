"""What a command sees of its sandbox, as text that is the same for two
sandboxes of one policy when they are made alike (tests/service/
test_pool_equal.sh runs it in a fresh and in a pooled sandbox and diffs).

Run INSIDE the sandbox, as its first command:  python3 pool_probe.py ID WS
(ID: the sandbox's id, WS: its workspace; both are written as <ID> and
<WS>).  Python, not a shell: some policies refuse every shell.

Only what differs by nature between two sandboxes made one after the other
is normalised, each said where it is done: the id and the workspace, the
kernel's counters (mount ids, peer groups, anonymous device numbers,
traffic, memory in use), pipe and socket inode numbers.  Everything the
policy decides (credentials, capabilities, seccomp, limits, mounts and
their options, environment, network, what is hidden or refused) is kept."""

import ctypes
import errno
import os
import re
import subprocess
import sys

ID, WS = sys.argv[1], sys.argv[2]
out = []


def norm(text):
    text = text.replace(WS, "<WS>")
    # haven's per-project state (copy-on-write home layers) is named after
    # the workspace: its basename (the id) and a hash of its path.
    text = re.sub(re.escape(ID) + r"-[0-9a-f]{16}", "<ID>-<path hash>", text)
    text = text.replace(ID, "<ID>")
    # Another sandbox's id (a bundle or cgroup path named after a label).
    return re.sub(r"hvs-[0-9a-f]{8}", "<hvs-id>", text)


def section(name, text):
    out.append("== " + name)
    out.append(norm(text.rstrip("\n")))


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace")
    except OSError as e:
        return "<%s>" % errno.errorcode.get(e.errno, str(e.errno))


# Counters of the process's own life, not of its sandbox.
STATUS_DROP = re.compile(r"^(Vm|Rss|Hugetlb|voluntary_ctxt|nonvoluntary_ctxt|SigQ|State|PPid|TracerPid|Kthread)")


def status(path):
    return "\n".join(l for l in read(path).splitlines() if not STATUS_DROP.match(l))


# pids and what runs: a pooled sandbox must hold its keeper and nothing
# else at its first command, like a fresh one.
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
section("my pid", str(os.getpid()))
section("pids", "\n".join("%d %s" % (p, read("/proc/%d/cmdline" % p).replace("\0", " ").strip())
                          for p in pids if p != os.getpid()))
section("self status", status("/proc/self/status"))
section("keeper cmdline", read("/proc/1/cmdline").replace("\0", " "))
section("keeper status", status("/proc/1/status"))
section("keeper limits", read("/proc/1/limits"))
old = os.umask(0o22)
os.umask(old)
section("umask", "%04o" % old)
section("limits", read("/proc/self/limits"))
for f in ("uid_map", "gid_map", "setgroups", "attr/current", "timens_offsets", "oom_score_adj", "cgroup"):
    section(f, read("/proc/self/" + f))
# Scheduling: a pool's maker at a lower priority must not hand it on.
def stat_prio(pid):
    f = read("/proc/%s/stat" % pid).rsplit(")", 1)[-1].split()
    return "priority %s nice %s policy %s" % (f[15], f[16], f[38]) if len(f) > 38 else "?"


section("scheduling", "self: nice %d, policy %d, affinity %s, ioprio %d; %s\nkeeper: %s" % (
    os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0), sorted(os.sched_getaffinity(0)),
    ctypes.CDLL(None, use_errno=True).syscall(252, 1, 0), stat_prio("self"), stat_prio(1)))
section("hostname", "%s / %s" % (os.uname().nodename, read("/proc/sys/kernel/domainname").strip()))
# Namespaces: their inode numbers differ between sandboxes; whether the
# command shares each one with the keeper does not.
ns = []
for n in sorted(os.listdir("/proc/self/ns")):
    try:
        ns.append("%s %s" % (n, "as keeper" if os.readlink("/proc/self/ns/" + n) == os.readlink("/proc/1/ns/" + n)
                             else "NOT as keeper"))
    except OSError as e:
        ns.append("%s <%s>" % (n, errno.errorcode.get(e.errno)))
section("namespaces", "\n".join(ns))


def mountinfo():
    # Mount ids are the kernel's counters: each becomes its rank in the
    # table (the tree's shape is kept); peer group numbers likewise; an
    # anonymous device (major 0: tmpfs, proc, overlay) gets a number per
    # sandbox.
    lines = [l.split(" ") for l in read("/proc/self/mountinfo").splitlines()]
    rank = {f[0]: str(i) for i, f in enumerate(lines)}
    peers = {}
    rows = []
    for f in lines:
        f[0] = "m" + rank[f[0]]
        f[1] = "m" + rank[f[1]] if f[1] in rank else "outside"
        if f[2].startswith("0:"):
            f[2] = "0:anon"
        for i in range(6, len(f)):
            if f[i] == "-":
                break
            m = re.match(r"(shared|master|propagate_from):(\d+)", f[i])
            if m:
                f[i] = "%s:p%s" % (m.group(1), peers.setdefault(m.group(2), str(len(peers))))
        rows.append(" ".join(f))
    return "\n".join(rows)


section("mountinfo", mountinfo())
section("env", "\n".join(sorted("%s=%s" % kv for kv in os.environ.items())))
section("cwd", os.getcwd())
fds = []
for fd in sorted(os.listdir("/proc/self/fd"), key=int):
    try:
        fds.append("%s %s" % (fd, re.sub(r"\[\d+\]", "[N]", os.readlink("/proc/self/fd/" + fd))))
    except OSError:
        pass
section("fds (this listing's own included)", "\n".join(fds))
cg = []
for f in ("memory.max", "memory.swap.max", "memory.high", "pids.max", "cpu.max", "cpu.weight", "cgroup.procs",
          "memory/memory.limit_in_bytes", "memory/memory.memsw.limit_in_bytes", "pids/pids.max",
          "cpu/cpu.cfs_quota_us", "cpu/cpu.cfs_period_us", "cpu/cpu.shares", "cpuset/cpuset.cpus"):
    cg.append("%s: %s" % (f, read("/sys/fs/cgroup/" + f).strip()))
section("cgroup limits", "\n".join(cg))
# Traffic counters are what happened on the link, not its setup.
section("net dev", "\n".join(l.split(":")[0].strip() for l in read("/proc/net/dev").splitlines()[2:]))
section("net route", read("/proc/net/route"))


# The kernel's own link-local address of the sandbox's interface (pasta's
# tap) is made from the tap's MAC, a random one: two sandboxes, fresh or
# pooled, never have the same.  It is tentative until its duplicate
# address detection ends (about a second after the interface is up), and
# only then gets its local route.  So: the address as "<link-local>", its
# flags and its /128 route left out; the rest sorted (the kernel lists
# addresses in hash order).
def link_local(text, route):
    lines = []
    for l in text.splitlines():
        f = l.split()
        if f and f[0].startswith("fe80") and f[0] != "fe80" + "0" * 28:
            if route:
                continue
            l = "<link-local> %s" % f[-1]
        elif route and len(f) == 10:
            # A route's reference and use counts are what used it, not
            # its setup.
            l = " ".join(f[:6] + ["<refcnt>", "<use>"] + f[8:])
        lines.append(l)
    return "\n".join(sorted(lines))


section("net if_inet6", link_local(read("/proc/net/if_inet6"), False))
section("net ipv6_route", link_local(read("/proc/net/ipv6_route"), True))
for f in ("/etc/resolv.conf", "/etc/hosts", "/etc/hostname", "/etc/passwd", "/etc/group"):
    section(f, read(f))


def attempt(what, fn):
    try:
        r = fn()
        return "%s: ok%s" % (what, "" if r is None else " " + str(r))
    except OSError as e:
        return "%s: %s" % (what, errno.errorcode.get(e.errno, str(e.errno)))


def write_file(path):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(fd)
    os.unlink(path)


home = os.environ.get("HOME", "/root")
checks = [attempt("list " + d, lambda d=d: sorted(os.listdir(d)))
          for d in (home, home + "/.ssh", "/root/.ssh", "/tmp", "/dev", "/dev/shm", "/run", "/var/tmp", WS)]
checks += [attempt("read " + f, lambda f=f: len(open(f, "rb").read()))
           for f in ("/etc/shadow", home + "/.ssh/id_rsa", "/etc/ssl/private", "/proc/1/environ", "/proc/1/mem")]
checks += [attempt("write " + d, lambda d=d: write_file(d + "/.pool-probe"))
           for d in (WS, home, "/tmp", "/etc", "/usr", "/var/tmp", "/dev/shm", "/")]
for argv in (["sh", "-c", "exit 0"], ["bash", "-c", "exit 0"], ["true"], ["/usr/bin/env", "true"]):
    try:
        r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        checks.append("exec %s: exit %d" % (argv[0], r.returncode))
    except OSError as e:
        checks.append("exec %s: %s" % (argv[0], errno.errorcode.get(e.errno)))
libc = ctypes.CDLL(None, use_errno=True)
for name, call in (("unshare(user)", lambda: libc.unshare(0x10000000)),
                   ("unshare(mount)", lambda: libc.unshare(0x00020000)),
                   ("mount tmpfs /mnt", lambda: libc.mount(b"none", b"/mnt", b"tmpfs", 0, None)),
                   ("setuid(0)", lambda: libc.setuid(0)),
                   ("keyctl(join)", lambda: libc.syscall(250, 1, None)),
                   ("ptrace(traceme)", lambda: libc.ptrace(0, 0, None, None)),
                   ("personality(query)", lambda: libc.personality(0xffffffff))):
    ctypes.set_errno(0)
    rc = call()
    checks.append("%s: %d %s" % (name, rc, errno.errorcode.get(ctypes.get_errno(), "") if rc == -1 else ""))
section("checks", "\n".join(checks))
sys.stdout.write("\n".join(out) + "\n")
