# haven run without namespaces (`--isolation landlock`, what auto falls
# back to where namespaces cannot be made): on this host, as root and as
# uid 65534, the default policy's rules held by Landlock, seccomp,
# no_new_privs and dropped capabilities, every process the command leaves
# killed, its time limit, its exit statuses, and the rules that cannot be
# held refused by name.  Each refusal is checked against the same probe
# outside the sandbox, where it succeeds.

# direct_project USER [POLICY LINES]: a project $P of USER's (root or
# nobody: uid 65534) the default policy runs in without namespaces (no
# .env, no .git: those are refused or protected), a fake home $P.home
# with a key in ~/.ssh, and the policy $P.pol/p.yaml (the default, a
# scratch TMPDIR accepted, and POLICY LINES).
direct_project() {
  local owner=0
  [ "$1" = root ] || owner=65534
  shift
  make_project
  rm -rf "$P/.env" "$P/src/deep/.env" "$P/.git"
  mkdir -p "$P.home/.ssh"
  echo ssh-secret-key > "$P.home/.ssh/id_ed25519"
  printf 'name: h-direct\nextends: default\n%s\n' "${1:-best_effort: [private_tmp]}" > "$P.pol/p.yaml"
  chown -R $owner:$owner "$P" "$P.home"
  chmod 755 "$P.pol"
  HAVEN_COPY=$(world_readable_copy "$HAVEN")
}

