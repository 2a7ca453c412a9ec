# Regression tests for known runtime escapes.  The rootfs is hostile.

test_cve_2024_21626_no_leaked_fds() {
  args "$B" sh -c 'ls /proc/self/fd | sort -n | tr "\n" " "'
  # The runtime is started with extra host fds open (like a leaked
  # /sys/fs/cgroup handle); none may reach the container.
  local id out
  id=$(new_id fds)
  out=$(timeout 20 "$RUNTIME" --root "$STATE_ROOT" run --bundle "$B" "$id" 5</sys/fs/cgroup 6</ 2>&1)
  assert_eq "0 1 2 3 " "$out" "fds seen by the container (3 is ls's own)"
  # --preserve-fds passes exactly the ones asked for.
  id=$(new_id fds)
  out=$(timeout 20 "$RUNTIME" --root "$STATE_ROOT" run --preserve-fds 1 --bundle "$B" "$id" 3</dev/null 5</ 2>&1)
  assert_eq "0 1 2 3 4 " "$out" "fds with --preserve-fds 1"
}

# exec checks --preserve-fds as create does: a negative count (once taken
# by atoi) must not move the close-on-exec sweep over the runtime's fds.
test_cve_2024_21626_exec_preserve_fds_checked() {
  skip_on_runc "runc's exec takes --preserve-fds as an unsigned flag"
  args "$B" sleep 30
  local id out
  id=$(new_id pfd)
  rt run -d --bundle "$B" "$id" >/dev/null 2>&1 </dev/null || fail "run -d failed"
  for bad in -1 -3 -2147483648 x 99999999; do
    out=$(timeout 20 "$RUNTIME" --root "$STATE_ROOT" exec --preserve-fds "$bad" "$id" sh -c 'ls /proc/self/fd' 5</ 2>&1 </dev/null)       && fail "exec --preserve-fds $bad accepted: $out"
    assert_contains "$out" "invalid --preserve-fds"
  done
  out=$(timeout 20 "$RUNTIME" --root "$STATE_ROOT" exec --preserve-fds 0 "$id" sh -c 'ls /proc/self/fd | sort -n | tr "\n" " "' 5</ 2>&1 </dev/null)
  assert_eq "0 1 2 3 " "$out" "fds seen by exec (3 is ls's own)"
}

test_cve_2024_21626_cwd_through_leaked_fd() {
  # cwd pointing at a host fd of the runtime must not give the process a
  # working directory outside the container.
  cfg "$B" '.process.cwd = "/proc/self/fd/7"'
  args "$B" sh -c 'pwd; ls ..'
  local id out
  id=$(new_id cwd)
  # Either the runtime refuses, or the process's cwd is inside the
  # container: the host's / is out of reach.  /usr and /var tell the two
  # apart: every Debian host has them, the busybox rootfs has neither.
  [ -d /usr ] && [ -d /var ] || fail "host has no /usr or /var"
  [ ! -e "$B/rootfs/usr" ] && [ ! -e "$B/rootfs/var" ] || fail "the test rootfs has /usr or /var"
  if out=$(timeout 20 "$RUNTIME" --root "$STATE_ROOT" run --bundle "$B" "$id" 7</ 2>&1); then
    assert_not_contains "$out" "usr" "listing of the cwd's parent"
    assert_not_contains "$out" "var" "listing of the cwd's parent"
  fi
  return 0
}

test_cve_2019_5736_runtime_binary_unreachable() {
  args "$B" sleep 100
  local id pid exe
  id=$(new_id exe)
  rt create --bundle "$B" "$id"
  pid=$(rt state "$id" | jq .pid)
  # Until start, init runs the runtime's code: from a sealed copy (memfd)
  # or a private read-only bind of it, never straight from the host binary.
  exe=$(readlink /proc/$pid/exe)
  [ -n "$exe" ] || fail "no exe link for init $pid"
  [ "$exe" != "$(readlink -f "$RUNTIME")" ] || fail "init runs the host binary $exe"
  python3 - "$pid" <<'PY' || fail "runtime image of init is writable"
import sys
try:
    open("/proc/%s/exe" % sys.argv[1], "r+b").write(b"x")
except OSError:
    sys.exit(0)
sys.exit(1)
PY
  rt delete --force "$id"
  local sha_before
  sha_before=$(sha256sum "$RUNTIME" | cut -d' ' -f1)
  # From inside: pid 1 is the container's own program, and writes through
  # /proc/*/exe do not reach the runtime.
  args "$B" sh -c 'readlink /proc/1/exe; for p in /proc/[0-9]*; do echo pwned >> $p/exe; done 2>/dev/null; true'
  run_ctr "$B"
  assert_eq "/bin/busybox" "$OUT" "pid 1's exe seen from inside"
  assert_eq "$sha_before" "$(sha256sum "$RUNTIME" | cut -d' ' -f1)" "runtime binary changed"
}

test_cve_2019_16884_symlinked_proc() {
  # /proc in the image is a symlink to /tmp (or a directory with fake
  # files): either the create fails, or the procfs mount lands inside the
  # rootfs and sysctls are still written to the real procfs.
  local kind
  for kind in symlink fake-dir; do
    rm -rf "$B/rootfs/proc"
    if [ $kind = symlink ]; then
      ln -s tmp "$B/rootfs/proc"
    else
      mkdir -p "$B/rootfs/proc/self/attr" "$B/rootfs/proc/sys/kernel"
      echo fake > "$B/rootfs/proc/self/attr/exec"
      echo 1 > "$B/rootfs/proc/sys/kernel/msgmax"
    fi
    cfg "$B" '.linux.sysctl = {"kernel.msgmax": "4097"} | .root.readonly = false'
    args "$B" sh -c 'stat -f -c %T /proc/; cat /proc/sys/kernel/msgmax'
    run_ctr "$B"
    if [ "$RC" != 0 ]; then
      assert_contains "$OUT" "proc" "error for a $kind /proc"
    else
      assert_eq "proc
4097" "$OUT" "$kind /proc"
    fi
  done
  [ "$(cat /proc/sys/kernel/msgmax)" != 4097 ] || fail "sysctl leaked to the host"
}

