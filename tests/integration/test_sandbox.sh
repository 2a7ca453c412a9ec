# The service's sandboxes (session/sandbox.h) through
# tests/helpers/sandbox_probe (built by make check): a sandbox made by a
# maker child, its commands started by the keeper, its destroy leaving
# nothing, and what a killed caller left cleaned at the next start.

SANDBOX_PROBE=$(cd "$(dirname "$RUNTIME")" && pwd)/tests/helpers/sandbox_probe
SANDBOX_POLICIES=$(cd "$(dirname "$RUNTIME")" && pwd)/policies

need_sandbox_probe() {
  need_haven
  [ -x "$SANDBOX_PROBE" ] || skip "tests/helpers/sandbox_probe not built (make check builds it)"
  SB_SCRATCH=$(mktemp -d "$WORK/sb-scratch-XXXXXX")
  SB_LABEL=hv-sandbox-$(basename "$SB_SCRATCH" | cut -d- -f3 | tr 'A-Z' 'a-z')
  # The sandboxes' inits name themselves haven-keeper: those there before.
  SB_KEEPERS_BEFORE=$(pgrep -x haven-keeper | sort)
}

# sb_probe ARGS...: the probe's output (stdout and stderr) in $OUT, status $RC.
sb_probe() {
  OUT=$(cd "$WORK" && HOME=${HOME} HAVEN_POLICY_PATH=$SANDBOX_POLICIES timeout 60 "$SANDBOX_PROBE" "$@" 2>&1 </dev/null)
  RC=$?
}

# The keepers that appeared since need_sandbox_probe (its sandboxes').
new_keepers() { comm -13 <(echo "$SB_KEEPERS_BEFORE") <(pgrep -x haven-keeper | sort); }

# wait_caller_gone: a killed caller's sandbox ends on its own (its keeper
# sees the socket's end close), within a bounded wait.
wait_caller_gone() {
  local i
  for i in $(seq 100); do
    [ -z "$(pgrep -f -- "--label $SB_LABEL ")" ] && [ -z "$(new_keepers)" ] && return 0
    sleep 0.1
  done
  [ -z "$(pgrep -f -- "--label $SB_LABEL ")" ] || fail "the sandbox's caller is still there: $(pgrep -a -f -- "--label $SB_LABEL ")"
  fail "the sandbox outlived its caller: keeper $(new_keepers)"
}

# Nothing of sandbox $1 is left: process, mount, cgroup, state directory,
# bundle, scratch workspace.
assert_sandbox_gone() {
  local label=$1
  [ ! -e "/run/haven/$label" ] || fail "state directory /run/haven/$label left"
  [ ! -e "/run/haven-sandbox-$label" ] || fail "bundle /run/haven-sandbox-$label left"
  [ ! -e "$SB_SCRATCH/$label" ] || fail "scratch workspace $SB_SCRATCH/$label left"
  ! grep -q "$label" /proc/self/mountinfo || fail "a mount of $label left: $(grep "$label" /proc/self/mountinfo)"
  [ -z "$(find /sys/fs/cgroup -name "*$label*" 2>/dev/null | head -1)" ] ||
    fail "cgroup left: $(find /sys/fs/cgroup -name "*$label*" | head -3)"
  [ -z "$(pgrep -f -- "--label $label ")" ] || fail "a process of the sandbox left: $(pgrep -a -f -- "--label $label ")"
  [ -z "$(new_keepers)" ] || fail "a keeper left: $(new_keepers)"
}

test_sandbox_command_runs_offline_default_claude_code() {
  need_sandbox_probe
  local pol
  for pol in offline default claude-code; do
    sb_probe --policy "$pol" --scratch "$SB_SCRATCH" --label "$SB_LABEL" -- sh -c 'pwd; echo x > made; cat made; exit 7'
    assert_eq 7 "$RC" "$pol: exit status ($OUT)"
    assert_contains "$OUT" "workspace: $SB_SCRATCH/$SB_LABEL"
    # The workspace is the command's cwd, at the same path, writable.
    assert_contains "$OUT" "$SB_SCRATCH/$SB_LABEL
x
status: 7"
    assert_sandbox_gone "$SB_LABEL"
  done
}

