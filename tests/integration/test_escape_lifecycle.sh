# Escapes through the lifecycle and relative commands: the audit trail,
# haven being killed, policy files that weaken silently, `haven run -- ./x`.

# pid of the process whose command line is exactly ARGS (space-joined).
_pid_of_cmdline() {
  local want=$1 f
  for f in /proc/[0-9]*/cmdline; do
    [ "$(tr '\0' ' ' < "$f" 2>/dev/null)" = "$want " ] && { basename "$(dirname "$f")"; return 0; }
  done
  return 1
}

# Whether any process has FILE open.
_file_is_open() {
  local fd
  for fd in /proc/[0-9]*/fd/*; do
    [ "$(readlink "$fd" 2>/dev/null)" = "$1" ] && return 0
  done
  return 1
}

# _kill9_haven AS_USER: start `haven run -- sleep N` under a policy with a
# time limit, SIGKILL haven, and check that the sandbox dies within 5 s;
# then check that the next run removes the bundle, state and cgroup.
_kill9_haven() {
  local user=$1 haven=$HAVEN runner=() bundle_parent=/run state_root=/run/haven
  make_project
  local marker=3600.$RANDOM
  printf 'extends: default\nresources: {timeout: 1h%s}\n' "$([ "$user" = root ] && echo ', memory: 512m')" > "$P.pol/limited.yaml"
  if [ "$user" != root ]; then
    chown -R 65534:65534 "$P"
    chmod 755 "$WORK"
    haven=$(world_readable_copy "$HAVEN")
    runner=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent XDG_RUNTIME_DIR=)
    bundle_parent=/tmp state_root=/tmp/haven-65534
  fi
  (cd "$P" && exec "${runner[@]}" "$haven" run --policy "$P.pol/limited.yaml" -- sh -c "touch started; exec sleep $marker" \
     </dev/null >/dev/null 2>&1) &
  local hpid=$! i spid=
  defer "kill -9 $hpid 2>/dev/null; true"
  for i in $(seq 100); do
    [ -e "$P/started" ] && spid=$(_pid_of_cmdline "sleep $marker") && break
    sleep 0.1
  done
  [ -n "$spid" ] || fail "the sandbox did not start"
  defer "kill -9 $spid 2>/dev/null; true"
  local state_dir=$state_root/haven-run-$hpid cgroup= bundle
  [ -d "$state_dir" ] || fail "no state directory $state_dir"
  bundle=$(jq -r .bundle "$state_dir/state.json")
  [ -d "$bundle" ] && [ "$(dirname "$bundle")" = "$bundle_parent" ] || fail "no bundle directory ($bundle)"
  if [ "$user" = root ]; then
    cgroup=$(jq -r .cgroupPath "$state_dir/state.json" 2>/dev/null)
    [ -n "$cgroup" ] && [ "$cgroup" != null ] || fail "no cgroup in $(cat "$state_dir/state.json")"
  fi

  # A bundle holds directories with secrets (git/: run_credentials.c's
  # token file): the next run removes them too.
  mkdir -p "$bundle/git/deeper" && echo token > "$bundle/git/deeper/credentials"
  chown -R --reference="$bundle" "$bundle/git"
  kill -9 "$hpid"
  wait "$hpid" 2>/dev/null
  for i in $(seq 50); do
    [ -e "/proc/$spid" ] || break
    sleep 0.1
  done
  [ -e "/proc/$spid" ] && fail "the sandbox (pid $spid) still runs 5 s after haven was killed"

  # The next run cleans what the killed one left.
  OUT=$(cd "$P" && "${runner[@]}" timeout 30 "$haven" run -- true 2>&1)
  assert_eq 0 "$?" "next run ($OUT)"
  [ -e "$state_dir" ] && fail "state directory $state_dir left behind"
  [ -e "$bundle" ] && fail "bundle $bundle left behind"
  if [ -n "$cgroup" ]; then
    local d
    for d in /sys/fs/cgroup /sys/fs/cgroup/unified /sys/fs/cgroup/memory /sys/fs/cgroup/pids; do
      [ -d "$d$cgroup" ] && fail "cgroup $d$cgroup left behind"
    done
  fi
  return 0
}

test_escape_kill9_haven_kills_sandbox() {
  need_haven
  _kill9_haven root
}

test_escape_kill9_haven_kills_sandbox_unprivileged() {
  need_haven
  _kill9_haven nobody
}

# haven killed with SIGKILL after the sandbox planted a git hook (items 2
# and 14): the run guard, once the sandbox is gone, runs the check haven
# would have run, so the user's next `git commit` does not run the hook.
# _git_check_after_kill9 haven|group: kill haven, or its whole process group
# (`kill -9 %1`), which the guard has left.  The audit trail gets its exit
# record from the guard.
_git_check_after_kill9() {
  git_project
  local marker=3600.$RANDOM err=$P.err i spid= log=$(mktemp -u "$WORK/audit-XXXXXX")/audit.log
  mkdir -p "$P.pol"
  printf 'extends: default\naudit:\n  log: %s\n' "$log" > "$P.pol/audit.yaml"
  (cd "$P" && exec setsid "$HAVEN" run --policy "$P.pol/audit.yaml" -- sh -c "mv .git .git2 && cp -a .git2 .git && rm -rf .git/hooks && mkdir .git/hooks &&
    printf '#!/bin/sh\ntouch $MARK\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit &&
    touch started && exec sleep $marker" </dev/null >/dev/null 2>"$err") &
  local hpid=$!
  defer "kill -9 $hpid 2>/dev/null; true"
  for i in $(seq 100); do
    [ -e "$P/started" ] && spid=$(_pid_of_cmdline "sleep $marker") && break
    sleep 0.1
  done
  [ -n "$spid" ] || fail "the sandbox did not start ($(cat "$err"))"
  defer "kill -9 $spid 2>/dev/null; true"
  [ -x "$P/.git/hooks/pre-commit" ] || fail "the hook was not planted"

  if [ "$1" = group ]; then
    kill -9 -- "-$hpid"
  else
    kill -9 "$hpid"
  fi
  wait "$hpid" 2>/dev/null
  # The guard reports, then exits and closes the file: wait for both.
  for i in $(seq 100); do
    grep -q "quarantined" "$err" && ! _file_is_open "$err" && break
    sleep 0.1
  done
  # Gone, or a zombie its new parent has not reaped yet.
  [ -e "/proc/$spid" ] && [ "$(awk '/^State:/ { print $2 }' "/proc/$spid/status" 2>/dev/null)" != Z ] \
    && fail "the sandbox (pid $spid) still runs after haven was killed"

  # What the user does next on the host.
  hgit status >/dev/null 2>&1
  hgit commit -q --allow-empty -m after >/dev/null 2>&1
  assert_agent_code_did_not_run "pre-commit planted before haven was killed"
  OUT=$(cat "$err")
  assert_contains "$OUT" "haven ended before the run did"
  assert_contains "$OUT" "haven: quarantined .git/hooks/pre-commit (created by the sandbox; git would run it)"
  local q
  q=$(find "$P/.haven-quarantine" -name pre-commit -type f 2>/dev/null)
  [ -n "$q" ] || fail "the hook is not in .haven-quarantine"
  [ ! -x "$q" ] || fail "the quarantined hook is executable"
  jq -se 'map(select(.event == "exit")) | length == 1 and .[0].status == 137' "$log" >/dev/null \
    || fail "no exit record with status 137: $(cat "$log")"
  return 0
}

test_escape_git_check_runs_when_haven_is_killed() {
  need_haven
  _git_check_after_kill9 haven
}

test_escape_git_check_runs_when_havens_process_group_is_killed() {
  need_haven
  _git_check_after_kill9 group
}

# A killed run's leftovers whose owner pid now belongs to someone else (pid
# reuse) are still removed; a live run's are not.
test_escape_leftovers_pid_reuse() {
  need_haven
  make_project
  sleep 30 &
  local live=$!
  defer "kill $live 2>/dev/null; true"
  # The owner file says the pid started at another time: a reused pid.
  local stale=/run/haven-run-$live.hvtest1 mine=/run/haven-run-$live.hvtest2
  mkdir -p "$stale/rootfs" "$mine"
  echo "$live 1" > "$stale/owner"
  echo x > "$stale/config.json"
  ln -s /etc/passwd "$stale/link"
  local start
  start=$(awk '{ sub(/.*\) /, ""); print $20 }' "/proc/$live/stat")
  echo "$live $start" > "$mine/owner"
  defer "rm -rf '$stale' '$mine'"
  haven_in "$P" run -- true
  assert_eq 0 "$RC" "run ($OUT)"
  [ -e "$stale" ] && fail "the bundle of a reused pid was kept"
  [ -e /etc/passwd ] || fail "a link was followed"
  [ -e "$mine/owner" ] || fail "the bundle of a live run was removed"
  return 0
}

# A flood of denials: every call still gets EPERM, the log stays under the
# cap with every line JSON, and what was not recorded is summarized.
test_escape_audit_flood_is_bounded() {
  need_haven
  make_project
  local log=$(mktemp -u "$WORK/audit-XXXXXX")/audit.log
  printf 'extends: default\naudit:\n  log: %s\n' "$log" > "$P.pol/audit.yaml"
  haven_in "$P" run --policy "$P.pol/audit.yaml" -- python3 -c '
import ctypes, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
calls = eperm = 0
t = time.time()
while calls < 200000 and time.time() - t < 8:
    calls += 1
    if libc.syscall(101, 16, 1, 0, 0) == -1 and ctypes.get_errno() == 1:
        eperm += 1
print(calls, eperm)
'
  assert_eq 0 "$RC" "flood ($OUT)"
  local calls eperm
  read -r calls eperm <<< "$(echo "$OUT" | tail -1)"
  assert_eq "$calls" "$eperm" "every ptrace call got EPERM"
  [ "$calls" -ge 20000 ] || fail "only $calls calls"
  local size
  size=$(stat -c %s "$log")
  [ "$size" -le $((4 * 1024 * 1024 + 65536)) ] || fail "audit log grew to $size bytes for $calls denials"
  python3 - "$log" "$calls" <<'PY' || fail "audit log check failed"
import json, sys
lines = open(sys.argv[1], "rb").read().split(b"\n")[:-1]
recs = [json.loads(l.decode("utf-8")) for l in lines]
denied = sum(1 for r in recs if r["event"] == "denied" and r["syscall"] == "ptrace")
dropped = sum(r["syscalls"].get("ptrace", 0) for r in recs if r["event"] == "dropped")
assert any(r["event"] == "dropped" for r in recs), "no dropped summary"
assert denied + dropped == int(sys.argv[2]), (denied, dropped, sys.argv[2])
assert recs[-1]["event"] == "exit", recs[-1]
PY
}

# A flood of one denied call, past the rate limit and the size
# cap, then another denied call never made before: that one is recorded
# with its pid and arguments, not only counted in the final summary.
test_escape_audit_new_syscall_after_flood_recorded() {
  need_haven
  make_project
  local log=$(mktemp -u "$WORK/audit-XXXXXX")/audit.log
  printf 'extends: default\naudit:\n  log: %s\n' "$log" > "$P.pol/audit.yaml"
  haven_in "$P" run --policy "$P.pol/audit.yaml" -- python3 -c '
import ctypes, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
calls = 0
t = time.time()
while calls < 60000 and time.time() - t < 8:
    calls += 1
    libc.syscall(101, 16, 1, 0, 0)
# keyctl(KEYCTL_GET_KEYRING_ID, 0x1234): the one that matters
r = libc.syscall(250, 0, 0x1234, 0, 0)
print(calls, r, ctypes.get_errno())
'
  assert_eq 0 "$RC" "flood ($OUT)"
  local calls r errno
  read -r calls r errno <<< "$(echo "$OUT" | tail -1)"
  assert_eq "-1 1" "$r $errno" "keyctl refused EPERM"
  python3 - "$log" <<'PY' || fail "audit log check failed: $(grep -v '"ptrace"' "$log" | tail -5)"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1], "rb").read().decode().splitlines()]
assert any(r["event"] == "dropped" for r in recs), "the flood was not limited"
k = [r for r in recs if r["event"] == "denied" and r["syscall"] == "keyctl"]
assert len(k) == 1 and k[0]["args"][1] == "0x1234", k
PY
}

# A process named with invalid UTF-8 still gives a JSON line.
test_escape_audit_invalid_utf8_comm() {
  need_haven
  make_project
  local log=$(mktemp -u "$WORK/audit-XXXXXX")/audit.log
  printf 'extends: default\naudit:\n  log: %s\n' "$log" > "$P.pol/audit.yaml"
  haven_in "$P" run --policy "$P.pol/audit.yaml" -- python3 -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(15, b"\xff\xfe\x01ok\xc0\x80", 0, 0, 0)
libc.syscall(101, 16, 1, 0, 0)
'
  assert_eq 0 "$RC" "run ($OUT)"
  python3 - "$log" <<'PY' || fail "audit log: $(cat -v "$log")"
import json, sys
recs = [json.loads(l.decode("utf-8")) for l in open(sys.argv[1], "rb").read().split(b"\n")[:-1]]
d = [r for r in recs if r["event"] == "denied" and r["syscall"] == "ptrace"]
assert d and d[0]["comm"] == "\ufffd\ufffd\x01ok\ufffd\ufffd", d
PY
}

# `haven run -- ./script.sh` runs the project's script, as a shell would.
test_escape_relative_command_in_project() {
  need_haven
  make_project
  mkdir -p "$P/bin"
  printf '#!/bin/sh\necho "script ran in $(pwd)"\n' > "$P/script.sh"
  printf '#!/bin/sh\necho nested\n' > "$P/bin/tool"
  chmod +x "$P/script.sh" "$P/bin/tool"
  haven_in "$P" run -- ./script.sh
  assert_eq 0 "$RC" "./script.sh ($OUT)"
  assert_eq "script ran in $P" "$OUT"
  haven_in "$P" run -- bin/tool
  assert_eq 0 "$RC" "bin/tool ($OUT)"
  assert_eq nested "$OUT"
  haven_in "$P/src" run --project "$P" -- ../script.sh
  assert_eq 0 "$RC" "../script.sh from src ($OUT)"
  assert_eq "script ran in $P/src" "$OUT"
}

# `extends:` naming a FIFO used to block haven forever; now it is refused
# at once, before anything runs.
test_escape_policy_extends_fifo_refused() {
  need_haven
  make_project
  mkfifo "$P.pol/trap.yaml"
  printf 'extends: trap.yaml\n' > "$P.pol/pol.yaml"
  local t0=$SECONDS
  OUT=$(cd "$P" && timeout 10 "$HAVEN" run --policy "$P.pol/pol.yaml" -- true 2>&1 </dev/null)
  RC=$?
  [ "$RC" = 124 ] && fail "haven hung on a FIFO in extends"
  assert_eq 125 "$RC" "status ($OUT)"
  assert_contains "$OUT" "$P.pol/trap.yaml: not a regular file"
  [ $((SECONDS - t0)) -le 3 ] || fail "took $((SECONDS - t0)) s"
}

# Silent weakenings of a policy, through the command line: each is refused
# with file:line:column, and explain shows the limit exactly.
test_escape_policy_silent_weakening_refused() {
  need_haven
  make_project
  printf 'extends: default\nresources: {memory: 1g}\n---\nresources: {memory: 64g}\n' > "$P.pol/two.yaml"
  printf 'extends: default\nresources:\n  timeout: 10m\n  timeout: nan\n' > "$P.pol/dup.yaml"
  printf 'extends: default\nresources: {memory: inf}\n' > "$P.pol/inf.yaml"
  printf 'extends: default\nresources: {timeout: 4294967296}\n' > "$P.pol/t32.yaml"
  printf 'extends: default\nfilesystem: {block: [$HOME/.ssh]}\n' > "$P.pol/var.yaml"
  haven_in "$P" run --policy "$P.pol/two.yaml" -- true
  assert_eq 125 "$RC" "two documents ($OUT)"
  assert_contains "$OUT" "$P.pol/two.yaml:3:1: a second YAML document"
  haven_in "$P" run --policy "$P.pol/dup.yaml" -- true
  assert_contains "$OUT" "$P.pol/dup.yaml:4:3: duplicate key \"timeout\""
  haven_in "$P" run --policy "$P.pol/inf.yaml" -- true
  assert_contains "$OUT" "$P.pol/inf.yaml:2:21: resources.memory: expected a size"
  haven_in "$P" run --policy "$P.pol/t32.yaml" -- true
  assert_contains "$OUT" "$P.pol/t32.yaml:2:22: resources.timeout: expected a duration"
  haven_in "$P" run --policy "$P.pol/var.yaml" -- true
  assert_contains "$OUT" "$P.pol/var.yaml:2:22: filesystem.block: \"\$HOME/.ssh\": environment variables are not expanded"
  printf 'extends: default\nresources: {memory: 1.5k}\n' > "$P.pol/exact.yaml"
  haven_in "$P" policy explain "$P.pol/exact.yaml"
  assert_contains "$OUT" "Memory: 1536 bytes"
}