test_mount_destination_symlink_escape() {
  ln -s / "$B/rootfs/evil"
  ln -s ../../../../../../ "$B/rootfs/evil2"
  local name=hvt-escape-$$
  cfg "$B" '.mounts += [{destination: ("/evil/" + $n), type: "tmpfs", source: "tmpfs"},
                       {destination: ("/evil2/" + $n + "-2"), type: "tmpfs", source: "tmpfs"},
                       {destination: ("/../../../" + $n + "-3"), type: "tmpfs", source: "tmpfs"}]
            | .root.readonly = false' --arg n "$name"
  args "$B" true
  run_ctr "$B"
  assert_eq 0 "$RC" "exit code ($OUT)"
  local d
  for d in "/$name" "/$name-2" "/$name-3" "/tmp/$name"; do
    [ -e "$d" ] && { rmdir "$d"; fail "mount target created on the host: $d"; }
  done
  [ -d "$B/rootfs/$name" ] && [ -d "$B/rootfs/$name-2" ] && [ -d "$B/rootfs/$name-3" ] \
    || fail "targets not created inside the rootfs"
}

test_cve_2025_31133_devnull_replaced() {
  # No /dev tmpfs: devices are made in the image's /dev, where /dev/null is
  # a symlink to a procfs file.  Masking must not bind that file.
  skip_on_runc "runc 1.1.5 predates the CVE-2025-31133 fix (it overwrites the host's kernel.core_pattern)"
  cfg "$B" '.mounts |= map(select(.destination != "/dev" and .destination != "/dev/pts" and .destination != "/dev/shm"
            and .destination != "/dev/mqueue")) | .root.readonly = false | .linux.maskedPaths = ["/proc/timer_list"]'
  ln -sf /proc/sys/kernel/core_pattern "$B/rootfs/dev/null"
  local before
  before=$(cat /proc/sys/kernel/core_pattern)
  # A vulnerable runtime writes the host's core_pattern: put it back.
  defer "printf '%s\\n' '$before' > /proc/sys/kernel/core_pattern"
  args "$B" sh -c 'stat -c "%F %t:%T" /dev/null; wc -c < /proc/timer_list; echo x > /proc/timer_list; true'
  run_ctr "$B"
  assert_contains "$OUT" "character special file 1:3"
  assert_eq "$before" "$(cat /proc/sys/kernel/core_pattern)" "host core_pattern"
}

test_cve_2022_29162_exec_no_inheritable_caps() {
  args "$B" sleep 100
  local id
  id=$(new_id inh)
  rt run -d --bundle "$B" "$id"
  assert_eq "CapInh:	0000000000000000" "$(rt exec "$id" grep CapInh /proc/self/status)"
  assert_eq "CapInh:	0000000000000000" "$(rt exec --cap CAP_SYS_ADMIN "$id" grep CapInh /proc/self/status)"
}

# --pid-file (and state files) are written to a temporary file of a unique
# name and renamed: a link planted at the old fixed temporary name
# (".NAME.tmp") must not redirect the write anywhere.
test_pid_file_temporary_name_not_followed() {
  skip_on_runc "runc's temporary pid file name differs"
  args "$B" true
  local id victim=$PWD/victim
  id=$(new_id pid)
  echo untouched > "$victim"
  ln -s "$victim" "$PWD/.pidfile.tmp"
  rt create --bundle "$B" --pid-file "$PWD/pidfile" "$id" || fail "create failed"
  assert_eq untouched "$(cat "$victim")" "the file behind the planted link"
  [ -f "$PWD/pidfile" ] && [ ! -L "$PWD/pidfile" ] || fail "the pid file is not a regular file"
  assert_eq "$(rt state "$id" | jq -r .pid)" "$(cat "$PWD/pidfile")" "pid file content"
}

# Without a terminal of its own, the container's process and an exec'd one
# lead a session of their own: they never share the caller's controlling
# terminal (TIOCSTI into it needs it as the controlling terminal).
test_no_terminal_means_own_session() {
  skip_on_runc "runc keeps a process without a terminal in the caller's session"
  # Field 6 of /proc/PID/stat is the session id: the process's own pid
  # when it leads a session ($$ is 1 for the container's init).
  local check='set -- $(cat /proc/$$/stat); [ "$6" = "$$" ] && echo own-session || echo "session $6, pid $$"'
  args "$B" sh -c "$check"
  local id out
  id=$(new_id sid)
  out=$(timeout 20 "$RUNTIME" --root "$STATE_ROOT" run --bundle "$B" "$id" 2>&1 </dev/null)
  assert_eq own-session "$out" "the container's process"
  args "$B" sleep 30
  id=$(new_id sid)
  rt run -d --bundle "$B" "$id" >/dev/null 2>&1 </dev/null || fail "run -d failed"
  out=$(timeout 20 "$RUNTIME" --root "$STATE_ROOT" exec "$id" sh -c "$check" 2>&1 </dev/null)
  assert_eq own-session "$out" "an exec'd process"
}