# as_user USER CMD...: CMD in $P as root or as uid 65534, HOME the fake
# home, PATH the system's (not a version manager's shims in root's home).
as_user() {
  local user=$1
  shift
  if [ "$user" = root ]; then
    (cd "$P" && HOME=$P.home PATH=/usr/sbin:/usr/bin:/sbin:/bin timeout 30 "$@")
  else
    (cd "$P" && setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$P.home" XDG_RUNTIME_DIR= \
      PATH=/usr/sbin:/usr/bin:/sbin:/bin timeout 30 "$@")
  fi
}

# direct_in USER CMD...: haven run --isolation landlock --policy $P.pol/p.yaml
# -- CMD, output in $OUT, status in $RC.
direct_in() {
  local user=$1
  shift
  OUT=$(as_user "$user" "$HAVEN_COPY" run --isolation landlock --policy "$P.pol/p.yaml" -- "$@" 2>&1 </dev/null)
  RC=$?
}

test_direct_files() {
  need_haven
  local u
  # A file of the host's /tmp anyone may read: the namespaced sandbox's
  # /tmp is empty, and so is this one's (private_tmp hides the real one).
  TMPF=$(mktemp /tmp/h-direct-tmp.XXXXXX)
  defer "rm -f $TMPF"
  echo host-tmp-secret > "$TMPF"
  chmod 644 "$TMPF"
  for u in root nobody; do
    direct_project "$u"
    direct_in "$u" sh -c 'echo hi > out.txt && cat out.txt; cat ~/.ssh/id_ed25519 2>&1; cat /etc/shadow 2>&1;
      touch /etc/h-direct-test 2>&1; touch /tmp/h-direct-test 2>&1; cat "$1" 2>&1; touch "$TMPDIR/t" && echo tmpdir-rw:$TMPDIR' sh "$TMPF"
    assert_eq 0 "$RC" "$u: exit status ($OUT)"
    assert_contains "$OUT" "hi" "$u: project writable"
    assert_eq hi "$(cat "$P/out.txt")" "$u: the write reached the project"
    assert_not_contains "$OUT" "ssh-secret-key" "$u: ~/.ssh hidden"
    assert_contains "$OUT" "id_ed25519: Permission denied" "$u: ~/.ssh refused"
    assert_contains "$OUT" "/etc/shadow: Permission denied" "$u: /etc/shadow refused"
    assert_contains "$OUT" "/etc/h-direct-test': Permission denied" "$u: /etc read-only"
    assert_contains "$OUT" "/tmp/h-direct-test': Permission denied" "$u: the real /tmp not writable"
    assert_contains "$OUT" "$TMPF: Permission denied" "$u: the real /tmp's files hidden"
    assert_not_contains "$OUT" "host-tmp-secret" "$u: the real /tmp's files hidden"
    assert_contains "$OUT" "tmpdir-rw:/" "$u: the scratch TMPDIR writable"
    assert_contains "$OUT" "haven: note: without namespaces, filesystem.tmpfs /tmp" "$u: the weaker rule said"
    [ ! -e /etc/h-direct-test ] && [ ! -e /tmp/h-direct-test ] || fail "$u: wrote outside the project"
    # The same reads outside the sandbox succeed: the refusals are the sandbox's.
    [ "$(as_user "$u" cat "$P.home/.ssh/id_ed25519")" = ssh-secret-key ] || fail "$u: the key is not readable outside"
    local tmp=${OUT##*tmpdir-rw:}
    [ ! -e "$tmp" ] || fail "$u: the scratch TMPDIR $tmp was left behind"
  done
}

# What the probe tries, one word each: "name:ok" or "name:ERRNO".
DIRECT_NET_PROBE='
import socket, sys
port, abstract, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def tcp():
    socket.create_connection(("127.0.0.1", port), timeout=3).close()
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"x", ("127.0.0.1", port))
def unix_abstract():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect("\0" + abstract)
def unix_path():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
out = []
for f in (tcp, udp, unix_abstract, unix_path):
    try:
        f()
        out.append(f.__name__ + ":ok")
    except OSError as e:
        out.append("%s:%s" % (f.__name__, e.errno))
print(" ".join(out))
'

# Listeners outside the sandbox: TCP on 127.0.0.1 (port in $P.pol/port),
# an abstract Unix socket, a pathname one that anyone may connect to.
DIRECT_NET_LISTEN='
import os, socket, sys, time
t = socket.socket(); t.bind(("127.0.0.1", 0)); t.listen(8)
a = socket.socket(socket.AF_UNIX); a.bind("\0" + sys.argv[2]); a.listen(8)
p = socket.socket(socket.AF_UNIX); p.bind(sys.argv[3]); os.chmod(sys.argv[3], 0o777); p.listen(8)
open(sys.argv[1] + ".tmp", "w").write(str(t.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(60)
'

test_direct_network_none() {
  need_haven
  local u port abstract=h-direct-$$-$RANDOM
  for u in root nobody; do
    direct_project "$u"
    echo "$DIRECT_NET_PROBE" > "$P.pol/probe.py"
    rm -f "$P.pol/port" "$P.pol/sock"
    /usr/bin/python3 -c "$DIRECT_NET_LISTEN" "$P.pol/port" "$abstract-$u" "$P.pol/sock" &
    local lpid=$!
    defer "kill $lpid 2>/dev/null"
    for _ in $(seq 50); do [ -e "$P.pol/port" ] && break; sleep 0.1; done
    port=$(cat "$P.pol/port")
    local outside
    outside=$(as_user "$u" /usr/bin/python3 "$P.pol/probe.py" "$port" "$abstract-$u" "$P.pol/sock" 2>&1)
    assert_eq "tcp:ok udp:ok unix_abstract:ok unix_path:ok" "$outside" "$u: the probe outside the sandbox"
    # Given as -c: the host's /tmp, where the test's files are, is hidden.
    direct_in "$u" /usr/bin/python3 -c "$DIRECT_NET_PROBE" "$port" "$abstract-$u" "$P.pol/sock"
    assert_eq 0 "$RC" "$u: exit status ($OUT)"
    # TCP: Landlock refuses the connect (EACCES); UDP and Unix sockets:
    # seccomp refuses socket() (EACCES); the abstract one would be
    # refused by Landlock's scope (EPERM) were the family allowed.
    assert_contains "$OUT" "tcp:13 udp:13 unix_abstract:13 unix_path:13" "$u: network none ($OUT)"
    kill "$lpid" 2>/dev/null
    wait "$lpid" 2>/dev/null || true
  done
}

test_direct_exec_rules() {
  need_haven
  local u
  for u in root nobody; do
    direct_project "$u" "$(printf 'best_effort: [private_tmp]\nprocess: {block_shell: true}')"
    direct_in "$u" /usr/bin/python3 -c 'import subprocess
try:
    subprocess.run(["/bin/sh", "-c", "echo shell-ran"])
except PermissionError:
    print("shell-refused")
print("ls:%d" % subprocess.run(["ls", "-d", "/"], capture_output=True).returncode)'
    assert_eq 0 "$RC" "$u: exit status ($OUT)"
    assert_contains "$OUT" "shell-refused" "$u: block_shell"
    assert_not_contains "$OUT" "shell-ran" "$u: block_shell"
    assert_contains "$OUT" "ls:0" "$u: ls still runs"
    direct_in "$u" sh -c 'echo shell-ran'
    assert_eq 126 "$RC" "$u: a shell as the command ($OUT)"
    direct_project "$u" "$(printf 'best_effort: [private_tmp]\nprocess: {allow_exec: [python3]}')"
    direct_in "$u" /usr/bin/python3 -c 'import subprocess
try:
    subprocess.run(["ls", "/"], capture_output=True); print("ls-ran")
except PermissionError:
    print("ls-refused")'
    assert_contains "$OUT" "ls-refused" "$u: allow_exec ($OUT)"
    direct_in "$u" ls /
    assert_eq 126 "$RC" "$u: a program not allowed as the command ($OUT)"
    # The program copied into an executable memory file: outside
    # Landlock's view, so such files are refused under exec rules.
    direct_in "$u" /usr/bin/python3 -c 'import os
try:
    fd = os.memfd_create("x", 0)
    os.write(fd, open("/usr/bin/ls", "rb").read())
    os.execv("/proc/self/fd/%d" % fd, ["ls", "-d", "/memfd-ls-ran"])
except OSError as e:
    print("memfd-refused", e.errno)'
    assert_contains "$OUT" "memfd-refused" "$u: an executable memory file ($OUT)"
    assert_not_contains "$OUT" "memfd-ls-ran" "$u: a program from a memory file"
  done
}

test_direct_seccomp_profile() {
  need_haven
  local u
  for u in root nobody; do
    direct_project "$u"
    # Outside, both work for this user (a user namespace; a child traced).
    as_user "$u" unshare -U true || fail "$u: unshare -U fails outside the sandbox"
    direct_in "$u" unshare -U true
    assert_eq 1 "$RC" "$u: unshare refused ($OUT)"
    assert_contains "$OUT" "Operation not permitted" "$u: unshare refused with EPERM"
    direct_in "$u" /usr/bin/python3 -c 'import ctypes; libc = ctypes.CDLL(None, use_errno=True)
print("ptrace", libc.ptrace(0, 0, 0, 0), ctypes.get_errno())
print("io_uring", libc.syscall(425, 1, 0), ctypes.get_errno())'
    assert_contains "$OUT" "ptrace -1 1" "$u: ptrace refused ($OUT)"
    assert_contains "$OUT" "io_uring -1 1" "$u: io_uring refused ($OUT)"
  done
}

# Capability sets read with capget and prctl (the plan grants no process's
# directory in /proc).
DIRECT_CAPS_PROBE='
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
class Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]
class Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]
h = Header(0x20080522, 0)
d = (Data * 2)()
assert libc.capget(ctypes.byref(h), d) == 0
for f in ("effective", "permitted", "inheritable"):
    print(f, getattr(d[0], f) | getattr(d[1], f) << 32)
print("bounding", sum(libc.prctl(23, c, 0, 0, 0) == 1 for c in range(64)))
print("ambient", sum(libc.prctl(47, 1, c, 0, 0) == 1 for c in range(64)))
print("no_new_privs", libc.prctl(39, 0, 0, 0, 0))
'

test_direct_capabilities_dropped() {
  need_haven
  direct_project root
  local outside
  outside=$(as_user root /usr/bin/python3 -c "$DIRECT_CAPS_PROBE")
  assert_not_contains "$outside" "effective 0" "root has capabilities outside: something to drop"
  direct_in root /usr/bin/python3 -c "$DIRECT_CAPS_PROBE"
  assert_eq 0 "$RC" "exit status ($OUT)"
  assert_contains "$OUT" "effective 0
permitted 0
inheritable 0
bounding 0
ambient 0
no_new_privs 1"
  # And as it shows: root cannot write another user's file in the project.
  echo theirs > "$P/theirs"
  chown 65534:65534 "$P/theirs"
  chmod 644 "$P/theirs"
  direct_in root sh -c 'echo mine > theirs'
  assert_eq 2 "$RC" "root writing another user's file ($OUT)"
  assert_eq theirs "$(cat "$P/theirs")"
}

test_direct_left_processes_killed() {
  need_haven
  local u mark
  for u in root nobody; do
    direct_project "$u"
    mark=4242.$$$RANDOM
    direct_in "$u" sh -c "setsid sleep $mark > /dev/null 2>&1 < /dev/null & (sleep ${mark}9 &) ; echo started"
    assert_eq 0 "$RC" "$u: exit status ($OUT)"
    assert_contains "$OUT" started
    local left
    left=$(pgrep -f "sleep $mark")
    if [ -n "$left" ]; then
      kill -KILL $left
      fail "$u: a process the command left outlived the run"
    fi
  done
}

# haven killed with SIGKILL mid-run: its reaper (in its own process
# group) kills the command and what it left, then does what haven would
# have done after the run (the project's check, the trail's end).
test_direct_haven_killed() {
  need_haven
  local u mark pid left
  for u in root nobody; do
    direct_project "$u" "$(printf 'best_effort: [private_tmp]\naudit: {log: ~/trail.jsonl}')"
    mark=4244.$$$RANDOM
    local cmd=("$HAVEN_COPY" run --isolation landlock --policy "$P.pol/p.yaml" -- sh -c
      "echo tmp:\$TMPDIR; setsid sleep $mark > /dev/null 2>&1 < /dev/null & sleep ${mark}9")
    if [ "$u" = root ]; then
      (cd "$P" && exec env HOME="$P.home" PATH=/usr/sbin:/usr/bin:/sbin:/bin "${cmd[@]}") > "$P.out" 2>&1 < /dev/null &
    else
      (cd "$P" && exec setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$P.home" XDG_RUNTIME_DIR= \
        PATH=/usr/sbin:/usr/bin:/sbin:/bin "${cmd[@]}") > "$P.out" 2>&1 < /dev/null &
    fi
    pid=$!
    for _ in $(seq 100); do
      pgrep -f "sleep $mark\$" > /dev/null && pgrep -f "sleep ${mark}9" > /dev/null && break
      sleep 0.1
    done
    pgrep -f "sleep $mark\$" > /dev/null || fail "$u: the command did not start: $(cat "$P.out")"
    kill -KILL "$pid"
    wait "$pid" 2> /dev/null
    for _ in $(seq 50); do
      pgrep -f "sleep $mark" > /dev/null || break
      sleep 0.1
    done
    left=$(pgrep -f "sleep $mark")
    if [ -n "$left" ]; then
      kill -KILL $left
      fail "$u: processes of the command outlived haven"
    fi
    for _ in $(seq 50); do
      jq -se 'map(select(.event == "exit")) | length == 1' "$P.home/trail.jsonl" > /dev/null 2>&1 && break
      sleep 0.1
    done
    jq -se 'map(select(.event == "exit")) | length == 1 and .[0].status == 137' "$P.home/trail.jsonl" > /dev/null \
      || fail "$u: no exit record with status 137: $(cat "$P.home/trail.jsonl")"
    assert_contains "$(cat "$P.out")" "haven ended before the run did" "$u: the check after haven's end"
    local tmp
    tmp=$(sed -n 's/^tmp://p' "$P.out")
    [ -n "$tmp" ] && [ ! -e "$tmp" ] || fail "$u: the scratch TMPDIR ($tmp) was left behind: $(cat "$P.out")"
  done
}

test_direct_timeout_and_exit_statuses() {
  need_haven
  local u
  for u in root nobody; do
    direct_project "$u" "$(printf 'best_effort: [private_tmp]\nresources: {timeout: 2s}')"
    direct_in "$u" sh -c 'exit 7'
    assert_eq 7 "$RC" "$u: the command's status ($OUT)"
    direct_in "$u" sh -c 'kill -TERM $$'
    assert_eq 143 "$RC" "$u: killed by a signal ($OUT)"
    direct_in "$u" haven-no-such-command
    assert_eq 127 "$RC" "$u: not found ($OUT)"
    echo 'echo x' > "$P/not-executable"
    chmod 644 "$P/not-executable"
    direct_in "$u" ./not-executable
    assert_eq 126 "$RC" "$u: not executable ($OUT)"
    local start=$SECONDS
    direct_in "$u" sh -c 'sleep 20'
    assert_eq 124 "$RC" "$u: past the time limit ($OUT)"
    assert_contains "$OUT" "ran past its time limit"
    [ $((SECONDS - start)) -lt 10 ] || fail "$u: the time limit was not held"
  done
}

test_direct_refusals_by_name() {
  need_haven
  direct_project root
  # The default policy as it is: /tmp needs a mount namespace.
  printf 'name: h-direct\nextends: default\n' > "$P.pol/p.yaml"
  direct_in root true
  assert_eq 125 "$RC" "refused ($OUT)"
  assert_contains "$OUT" "filesystem.tmpfs /tmp"
  assert_contains "$OUT" "haven doctor"
  # A secret inside the project: no weaker form.
  direct_project nobody
  echo SECRET=1 > "$P/src/.env"
  direct_in nobody sh -c 'echo started'
  assert_eq 125 "$RC" "a project with .env ($OUT)"
  assert_contains "$OUT" "src/.env"
  assert_not_contains "$OUT" "started"
}

test_direct_protect_after_run() {
  need_haven
  direct_project nobody
  mkdir -p "$P/.git/hooks"
  echo "[core]" > "$P/.git/config"
  chown -R 65534:65534 "$P"
  direct_in nobody sh -c 'echo started'
  assert_eq 125 "$RC" "protect without protect_after_run ($OUT)"
  assert_contains "$OUT" ".git/hooks"
  assert_not_contains "$OUT" "started"
  printf 'name: h-direct\nextends: default\nbest_effort: [private_tmp, protect_after_run]\n' > "$P.pol/p.yaml"
  direct_in nobody sh -c 'printf "#!/bin/sh\ntouch /tmp/pwned\n" > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit;
    (sleep 1; echo late > .git/hooks/post-commit) & echo started'
  assert_eq 0 "$RC" "protect_after_run ($OUT)"
  assert_contains "$OUT" "haven: quarantined .git/hooks/pre-commit"
  [ ! -e "$P/.git/hooks/pre-commit" ] || fail "the hook stayed in the project"
  local q
  q=$(find "$P/.haven-quarantine" -name pre-commit -type f 2>/dev/null)
  [ -n "$q" ] || fail "the hook is not in .haven-quarantine"
  sleep 1.5
  [ ! -e "$P/.git/hooks/post-commit" ] || fail "a process left behind wrote a hook after the guard"
}

# The trail's start record says the run had no namespaces and which rules
# held only in their weaker form; processes killed at the end are counted.
test_direct_trail() {
  need_haven
  direct_project nobody "$(printf 'best_effort: [private_tmp]\naudit: {log: ~/trail.jsonl}')"
  direct_in nobody sh -c '(setsid sleep 4243.$$ &); exit 3'
  assert_eq 3 "$RC" "exit status ($OUT)"
  local log=$P.home/trail.jsonl
  jq -se 'map(select(.event == "start")) | length == 1 and .[0].isolation == "landlock"
      and (.[0].weaker | map(select(startswith("filesystem.tmpfs /tmp:"))) | length == 1)' "$log" >/dev/null \
    || fail "no start record with isolation landlock and the weaker /tmp: $(cat "$log")"
  jq -se 'map(select(.event == "processes-killed" and .count == 1)) | length == 1' "$log" >/dev/null \
    || fail "no record of the process killed: $(cat "$log")"
  jq -se 'map(select(.event == "exit")) | length == 1 and .[0].status == 3' "$log" >/dev/null \
    || fail "no exit record with status 3: $(cat "$log")"
}

# An allowlist under best_effort network_ports: TCP connect only to the
# allowlist's ports (at any address), UDP open for DNS.
test_direct_network_ports() {
  need_haven
  local u
  for u in root nobody; do
    direct_project "$u" "$(printf 'best_effort: [private_tmp, network_ports]\nnetwork: {mode: allowlist, allow: ["example.com:18443"]}')"
    rm -f "$P.pol/ready"
    python3 -c '
import os, socket, sys, time
ls = []
for p in (18443, 18444):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", p)); s.listen(8); ls.append(s)
open(sys.argv[1], "w").close()
time.sleep(30)' "$P.pol/ready" &
    local lpid=$!
    defer "kill $lpid 2>/dev/null"
    for _ in $(seq 50); do [ -e "$P.pol/ready" ] && break; sleep 0.1; done
    direct_in "$u" /usr/bin/python3 -c '
import socket
for p in (18443, 18444):
    try:
        socket.create_connection(("127.0.0.1", p), timeout=3).close(); print(p, "ok")
    except OSError as e:
        print(p, e.errno)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"x", ("127.0.0.1", 53)); print("udp ok")'
    assert_eq 0 "$RC" "$u: exit status ($OUT)"
    assert_contains "$OUT" "18443 ok" "$u: the allowlist's port"
    assert_contains "$OUT" "18444 13" "$u: another port refused"
    assert_contains "$OUT" "udp ok" "$u: UDP for DNS"
    assert_contains "$OUT" "best_effort network_ports" "$u: the weaker rule said"
    kill "$lpid" 2>/dev/null
    wait "$lpid" 2>/dev/null || true
  done
}

# --isolation auto (the default): namespaces where they can be made (the
# command's pid is a new pid namespace's), else Landlock after one note
# naming the step the host refused (here: root without CAP_SYS_ADMIN).
test_direct_auto_fallback() {
  need_haven
  command -v capsh > /dev/null || skip "capsh is not installed"
  direct_project root
  OUT=$(cd "$P" && HOME=$P.home PATH=/usr/sbin:/usr/bin:/sbin:/bin timeout 30 "$HAVEN_COPY" run \
    --policy "$P.pol/p.yaml" -- sh -c 'echo pid:$$' 2>&1 < /dev/null)
  assert_eq 0 $? "namespaces ($OUT)"
  assert_not_contains "$OUT" "namespaces cannot be made"
  assert_contains "$OUT" "pid:" "ran"
  [ "$(echo "$OUT" | sed -n 's/^pid://p')" -le 2 ] || fail "not in a new pid namespace: $OUT"
  OUT=$(cd "$P" && HOME=$P.home PATH=/usr/sbin:/usr/bin:/sbin:/bin timeout 30 capsh --drop=cap_sys_admin -- -c \
    '"$0" run --policy "$1" -- sh -c "echo pid:\$\$"' "$HAVEN_COPY" "$P.pol/p.yaml" 2>&1 < /dev/null)
  assert_eq 0 $? "without CAP_SYS_ADMIN ($OUT)"
  assert_contains "$OUT" "haven: note: namespaces cannot be made here (unshare(mount, pid, network, ipc, uts, cgroup namespaces): Operation not permitted): Landlock and seccomp only; haven doctor says what that enforces"
  [ "$(echo "$OUT" | sed -n 's/^pid://p')" -gt 2 ] || fail "in a new pid namespace: $OUT"
  OUT=$(cd "$P" && HOME=$P.home HAVEN_ISOLATION=namespaces timeout 30 capsh --drop=cap_sys_admin -- -c \
    '"$0" run --policy "$1" -- true' "$HAVEN_COPY" "$P.pol/p.yaml" 2>&1 < /dev/null)
  assert_eq 125 $? "HAVEN_ISOLATION=namespaces without CAP_SYS_ADMIN ($OUT)"
  assert_not_contains "$OUT" "haven: note: namespaces cannot be made" "no fallback"
  # The runtime's refusal, then the step the host refuses and what to do.
  assert_contains "$OUT" "clone container init: operation not permitted"
  assert_contains "$OUT" "haven: namespaces cannot be made here (unshare(mount, pid, network, ipc, uts, cgroup namespaces): Operation not permitted): haven run --isolation landlock runs with Landlock and seccomp only instead; haven doctor says what this host offers"
}

# On a terminal (script(1)'s): the command gets a terminal of its own,
# haven's pty, as its controlling one (/dev/tty opens), not the user's.
test_direct_terminal() {
  need_haven
  command -v script > /dev/null || skip "script is not installed"
  local u
  for u in root nobody; do
    direct_project "$u"
    OUT=$(printf 'typed\n' | as_user "$u" script -qec "$HAVEN_COPY run --isolation landlock --policy $P.pol/p.yaml \
      -- sh -c 'echo outer:\$1; echo inner:\$(tty); read x; echo got:\$x; echo ctty > /dev/tty; exit 4' sh \$(tty)" \
      /dev/null 2>&1)
    assert_eq 4 $? "$u: exit status ($OUT)"
    local outer inner
    outer=$(echo "$OUT" | tr -d '\r' | sed -n 's/^outer://p')
    inner=$(echo "$OUT" | tr -d '\r' | sed -n 's/^inner://p')
    [ -n "$inner" ] && [ "$inner" != "not a tty" ] && [ "$inner" != "$outer" ] \
      || fail "$u: the command's terminal ($inner) is not one of its own (the user's: $outer): $OUT"
    assert_contains "$OUT" "got:typed" "$u: input reaches the command"
    assert_contains "$OUT" "ctty" "$u: /dev/tty is the command's terminal"
  done
}
