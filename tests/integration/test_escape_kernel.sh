# Escapes through the kernel interfaces around haven run: system call
# arguments compared the way the kernel reads them, the user's terminal,
# set-user-ID files left in the project, and the ways around block_shell
# and allow_exec.

# tty_probe MODE CMD...: run `haven run -- CMD` as the foreground job of a
# fresh pseudo-terminal, the way a user's shell would.  MODE "stdout-only":
# stdin is /dev/null and stdout/stderr the terminal (haven makes no pty of
# its own); "both": stdin and stdout are the terminal (haven makes its pty).
# Prints what the command wrote, then "QUEUED=N": the bytes waiting in the
# terminal's input queue after haven exited, i.e. what the user's shell
# would read and run next.
tty_probe() {
  local mode=$1
  shift
  timeout 30 python3 - "$mode" "$HAVEN" "$@" <<'EOP'
import fcntl, os, pty, select, struct, sys, termios
mode, argv = sys.argv[1], sys.argv[2:]
master, slave = pty.openpty()
pid = os.fork()
if pid == 0:
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    if mode == "stdout-only":
        os.dup2(os.open("/dev/null", os.O_RDONLY), 0)
    else:
        os.dup2(slave, 0)
    os.dup2(slave, 1)
    os.dup2(slave, 2)
    os.execv(argv[0], [argv[0], "run", "--"] + argv[1:])
out = b""
done = False
while not done:
    r, _, _ = select.select([master], [], [], 0.2)
    if r:
        try:
            out += os.read(master, 4096)
        except OSError:
            pass
    done = os.waitpid(pid, os.WNOHANG)[0] == pid
# Whatever the command wrote after the last read.
while select.select([master], [], [], 0.2)[0]:
    try:
        chunk = os.read(master, 4096)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
queued = struct.unpack("i", fcntl.ioctl(slave, termios.FIONREAD, b"\0" * 4))[0]
sys.stdout.write(out.decode(errors="replace").replace("\r", ""))
print("QUEUED=%d" % queued)
EOP
}

# The attack: TIOCSTI with the request's high 32 bits set (the kernel
# reads an unsigned int), then the plain request and TIOCLINUX.
# (ctypes: Python's own fcntl.ioctl truncates the request to 32 bits.)
INJECT='import ctypes
libc = ctypes.CDLL(None, use_errno=True)
for name, req in (("high", 0x100005412), ("plain", 0x5412), ("linux", 0x10000541C), ("linux-plain", 0x541C)):
    rc = 0
    for c in b"touch pwned\n":
        rc = libc.ioctl(1, ctypes.c_ulong(req), ctypes.byref(ctypes.c_char(c)))
        if rc < 0:
            break
    print(name, "ok" if rc == 0 else "errno %d" % ctypes.get_errno())'

test_escape_tiocsti_high_bits_on_inherited_terminal() {
  need_haven
  make_project
  OUT=$(cd "$P" && tty_probe stdout-only python3 -c "$INJECT")
  assert_contains "$OUT" "high errno 1"
  assert_contains "$OUT" "plain errno 1"
  assert_contains "$OUT" "linux errno 1"
  assert_contains "$OUT" "linux-plain errno 1"
  # Nothing reached the input of the user's shell.
  assert_contains "$OUT" "QUEUED=0"
}

test_escape_tiocsti_high_bits_filtered() {
  need_haven
  make_project
  # With a terminal of its own (haven's pty), TIOCSTI is the kernel's to
  # allow: only the filter stands in the way.
  OUT=$(cd "$P" && tty_probe both python3 -c "$INJECT")
  assert_contains "$OUT" "high errno 1"
  assert_contains "$OUT" "plain errno 1"
  assert_contains "$OUT" "linux errno 1"
  assert_contains "$OUT" "QUEUED=0"
}

