"""The driver of tests/bench/service-bench.sh (read its header): times
haven serve's sandboxes through the Python SDK against `haven run` and
bwrap in one run, measures a pooled sandbox's idle memory, and runs 1,000
code blocks in one sandbox checking that nothing of it is left.

    python3 service_bench.py --haven HAVEN --clock CLOCK_NOW --dir DIR [--n 300] [--blocks 1000]

Prints a table; exits 1 when something did not work (a claim that did not
come from the pool is counted and said, not hidden)."""

import argparse
import glob
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("--haven", required=True)
ap.add_argument("--clock", required=True, help="the clock_now binary, at a path the sandbox sees")
ap.add_argument("--dir", required=True, help="a scratch directory (the service's socket and log)")
ap.add_argument("--n", type=int, default=300)
ap.add_argument("--n-fresh", type=int, default=50)
ap.add_argument("--blocks", type=int, default=1000)
ap.add_argument("--pool-size", type=int, default=2)
args = ap.parse_args()

from haven import Sandbox, run_code_blocks  # noqa: E402  (PYTHONPATH from the script)

SOCK = os.path.join(args.dir, "run", "haven.sock")
LOG = os.path.join(args.dir, "serve.log")
problems = []


def pct(values, p):
    s = sorted(values)
    return s[max(0, min(len(s) - 1, -(-len(s) * p // 100) - 1))]


def ms(ns):
    return "%.2f ms" % (ns / 1e6)


def made_for_pool(policy):
    with open(LOG, errors="replace") as f:
        return sum(1 for l in f if "(%s) made for the pool" % policy in l)


def wait_made(policy, n, limit=60.0):
    end = time.monotonic() + limit
    while made_for_pool(policy) < n:
        if time.monotonic() > end:
            raise SystemExit("service-bench: the pool of %s made %d of %d in %.0f s: %s"
                             % (policy, made_for_pool(policy), n, limit, open(LOG).read()[-600:]))
        time.sleep(0.002)


# --- the service, its own: a private socket, verbose (its log says what
# the pool made), pool entries never aged out during the run.
svc = subprocess.Popen([args.haven, "serve", "--socket", SOCK, "--pool-size", str(args.pool_size),
                        "--pool-max-age", "3600", "--verbose"], stdout=subprocess.DEVNULL,
                       stderr=open(LOG, "w"), start_new_session=True)
for _ in range(200):
    if os.path.exists(SOCK):
        break
    time.sleep(0.05)
else:
    raise SystemExit("service-bench: haven serve did not start: " + open(LOG).read()[-600:])


def children_of(pid):
    out = []
    for d in glob.glob("/proc/[0-9]*/stat"):
        try:
            st = open(d).read()
        except OSError:
            continue
        if int(st.rsplit(")", 1)[1].split()[1]) == pid:
            out.append(int(d.split("/")[2]))
    return out


def state_pid(sid, name="state.json"):
    try:
        if name == "state.json":
            return int(json.load(open("/run/haven/%s/state.json" % sid))["pid"])
        return int(open("/run/haven/%s/%s" % (sid, name)).read().split()[0])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def rollup(pid):
    kb = {}
    try:
        for l in open("/proc/%d/smaps_rollup" % pid):
            m = re.match(r"(\w+):\s+(\d+) kB", l)
            if m:
                kb[m.group(1)] = int(m.group(2))
    except OSError:
        return None
    return kb


def sandbox_processes(sid):
    """The keeper (init), the monitor, and every process in the keeper's pid namespace."""
    init = state_pid(sid)
    if init is None:
        return []
    pids = {init}
    mon = state_pid(sid, "monitor.pid")
    if mon:
        pids.add(mon)
    try:
        ns = os.readlink("/proc/%d/ns/pid" % init)
    except OSError:
        return []
    for d in glob.glob("/proc/[0-9]*"):
        try:
            if os.readlink(d + "/ns/pid") == ns:
                pids.add(int(d[6:]))
        except OSError:
            pass
    # pasta, when the policy has one: the service's child that names the keeper's pid.
    for c in children_of(svc.pid):
        try:
            cmd = open("/proc/%d/cmdline" % c, "rb").read().split(b"\0")
        except OSError:
            continue
        if cmd and os.path.basename(cmd[0]) == b"pasta" and str(init).encode() in cmd:
            pids.add(c)
    return sorted(pids)


def listed_ids():
    from haven.client import Client
    with Client(SOCK, autostart=False) as c:
        return {s["id"] for s in c.list_sandboxes()}


def pool_entries():
    """Sandboxes of this service (their keeper is its child) that are not the user's: the pool."""
    mine = set(children_of(svc.pid))
    user = listed_ids()
    out = []
    for d in glob.glob("/run/haven/hvs-*"):
        sid = os.path.basename(d)
        if sid not in user and state_pid(sid) in mine:
            out.append(sid)
    return out


def leftovers(sid, keeper, ws):
    left = []
    if keeper and os.path.exists("/proc/%d" % keeper):
        left.append("keeper %d" % keeper)
    for p in glob.glob("/proc/[0-9]*/cgroup"):
        try:
            if sid in open(p).read():
                left.append("process in cgroup: " + p)
        except OSError:
            pass
    for p in ("/proc/self/mountinfo", "/proc/%d/mountinfo" % svc.pid):
        if sid in open(p).read():
            left.append("mount in " + p)
    left += ["cgroup " + c for c in glob.glob("/sys/fs/cgroup/*/*%s*" % sid) + glob.glob("/sys/fs/cgroup/*%s*" % sid)]
    for p in ("/run/haven/" + sid, "/run/haven-sandbox-" + sid, ws):
        if p and os.path.lexists(p):
            left.append(p)
    state = os.path.join(os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state"), "haven/projects")
    left += glob.glob(os.path.join(state, sid + "-*"))
    return left


rows = []
try:
    # The clock is the caller's inside (no time namespace, or one with no offset).
    with Sandbox(policy="offline", socket=SOCK, autostart=False) as sb:
        r = sb.run(["sh", "-c", "readlink /proc/self/ns/time; cat /proc/self/timens_offsets 2>/dev/null"])
        ns_in = r.stdout.split("\n")[0]
        offsets = [l.split() for l in r.stdout.split("\n")[1:] if l.strip()]
        same_clock = ns_in == os.readlink("/proc/self/ns/time") or all(o[1:] == ["0", "0"] for o in offsets)
        if not same_clock:
            raise SystemExit("service-bench: the sandbox's CLOCK_MONOTONIC is offset (%s)" % r.stdout)
        r = sb.run([args.clock])
        if r.exit_code != 0:
            raise SystemExit("service-bench: %s cannot run in the sandbox: %s" % (args.clock, r.stderr))

    # (a) Sandbox() -> the first command's first instruction, from a warm
    # pool.  Paced: each claim waits until the refill of the one before is
    # made, so every claim finds the pool full.
    wait_made("offline", args.pool_size)
    lat, made, total, notpooled = [], [], [], 0
    for i in range(args.n):
        wait_made("offline", args.pool_size + i)
        t0 = time.monotonic_ns()
        sb = Sandbox(policy="offline", socket=SOCK, autostart=False)
        t1 = time.monotonic_ns()
        r = sb.run([args.clock])
        t2 = time.monotonic_ns()
        notpooled += not sb.pooled
        sb.close()
        lat.append(int(r.stdout) - t0)
        made.append(t1 - t0)
        total.append(t2 - t0)
    if notpooled:
        problems.append("%d of %d claims were not from the pool" % (notpooled, args.n))
    rows.append(("(a) SDK Sandbox() -> first instruction, pooled (offline, paced)", lat, "<= 2 ms / <= 10 ms"))
    rows.append(("    of which Sandbox() (connect, create: the claim)", made, ""))
    rows.append(("    same, to run()'s return", total, ""))

    # The same made fresh (pool=False), for scale.
    fresh = []
    for i in range(args.n_fresh):
        t0 = time.monotonic_ns()
        with Sandbox(policy="offline", socket=SOCK, autostart=False, pool=False) as sb:
            fresh.append(int(sb.run([args.clock]).stdout) - t0)
    rows.append(("    SDK Sandbox(pool=False) -> first instruction", fresh, ""))

    # (b) and (c), in turn.
    proj = os.path.join(args.dir, "project")
    os.makedirs(proj, exist_ok=True)
    os.chdir(proj)  # haven run's project: an empty directory
    devnull = os.open(os.devnull, os.O_RDWR)
    cmds = {"haven": [args.haven, "run", "--policy", "offline", "--", "true"],
            "bwrap": ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all", "true"]}
    times = {k: [] for k in cmds}
    bwrap_path = subprocess.check_output(["sh", "-c", "command -v bwrap"]).decode().strip()
    cmds["bwrap"][0] = bwrap_path
    for i in range(args.n + 3):
        for k, argv in cmds.items():
            t0 = time.monotonic_ns()
            pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=[
                (os.POSIX_SPAWN_DUP2, devnull, 0), (os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)])
            _, st = os.waitpid(pid, 0)
            t1 = time.monotonic_ns()
            if st != 0:
                raise SystemExit("service-bench: %s failed (%d)" % (" ".join(argv), st))
            if i >= 3:
                times[k].append(t1 - t0)
    rows.append(("(b) haven run --policy offline -- true, wall", times["haven"], ""))
    rows.append(("(c) bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all true", times["bwrap"], ""))

    # (d) a pooled sandbox's idle memory: offline's pool is full now; then default's.
    mem, seen = [], set()
    for pol in ("offline", "default"):
        if pol != "offline":
            with Sandbox(policy=pol, socket=SOCK, autostart=False):
                pass
            wait_made(pol, args.pool_size)
        time.sleep(0.5)
        # Entries of the pool measured before are this service's too.
        entries = [e for e in pool_entries() if e not in seen]
        seen.update(entries)
        per = []
        for e in entries:
            procs = sandbox_processes(e)
            ru = [rollup(p) for p in procs]
            if procs and all(ru):
                per.append((e, procs, sum(x["Pss"] for x in ru),
                            sum(x.get("Private_Clean", 0) + x.get("Private_Dirty", 0) for x in ru)))
        mem.append((pol, per))

    # (e) 1,000 code blocks in a row through run_code_blocks, in one sandbox.
    answer = "\n".join("Block %d:\n```sh\necho block %d\n```\n" % (i, i) for i in range(args.blocks))
    t0 = time.monotonic_ns()
    sb = Sandbox(policy="offline", socket=SOCK, autostart=False)
    keeper = state_pid(sb.id)
    res = run_code_blocks(answer, sandbox=sb)
    sb.close()
    t1 = time.monotonic_ns()
    bad = [r for r in res if r.result is None or r.result.stdout != "block %d\n" % r.index]
    if len(res) != args.blocks or bad:
        problems.append("code blocks: %d results, %d wrong (first: %r)" % (len(res), len(bad), bad[:1]))
    left = leftovers(sb.id, keeper, sb.workspace)
    if left:
        problems.append("left after the %d blocks' sandbox %s: %s" % (args.blocks, sb.id, left))
finally:
    svc.send_signal(signal.SIGTERM)
    try:
        svc.wait(30)
    except subprocess.TimeoutExpired:
        svc.kill()
        svc.wait()

# --- the table
print("service-bench: %s, %d cpus, load %.2f; pool size %d, %d claims paced (each waits for the refill of "
      "the one before)" % (os.uname().release, os.cpu_count(), os.getloadavg()[0], args.pool_size, args.n))
print("%-70s %10s %10s %10s  %s" % ("", "median", "p99", "max", "target (median / p99)"))
for name, v, target in rows:
    print("%-70s %10s %10s %10s  %s" % (name + " (n=%d)" % len(v), ms(statistics.median(v)), ms(pct(v, 99)),
                                        ms(max(v)), target))
for pol, per in mem:
    if not per:
        problems.append("no pooled sandbox of %s found to measure" % pol)
        continue
    pss = [p[2] for p in per]
    uss = [p[3] for p in per]
    print("%-70s %10s %10s %10s  %s" % ("(d) idle pooled sandbox, %s: PSS (USS) of %d procs each, %d entries"
                                        % (pol, len(per[0][1]), len(per)),
                                        "%d KiB" % statistics.median(pss), "(%d KiB)" % statistics.median(uss), "",
                                        "<= 1024 KiB"))
print("%-70s %10s %10s %10s" % ("(e) %d code blocks via run_code_blocks, one sandbox: total / per block" % args.blocks,
                                ms(t1 - t0), ms((t1 - t0) / max(1, args.blocks)), ""))
print("    left after it: %s" % ("nothing (processes, mounts, cgroups, state, bundle, workspace, project state)"
                                 if not left else "; ".join(left)))
for p in problems:
    print("PROBLEM: " + p)
sys.exit(1 if problems else 0)