test_sandbox_env_refused_and_allowed() {
  need_sandbox_probe
  sb_probe --policy default --scratch "$SB_SCRATCH" --label "$SB_LABEL" --env GIT_AUTHOR_NAME=probe -- sh -c 'echo "n=$GIT_AUTHOR_NAME h=$HAVEN"'
  assert_eq 0 "$RC" "allowed variable ($OUT)"
  assert_contains "$OUT" "n=probe h=1"
  sb_probe --policy default --scratch "$SB_SCRATCH" --label "$SB_LABEL" --env FOO=1 -- true
  assert_eq 125 "$RC" "FOO ($OUT)"
  assert_contains "$OUT" "env FOO: not passed by the policy default"
  # A policy-set variable is not replaced; a credential-looking name
  # does not pass through a glob.
  sb_probe --policy default --scratch "$SB_SCRATCH" --label "$SB_LABEL" --env HAVEN=0 -- true
  assert_eq 125 "$RC" "HAVEN ($OUT)"
  assert_contains "$OUT" "env HAVEN: set by the policy default"
  sb_probe --policy default --scratch "$SB_SCRATCH" --label "$SB_LABEL" --env LC_API_KEY=k -- true
  assert_eq 125 "$RC" "LC_API_KEY ($OUT)"
  assert_contains "$OUT" "env LC_API_KEY: looks like a credential"
  assert_sandbox_gone "$SB_LABEL"
}

# A project sandbox: the project is the workspace and stays; what the
# sandbox planted for git is quarantined at destroy, said in its notes.
test_sandbox_project_guard() {
  need_sandbox_probe
  make_project
  sb_probe --policy default --project "$P" --label "$SB_LABEL" -- sh -c 'pwd; mv .git .git2 && cp -a .git2 .git &&
    rm -rf .git/hooks && mkdir .git/hooks && printf "#!/bin/sh\n" > .git/hooks/pre-commit && echo planted'
  assert_eq 0 "$RC" "exit status ($OUT)"
  assert_contains "$OUT" "workspace: $P
$P
planted"
  assert_contains "$OUT" "note: quarantined .git/hooks/pre-commit (created by the sandbox; git would run it)"
  [ -d "$P/src" ] || fail "the project was removed"
  assert_sandbox_gone "$SB_LABEL"
}

# The caller SIGKILLed once its sandbox is made: the keeper sees its
# socket hang up and the sandbox ends; state, cgroup, bundle and scratch
# workspace stay until clean_leftovers.
test_sandbox_leftovers_cleaned() {
  need_sandbox_probe
  sb_probe --policy offline --scratch "$SB_SCRATCH" --label "$SB_LABEL" --kill-self -- true
  assert_eq 137 "$RC" "killed probe ($OUT)"
  [ -d "/run/haven/$SB_LABEL" ] || fail "no state directory left to clean: the test proves nothing"
  [ -d "$SB_SCRATCH/$SB_LABEL" ] || fail "no scratch workspace left to clean"
  wait_caller_gone
  sb_probe --clean "$SB_LABEL" --scratch "$SB_SCRATCH"
  assert_eq 0 "$RC" "clean ($OUT)"
  assert_sandbox_gone "$SB_LABEL"
}

# A policy that does not load: the maker's error comes back whole
# (FILE:LINE:COL), and the scratch workspace made for it is gone.
test_sandbox_policy_error() {
  need_sandbox_probe
  make_project
  printf 'name: bad\nextends: default\nnetwork:\n  mode: sideways\n' > "$P.pol/bad.yaml"
  sb_probe --policy "$P.pol/bad.yaml" --scratch "$SB_SCRATCH" --label "$SB_LABEL" -- true
  assert_eq 125 "$RC" "exit status ($OUT)"
  assert_contains "$OUT" "$P.pol/bad.yaml:4:9: network.mode: expected none, open, allowlist or ask"
  assert_sandbox_gone "$SB_LABEL"
}