test_escape_no_controlling_terminal_without_pty() {
  need_haven
  make_project
  # stdout is the user's terminal, stdin is not: haven makes no pty, and
  # the sandbox must not get the user's terminal as its own.
  OUT=$(cd "$P" && tty_probe stdout-only python3 -c '
import os
try:
    os.open("/dev/tty", os.O_RDWR)
    print("tty opened")
except OSError as e:
    print("tty errno", e.errno)
print("sid-is-self", os.getsid(0) == os.getpid())')
  assert_contains "$OUT" "tty errno 6"
  assert_not_contains "$OUT" "tty opened"
}

# The attack of item 4: a set-user-ID copy of python3 left in the project,
# by every call that can set the bit (chmod, install's fchmod, a creating
# open and creat with the bit in the mode, O_TMPFILE, chmod g+s, mknod,
# openat2), and a file capability; and a plain open with those bits in
# its unused mode argument, which must pass.
SETID_ATTACK='cp /usr/bin/python3 x && chmod 4755 x && echo chmod-4755-ok
install -m 4755 /usr/bin/python3 y 2>/dev/null && echo install-ok
python3 -c "
import ctypes, os, stat
def attempt(name, f):
    try:
        f()
        print(name + \"-ok\")
    except OSError as e:
        print(name, \"errno\", e.errno)
attempt(\"open\", lambda: os.open(\"z\", os.O_CREAT | os.O_WRONLY, 0o4755))
attempt(\"tmpfile\", lambda: os.open(\".\", os.O_TMPFILE | os.O_WRONLY, 0o4755))
attempt(\"fchmod\", lambda: os.fchmod(os.open(\"w\", os.O_CREAT | os.O_WRONLY, 0o755), 0o6755))
attempt(\"chmod-2755\", lambda: os.chmod(\"w\", 0o2755))
attempt(\"mknod\", lambda: os.mknod(\"v\", stat.S_IFREG | 0o4755))
attempt(\"setcap\", lambda: os.setxattr(\"w\", \"security.capability\",
        bytes.fromhex(\"0000000280000000800000000000000000000000\")))
libc = ctypes.CDLL(None, use_errno=True)
# creat, and chmod with the mode in the high bits of the register.
fd = libc.syscall(85, b\"u\", ctypes.c_ulong(0o4755))
print(\"creat\", \"ok\" if fd >= 0 else \"errno %d\" % ctypes.get_errno())
open(\"t\", \"w\").close()
r = libc.syscall(90, b\"t\", ctypes.c_ulong(0xffff0000 | 0o4755))
print(\"chmod-high\", \"ok\" if r == 0 else \"errno %d\" % ctypes.get_errno())
# openat2 (its mode is in a struct seccomp cannot read): not available.
how = (ctypes.c_uint64 * 3)(os.O_CREAT | os.O_WRONLY, 0o4755, 0)
r = libc.syscall(437, -100, b\"s\", how, 24)
print(\"openat2\", \"ok\" if r >= 0 else \"errno %d\" % ctypes.get_errno())
# A plain open reads no mode: whatever the register holds (dig, through
# libuv, passed set-ID bits there) must not refuse it.
# (glibc passes 0 there; the raw calls pass the bits as a caller may.)
for nr, args in ((257, (-100, b\"w\", 0, ctypes.c_ulong(0o6755))), (2, (b\"w\", 0, ctypes.c_ulong(0o4755)))):
    fd = libc.syscall(nr, *args)
    print(\"read-with-setid-mode-%d\" % nr, \"ok\" if fd >= 0 else \"errno %d\" % ctypes.get_errno())
"'

# assert_no_setid_files DIR: nothing under DIR has a set-ID bit.
assert_no_setid_files() {
  local found
  found=$(find "$1" -perm /6000 2>/dev/null)
  assert_eq "" "$found" "set-ID files left in the project"
}

check_setid_attack_output() {
  assert_not_contains "$OUT" "chmod-4755-ok"
  assert_not_contains "$OUT" "install-ok"
  assert_contains "$OUT" "open errno 1"
  assert_contains "$OUT" "tmpfile errno 1"
  assert_contains "$OUT" "read-with-setid-mode-257 ok"
  assert_contains "$OUT" "read-with-setid-mode-2 ok"
  assert_contains "$OUT" "fchmod errno 1"
  assert_contains "$OUT" "chmod-2755 errno 1"
  assert_contains "$OUT" "mknod errno 1"
  assert_contains "$OUT" "setcap errno 1"
  assert_contains "$OUT" "creat errno 1"
  assert_contains "$OUT" "chmod-high errno 1"
  assert_contains "$OUT" "openat2 errno 38"
}

test_escape_setuid_file_left_in_project_by_root() {
  need_haven
  make_project
  haven_in "$P" run -- sh -c "$SETID_ATTACK"
  check_setid_attack_output
  assert_no_setid_files "$P"
  # Inside, every writable mount is nosuid, and nodev but /dev and /dev/pts (whose
  # nodes are devices; the masks, binds of /dev/null, hold nothing).
  haven_in "$P" run -- awk '$6 ~ /^rw/ && $4 != "/null" && ($6 !~ /nosuid/ || ($6 !~ /nodev/ && $5 != "/dev" && $5 != "/dev/pts")) {print "suid-mount", $5}' \
    /proc/self/mountinfo
  assert_eq 0 "$RC" "mount listing ($OUT)"
  assert_eq "" "$OUT" "writable mounts without nosuid,nodev"
  # The same under strict and the profile-less policy format.
  printf 'name: noprofile\nsyscalls:\n  profile: none\n' > "$WORK/noprofile.yaml"
  haven_in "$P" run --policy "$WORK/noprofile.yaml" -- sh -c "rm -f x; $SETID_ATTACK"
  assert_not_contains "$OUT" "chmod-4755-ok"
  assert_contains "$OUT" "open errno 1"
  assert_no_setid_files "$P"
}

test_escape_setuid_file_left_in_project_by_user() {
  need_haven
  make_project
  chown -R 65534:65534 "$P"
  local haven
  haven=$(world_readable_copy "$HAVEN")
  OUT=$(cd "$P" && setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent XDG_RUNTIME_DIR= \
        timeout 30 "$haven" run -- sh -c "$SETID_ATTACK" 2>&1)
  check_setid_attack_output
  assert_no_setid_files "$P"
}

LOADER=/lib64/ld-linux-x86-64.so.2

# exec_rules_policy NAME RULES: a policy file extending default (writable
# project, no resource limits, so it also runs as an ordinary user).
exec_rules_policy() {
  printf 'name: %s\nextends: default\nprocess:\n%s\n' "$1" "$2" > "$WORK/$1.yaml"
  chmod 644 "$WORK/$1.yaml"
  echo "$WORK/$1.yaml"
}

# The attacks of item 9 (a) on the dynamic loader: a shell, and a program
# the agent wrote, in the project and in each scratch directory.
LOADER_ATTACK="$LOADER /bin/sh -c 'echo SHELL-RAN' 2>&1
$LOADER /bin/busybox sh -c 'echo SHELL-RAN' 2>&1
$LOADER /usr/bin/bash -c 'echo SHELL-RAN' 2>&1
for d in . /tmp /dev/shm \"\$HOME\" /dev; do
  cp /usr/bin/id \"\$d/agent-id\" 2>/dev/null && $LOADER \"\$d/agent-id\" -u >/dev/null 2>&1 && echo \"AGENT-CODE-RAN in \$d\"
done
true"

test_escape_loader_runs_shell_under_block_shell() {
  need_haven
  [ -x $LOADER ] || skip "no $LOADER"
  make_project
  local pol
  pol=$(exec_rules_policy noshell '  block_shell: true')
  haven_in "$P" run --policy "$pol" -- python3 -c "import subprocess; subprocess.run(['$LOADER', '/usr/bin/python3', '-c', '''
import subprocess
for cmd in ([\"$LOADER\", \"/bin/sh\", \"-c\", \"echo SHELL-RAN\"], [\"$LOADER\", \"/usr/bin/bash\", \"-c\", \"echo SHELL-RAN\"]):
    subprocess.run(cmd)
'''])"
  assert_not_contains "$OUT" "SHELL-RAN"
  # The same from the command line, and the agent's own programs.
  haven_in "$P" run --policy "$pol" -- $LOADER /usr/bin/python3 -c "import subprocess; subprocess.run(['$LOADER', '/usr/bin/env', 'true']); print('loader-ok')"
  assert_contains "$OUT" "loader-ok"
  haven_in "$P" run --policy "$pol" -- python3 -c "
import os, shutil, subprocess
for d in ('.', '/tmp', '/dev/shm', os.environ.get('HOME', '/tmp')):
    try:
        shutil.copy('/usr/bin/id', d + '/agent-id')
    except OSError:
        continue
    r = subprocess.run(['$LOADER', d + '/agent-id', '-u'], capture_output=True)
    if r.returncode == 0:
        print('AGENT-CODE-RAN in', d)
for sh in ('/bin/sh', '/usr/bin/bash', '/bin/busybox'):
    r = subprocess.run(['$LOADER', sh, '-c', 'echo SHELL-RAN'], capture_output=True, text=True)
    print(sh, r.returncode, r.stdout.strip())
"
  assert_eq 0 "$RC" "probe ran ($OUT)"
  assert_not_contains "$OUT" "AGENT-CODE-RAN"
  assert_not_contains "$OUT" "SHELL-RAN"
  # Every writable mount (home_allow entries, read_write, tmpfs) is noexec.
  mkdir -p "$P/rw-dir"
  pol=$(exec_rules_policy noshell-rw "  block_shell: true
filesystem:
  read_write: [rw-dir]
  home_allow: [~/.cache]
  tmpfs:
    - {path: /tmp, size: 64m}")
  haven_in "$P" run --policy "$pol" -- awk '$6 ~ /^rw/ && $6 !~ /noexec/ && $4 != "/null" {print "exec-mount", $5}' \
    /proc/self/mountinfo
  assert_eq 0 "$RC" "mount listing ($OUT)"
  assert_eq "" "$OUT" "writable mounts without noexec"
}

test_escape_loader_under_allow_exec() {
  need_haven
  [ -x $LOADER ] || skip "no $LOADER"
  make_project
  local pol
  pol=$(exec_rules_policy onlypy '  allow_exec: [python3]')
  # The loader is allowed (python3 needs it): it must not run a shell or
  # what the agent wrote.
  haven_in "$P" run --policy "$pol" -- $LOADER /bin/sh -c 'echo SHELL-RAN'
  assert_not_contains "$OUT" "SHELL-RAN"
  haven_in "$P" run --policy "$pol" -- python3 -c "
import shutil, subprocess
shutil.copy('/usr/bin/id', 'agent-id')
r = subprocess.run(['$LOADER', './agent-id', '-u'], capture_output=True)
print('AGENT-CODE-RAN' if r.returncode == 0 else 'refused')"
  assert_contains "$OUT" "refused"
  assert_not_contains "$OUT" "AGENT-CODE-RAN"
}

# Item 9 (b): a program written into a memfd and executed from it.
MEMFD_ATTACK='import os
data = open("/usr/bin/id", "rb").read()
try:
    os.memfd_create("x", 0x10)  # MFD_EXEC
    print("mfd-exec-created", flush=True)
except OSError as e:
    print("mfd-exec errno", e.errno, flush=True)
for how in ("fexecve", "procfd"):
    pid = os.fork()
    if pid == 0:
        try:
            fd = os.memfd_create("x", 0)
            os.write(fd, data)
            path = fd if how == "fexecve" else "/proc/self/fd/%d" % fd
            os.execve(path, ["id", "-u"], {})
        except OSError as e:
            print(how, "errno", e.errno, flush=True)
        os._exit(0)
    os.waitpid(pid, 0)
print("done", flush=True)'

check_memfd_refused() {
  assert_contains "$OUT" "done"
  assert_not_contains "$OUT" "mfd-exec-created"
  assert_contains "$OUT" "fexecve errno"
  assert_contains "$OUT" "procfd errno"
}

test_escape_memfd_exec_under_block_shell_by_root() {
  need_haven
  make_project
  local pol
  pol=$(exec_rules_policy noshell '  block_shell: true')
  haven_in "$P" run --policy "$pol" -- python3 -c "$MEMFD_ATTACK"
  check_memfd_refused
  # The pid namespace's setting, not the host's, changed.
  assert_eq 0 "$(cat /proc/sys/vm/memfd_noexec)" "host vm.memfd_noexec"
}

test_escape_memfd_exec_under_block_shell_by_user() {
  need_haven
  make_project
  chown -R 65534:65534 "$P"
  local pol haven
  pol=$(exec_rules_policy noshell '  block_shell: true')
  haven=$(world_readable_copy "$HAVEN")
  OUT=$(cd "$P" && setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent XDG_RUNTIME_DIR= \
        timeout 30 "$haven" run --policy "$pol" -- python3 -c "$MEMFD_ATTACK" 2>&1)
  check_memfd_refused
}

# Item 9 (c): allowing a "#!/bin/sh" script allowed its interpreter.
test_escape_script_allows_its_interpreter() {
  need_haven
  make_project
  local tools pol
  # Outside /tmp and /var/tmp, which the policy replaces with scratch directories.
  tools=$(mktemp -d /var/lib/hvt-tools.XXXXXX)
  defer "rm -rf '$tools'"
  chmod 755 "$tools"
  printf '#!/bin/sh\necho tool\n' > "$tools/tool"
  chmod 755 "$tools/tool"
  pol=$(exec_rules_policy scripted "  allow_exec: [python3, $tools/tool]")
  haven_in "$P" run --policy "$pol" -- /bin/sh -c 'echo SHELL-RAN'
  assert_not_contains "$OUT" "SHELL-RAN"
  [ "$RC" != 0 ] || fail "ran with a script whose interpreter is not allowed"
  assert_contains "$OUT" "\"$tools/tool\" is a script run by $(readlink -f /bin/sh), which allow_exec does not name"
  # Through env, the program env runs must be named too.
  printf '#!/usr/bin/env perl\nprint 1\n' > "$tools/tool"
  pol=$(exec_rules_policy scripted "  allow_exec: [python3, env, $tools/tool]")
  haven_in "$P" run --policy "$pol" -- python3 -c 'print(1)'
  [ "$RC" != 0 ] || fail "ran with a script whose env program is not allowed"
  assert_contains "$OUT" "is a script run through env by"
  # Named, the interpreter is allowed.
  printf '#!/usr/bin/python3\nprint("tool-ran")\n' > "$tools/tool"
  pol=$(exec_rules_policy scripted "  allow_exec: [python3, $tools/tool]")
  haven_in "$P" run --policy "$pol" -- "$tools/tool"
  assert_eq 0 "$RC" "allowed script with allowed interpreter ($OUT)"
  assert_eq "tool-ran" "$OUT"
}