# Rootless: the commands run as the caller's uid, and a file the command
# writes is the caller's; the state root is the caller's.  Directories
# the command made unreadable and unwritable are removed all the same.
test_sandbox_unprivileged() {
  need_sandbox_probe
  chmod 755 "$WORK"
  chown 65534:65534 "$SB_SCRATCH"
  local probe_copy pols
  probe_copy=$(world_readable_copy "$SANDBOX_PROBE")
  pols=$(mktemp -d "$WORK/sb-pols-XXXXXX")
  cp "$SANDBOX_POLICIES"/*.yaml "$pols"/
  chmod -R a+rX "$pols"
  OUT=$(cd "$WORK" && setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent XDG_RUNTIME_DIR= \
        HAVEN_POLICY_PATH="$pols" timeout 60 "$probe_copy" --policy offline --scratch "$SB_SCRATCH/ws" \
        --label "$SB_LABEL" -- sh -c 'id -u; pwd; echo w > written; stat -c %u written;
          mkdir -p a/b/c && touch a/b/c/f && chmod 000 a/b && chmod 500 a' 2>&1 </dev/null)
  RC=$?
  assert_eq 0 "$RC" "exit status ($OUT)"
  assert_contains "$OUT" "65534
$SB_SCRATCH/ws/$SB_LABEL
65534
status: 0"
  [ ! -e "$SB_SCRATCH/ws/$SB_LABEL" ] || fail "scratch workspace left"
  [ ! -e "/tmp/haven-65534/$SB_LABEL" ] || fail "state directory left"
  [ ! -e "/tmp/haven-sandbox-$SB_LABEL" ] || fail "bundle left"
}

# The keeper is a copy of the memory that made the sandbox, and it never
# executes: the model API key the policy keeps on haven's side (for the
# monitor's gateway) must be wiped from it, not merely unreadable to the
# sandbox.  Read from the host (root) while a command runs.
test_sandbox_keeper_holds_no_api_key() {
  need_sandbox_probe
  local key="sk-ant-keepertest-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  (cd "$WORK" && ANTHROPIC_API_KEY=$key HAVEN_POLICY_PATH=$SANDBOX_POLICIES timeout 60 "$SANDBOX_PROBE" \
     --policy claude-code --scratch "$SB_SCRATCH" --label "$SB_LABEL" -- sleep 3.217 >"$WORK/probe.out" 2>&1 </dev/null) &
  local bg=$! keeper="" i
  for i in $(seq 1 100); do
    # The command's parent is the keeper (pid 1 inside).
    local cmd_pid
    cmd_pid=$(pgrep -f -x -- "sleep 3.217" | head -1)
    [ -n "$cmd_pid" ] && keeper=$(awk '{print $4}' "/proc/$cmd_pid/stat" 2>/dev/null) && [ -n "$keeper" ] && break
    sleep 0.05
  done
  [ -n "$keeper" ] || { wait $bg; fail "no keeper with its command seen: $(cat "$WORK/probe.out")"; }
  local found san=()
  ldd "$SANDBOX_PROBE" 2> /dev/null | grep -q libasan && san=(--sanitizer-env ANTHROPIC_API_KEY)
  found=$(python3 "$(dirname "$SANDBOX_POLICIES")/tests/lib/memory_holds.py" "${san[@]}" "$keeper" "$key")
  wait $bg
  assert_contains "$(cat "$WORK/probe.out")" "status: 0"
  assert_eq 0 "$found" "copies of the API key in the keeper's memory"
  assert_sandbox_gone "$SB_LABEL"
}

# A command sees the keeper as pid 1 named haven-keeper, not the command
# line of the process that made the sandbox (its paths on the host).
test_sandbox_keeper_named() {
  need_sandbox_probe
  sb_probe --policy default --scratch "$SB_SCRATCH" --label "$SB_LABEL" -- sh -c 'tr -d "\0" </proc/1/cmdline; echo "|$(cat /proc/1/comm)"'
  assert_eq 0 "$RC" "($OUT)"
  assert_contains "$OUT" "haven-keeper|haven-keeper"
  assert_not_contains "$OUT" "sandbox_probe"
  assert_sandbox_gone "$SB_LABEL"
}

# A scratch workspace's copy-on-write home layers (claude-code copies
# ~/.claude) are its own: gone with it, on destroy and when a killed
# caller's leftovers are cleaned.
test_sandbox_home_layers_removed() {
  need_sandbox_probe
  local home=$WORK/sb-home layers
  mkdir -p "$home/.claude" && echo '{}' > "$home/.claude/settings.json"
  layers=${XDG_STATE_HOME:-$home/.local/state}/haven/projects
  HOME=$home sb_probe --policy claude-code --scratch "$SB_SCRATCH" --label "$SB_LABEL" -- true
  assert_eq 0 "$RC" "($OUT)"
  [ -d "$layers" ] || fail "no home layers made: the test proves nothing ($OUT)"
  assert_eq "" "$(ls "$layers" | grep "^$SB_LABEL-")" "home layers left after destroy"
  HOME=$home sb_probe --policy claude-code --scratch "$SB_SCRATCH" --label "$SB_LABEL" --kill-self -- true
  assert_eq 137 "$RC" "killed probe ($OUT)"
  [ -n "$(ls "$layers" | grep "^$SB_LABEL-")" ] || fail "a killed caller left no home layers: the test proves nothing"
  wait_caller_gone
  HOME=$home sb_probe --clean "$SB_LABEL" --scratch "$SB_SCRATCH"
  assert_eq 0 "$RC" "clean ($OUT)"
  assert_eq "" "$(ls "$layers" | grep "^$SB_LABEL-")" "home layers left after clean"
  assert_sandbox_gone "$SB_LABEL"
}
