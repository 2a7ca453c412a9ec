# Escapes through state the host executes later:
# each test does what a hostile agent did inside `haven run`, then does
# what the user does afterwards on the host (git, cargo, a venv, the next
# haven run) and asserts the agent's program did not run.

# git_project: a committed repository in $P; $MARK is where the agent's
# program would leave its trace on the host.
git_project() {
  command -v git >/dev/null || skip "git is not installed"
  # mktemp, not $RANDOM: tests share $WORK, and a name another test used
  # would bring its leftovers along.
  P=$(mktemp -d "$WORK/gitproj-XXXXXX")
  chmod 755 "$P"
  MARK=$P.agent-code-ran
  hgit init -q
  echo a > "$P/a"
  hgit add a
  hgit commit -qm init || fail "initial commit failed"
}

# git as the user runs it on the host, in the project (or a subdirectory).
hgit() { git -C "$P" -c user.email=user@example.org -c user.name=user "$@"; }

# agent_hook PATH: a hook script the agent plants (it marks the host).
agent_hook() { printf '#!/bin/sh\ntouch %s\n' "$MARK"; }

assert_agent_code_did_not_run() {
  [ ! -e "$MARK" ] || fail "the agent's program ran on the host ($1)"
}

test_escape_git_dir_renamed_and_recreated() {
  need_haven
  git_project
  haven_in "$P" run -- sh -c "mv .git .git2 && cp -a .git2 .git && rm -rf .git/hooks && mkdir .git/hooks &&
    printf '#!/bin/sh\ntouch $MARK\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && echo planted"
  assert_contains "$OUT" planted
  hgit status >/dev/null 2>&1
  hgit commit -q --allow-empty -m after >/dev/null 2>&1
  assert_agent_code_did_not_run "pre-commit in a recreated .git"
  assert_contains "$OUT" "haven: quarantined .git/hooks/pre-commit (created by the sandbox; git would run it)"
  [ -e "$P/.haven-quarantine" ] || fail "no quarantine directory"
  assert_eq 700 "$(stat -c %a "$P/.haven-quarantine")" "quarantine mode"
  local q
  q=$(find "$P/.haven-quarantine" -name pre-commit -type f)
  [ -n "$q" ] || fail "the hook is not in the quarantine"
  [ ! -x "$q" ] || fail "the quarantined hook is executable"
}

test_escape_git_commondir() {
  need_haven
  git_project
  # A crafted common directory (config and hooks are read from it).
  haven_in "$P" run -- sh -c "cp -a .git crafted && rm -rf crafted/hooks && mkdir crafted/hooks &&
    printf '#!/bin/sh\ntouch $MARK\n' > crafted/hooks/pre-commit && chmod +x crafted/hooks/pre-commit &&
    printf '[core]\n\tfsmonitor = touch $MARK; false\n' >> crafted/config &&
    echo ../crafted > .git/commondir && echo planted"
  assert_contains "$OUT" planted
  hgit status >/dev/null 2>&1
  hgit commit -q --allow-empty -m after >/dev/null 2>&1
  assert_agent_code_did_not_run "hooks or fsmonitor of a commondir"
  assert_contains "$OUT" "haven: quarantined .git/commondir (created by the sandbox"
}

test_escape_git_hook_created_where_none_existed() {
  need_haven
  git_project
  rm -rf "$P/.git/hooks"
  haven_in "$P" run -- sh -c "mkdir .git/hooks && printf '#!/bin/sh\ntouch $MARK\n' > .git/hooks/pre-commit &&
    chmod +x .git/hooks/pre-commit && echo planted"
  assert_contains "$OUT" planted
  hgit commit -q --allow-empty -m after >/dev/null 2>&1
  assert_agent_code_did_not_run "a new .git/hooks/pre-commit"
  assert_contains "$OUT" "haven: quarantined .git/hooks/pre-commit (created by the sandbox; git would run it)"
}

test_escape_git_nested_repo_fsmonitor_and_hooks_path() {
  need_haven
  git_project
  haven_in "$P" run -- sh -c "mkdir sub && cd sub && git init -q && echo x > x && git add x &&
    git -c user.email=a@b -c user.name=a commit -qm x && mkdir myhooks &&
    printf '#!/bin/sh\ntouch $MARK\n' > myhooks/pre-commit && chmod +x myhooks/pre-commit &&
    git config core.hooksPath myhooks && git config core.fsmonitor 'touch $MARK; false' && echo planted"
  assert_contains "$OUT" planted
  hgit -C sub status >/dev/null 2>&1
  hgit -C sub commit -q --allow-empty -m after >/dev/null 2>&1
  assert_agent_code_did_not_run "core.fsmonitor or core.hooksPath of a nested repository"
  assert_contains "$OUT" "haven: quarantined sub/.git/config (the sandbox set core."
}

test_escape_git_husky_hooks() {
  need_haven
  git_project
  # The user's own hooks directory, set up before the run.
  mkdir "$P/.husky"
  printf '#!/bin/sh\necho user hook\n' > "$P/.husky/pre-commit"
  chmod +x "$P/.husky/pre-commit"
  hgit config core.hooksPath .husky
  haven_in "$P" run -- sh -c "printf 'touch $MARK\n' >> .husky/pre-commit &&
    printf '#!/bin/sh\ntouch $MARK\n' > .husky/post-commit && chmod +x .husky/post-commit && echo planted"
  assert_contains "$OUT" planted
  hgit commit -q --allow-empty -m after >/dev/null 2>&1
  assert_agent_code_did_not_run ".husky hooks"
  assert_contains "$OUT" "haven: quarantined .husky/pre-commit (changed by the sandbox; git would run it)"
  assert_contains "$OUT" "haven: quarantined .husky/post-commit (created by the sandbox; git would run it)"
}

# husky 9: core.hooksPath is .husky/_, whose scripts (all alike) run
# .husky/NAME, one level up: that file runs on the next commit although it
# is not in the hooks directory.
husky9_project() {
  git_project
  mkdir -p "$P/.husky/_"
  printf '#!/bin/sh\nn=$(basename "$0")\ns=$(dirname "$(dirname "$0")")/$n\n[ -f "$s" ] || exit 0\nsh -e "$s" "$@"\n' \
    > "$P/.husky/_/h"
  printf '#!/bin/sh\n. "$(dirname "$0")/h"\n' > "$P/.husky/_/pre-commit"
  chmod +x "$P/.husky/_/h" "$P/.husky/_/pre-commit"
  printf 'echo user lint\n' > "$P/.husky/pre-commit"
  hgit config core.hooksPath .husky/_
  hgit commit -q --allow-empty -m husky >/dev/null 2>&1 || fail "a commit with the user's husky hooks failed"
}

test_escape_git_husky9_script_above_hooks_path() {
  need_haven
  husky9_project
  haven_in "$P" run -- sh -c "printf 'touch $MARK\n' >> .husky/pre-commit && echo planted"
  assert_contains "$OUT" planted
  hgit commit -q --allow-empty -m after >/dev/null 2>&1
  assert_agent_code_did_not_run ".husky/pre-commit, run by core.hooksPath .husky/_"
  assert_contains "$OUT" "haven: quarantined .husky/pre-commit (changed by the sandbox; git would run it)"
}

# A hook manager's hook reads its commands from the project when git runs
# it: pre-commit's from .pre-commit-config.yaml (a `repo: local` hook's
# entry), lefthook's from lefthook.yml (any of its names).  The hooks here
# do what theirs do (the managers are not installed on test machines):
# run each entry/run line of the file.
manager_hook() { # FILE KEY
  printf '#!/bin/sh\ngrep "^ *%s:" %s | sed "s/^ *%s: *//" | while read -r c; do sh -c "$c"; done\n' "$2" "$1" "$2"
}

test_escape_git_hook_manager_files() {
  need_haven
  git_project
  manager_hook .pre-commit-config.yaml entry > "$P/.git/hooks/pre-commit"
  manager_hook lefthook.yml run > "$P/.git/hooks/post-commit"
  chmod +x "$P/.git/hooks/pre-commit" "$P/.git/hooks/post-commit"
  printf 'repos:\n- repo: local\n  hooks:\n  - id: lint\n    name: lint\n    entry: true\n    language: system\n' \
    > "$P/.pre-commit-config.yaml"
  hgit add .pre-commit-config.yaml
  hgit commit -q -m manager || fail "a commit with the user's hooks failed"
  haven_in "$P" run -- sh -c "printf '  - id: x\n    name: x\n    entry: touch $MARK\n    language: system\n' >> .pre-commit-config.yaml &&
    printf 'post-commit:\n  commands:\n    x:\n      run: touch $MARK\n' > lefthook.yml && echo planted"
  assert_contains "$OUT" planted
  hgit commit -q --allow-empty -m after >/dev/null 2>&1
  assert_agent_code_did_not_run "commands in .pre-commit-config.yaml or lefthook.yml"
  assert_contains "$OUT" "haven: quarantined .pre-commit-config.yaml (changed by the sandbox; a hook manager's file"
  assert_contains "$OUT" "haven: quarantined lefthook.yml (created by the sandbox; a hook manager's file"
}

test_escape_git_hook_planted_before_a_time_limit() {
  need_haven
  git_project
  rm -rf "$P/.git/hooks"
  mkdir -p "$P.pol"
  printf 'extends: default\nresources: {timeout: 1s}\n' > "$P.pol/quick.yaml"
  haven_in "$P" run --policy "$P.pol/quick.yaml" -- sh -c "mkdir .git/hooks && printf '#!/bin/sh\ntouch $MARK\n' > .git/hooks/post-commit &&
    chmod +x .git/hooks/post-commit && sleep 30"
  assert_eq 124 "$RC" "exit status after the time limit ($OUT)"
  hgit commit -q --allow-empty -m after >/dev/null 2>&1
  assert_agent_code_did_not_run "a hook planted by a run that was killed at its time limit"
  assert_contains "$OUT" "haven: quarantined .git/hooks/post-commit (created by the sandbox; git would run it)"
}

test_escape_git_config_restored_and_benign_git_left_alone() {
  need_haven
  git_project
  # A policy that leaves .git/config writable (no protect): the agent's
  # fsmonitor goes, the config as it was comes back.
  local pol=$(mktemp -u "$WORK/noprotect-XXXXXX").yaml first
  printf 'name: noprotect\nextends: none\nfilesystem: {hide_home: true}\n' > "$pol"
  hgit config alias.st status
  haven_in "$P" run --policy "$pol" -- sh -c "git config core.fsmonitor 'touch $MARK; false' && echo planted"
  assert_contains "$OUT" planted
  first=$OUT
  hgit status >/dev/null 2>&1
  assert_agent_code_did_not_run "core.fsmonitor in .git/config"
  assert_contains "$first" "haven: quarantined .git/config (the sandbox set core.fsmonitor; git would run it)"
  assert_contains "$first" "haven: restored .git/config as it was before the run"
  assert_eq status "$(hgit config alias.st)" "the user's own setting is back"
  # Nothing harmless is touched: a new repository with a commit, and
  # settings that run nothing.
  haven_in "$P" run -- sh -c "mkdir lib && cd lib && git init -q && echo y > y && git add y &&
    git -c user.email=a@b -c user.name=a commit -qm y && git config user.name agent && echo benign"
  assert_contains "$OUT" benign
  assert_not_contains "$OUT" "quarantined"
  assert_eq "" "$(hgit -C lib status --porcelain)" "the new repository works"
}

# Item 6: haven run from a build tree that is also the project.
test_escape_haven_binary_in_project() {
  need_haven
  P=$(mktemp -d "$WORK/buildtree-XXXXXX")
  chmod 755 "$P"
  MARK=$P.agent-code-ran
  cp "$RUNTIME" "$P/haven-runc"
  ln -s haven-runc "$P/haven"
  cp -r "$(dirname "$RUNTIME")/policies" "$P/policies"
  # Run 1: the agent replaces the binary; run 2 would execute it as the
  # user (root here), unsandboxed.
  OUT=$(cd "$P" && timeout 30 ./haven run -- sh -c "printf '#!/bin/sh\ntouch $MARK\n' > haven-runc.new &&
    chmod +x haven-runc.new && mv haven-runc.new haven-runc && echo replaced" 2>&1 </dev/null)
  RC=$?
  (cd "$P" && timeout 30 ./haven run -- true) >/dev/null 2>&1 </dev/null
  assert_agent_code_did_not_run "a replaced haven binary"
  [ "$RC" != 0 ] || fail "haven ran from inside the project ($OUT)"
  assert_not_contains "$OUT" replaced
  assert_contains "$OUT" "haven: refusing to run: the haven binary $P/"
  assert_contains "$OUT" "install haven (make install) or run it from outside the project"
  # An installed binary reached through a link in the project: the link
  # can be re-pointed, so it is refused too.
  rm "$P/haven"
  ln -s "$RUNTIME" "$P/haven"
  OUT=$(cd "$P" && timeout 30 ./haven run -- true 2>&1 </dev/null)
  RC=$?
  [ "$RC" != 0 ] || fail "haven ran through a link inside the project"
  assert_contains "$OUT" "the haven binary $P/haven is inside $P"
}

# CVE-2019-5736 in `haven run`: the sandbox's first program is executed
# by haven's own process, so a command that is a `#!/proc/self/exe` script
# runs haven's binary inside the sandbox, reached through the mount it was
# started from, not the sandbox's read-only view.  Code injected there (an
# LD_PRELOAD the agent wrote, passed by a policy) tries to write, chmod and
# chown that binary.  haven re-executes itself from a read-only view of
# its binary before the run (self_exe.c); Landlock alone would not stop
# the chmod or the chown (it has no right for either), which is why the
# re-execution stays.
test_escape_haven_binary_through_proc_self_exe() {
  need_haven
  command -v cc >/dev/null || skip "no C compiler for the injected library"
  make_project
  # An installed copy, outside the project, that the attack may damage.
  local inst
  inst=$(mktemp -d "$WORK/installed-XXXXXX")
  chmod 755 "$inst"
  cp "$RUNTIME" "$inst/haven-runc"
  ln -s haven-runc "$inst/haven"
  cp -r "$(dirname "$RUNTIME")/policies" "$inst/policies"
  local before
  before=$(stat -c '%a %u %g' "$inst/haven-runc")$(sha256sum < "$inst/haven-runc")
  cat > "$P.pol/payload.c" <<'C'
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
/* Acts only in the interpreter of the script (its argv[0] is the shebang's
 * path); every other program of the run also loads it. */
__attribute__ ((constructor)) static void
attack (void)
{
  char cmd[64] = "";
  int c = open ("/proc/self/cmdline", O_RDONLY);
  if (c < 0 || read (c, cmd, sizeof (cmd) - 1) <= 0 || strcmp (cmd, "/proc/self/exe") != 0)
    return;
  FILE *f = fopen (getenv ("ATTACK_OUT"), "w");
  if (f == NULL)
    _exit (3);
  int fd = open ("/proc/self/exe", O_WRONLY);
  fprintf (f, "write %s\n", fd >= 0 ? "ok" : strerror (errno));
  int p = open ("/proc/self/exe", O_PATH);
  char via[64];
  snprintf (via, sizeof (via), "/proc/self/fd/%d", p);
  fprintf (f, "chmod %s\n", chmod (via, 0777) == 0 ? "ok" : strerror (errno));
  fprintf (f, "chown %s\n", chown (via, 65534, 65534) == 0 ? "ok" : strerror (errno));
  fprintf (f, "truncate %s\n", truncate (via, 0) == 0 ? "ok" : strerror (errno));
  fclose (f);
  _exit (0);
}
C
  cc -shared -fPIC -o "$P/payload.so" "$P.pol/payload.c" || fail "cannot build the injected library"
  printf '#!/proc/self/exe\n' > "$P/evil"
  chmod +x "$P/evil"
  printf 'extends: default\nenv:\n  set: {LD_PRELOAD: %s/payload.so, ATTACK_OUT: %s/attack.out}\n' "$P" "$P" \
    > "$P.pol/inject.yaml"
  OUT=$(cd "$P" && timeout 30 "$inst/haven" run --policy "$P.pol/inject.yaml" -- ./evil 2>&1 </dev/null)
  RC=$?
  # Either the kernel refuses to execute the script (EACCES: its
  # interpreter is haven's binary on the detached read-only mount haven was
  # re-executed from, where Landlock grants no execute), or the injected
  # code ran and every change to the binary failed (haven's binary is
  # executable in the sandbox since `haven why` is: Landlock's rule is on
  # the file, whichever mount shows it).  Without the re-execution the
  # interpreter starts and the chmod succeeds: this test fails then.
  local got=""
  if [ -f "$P/attack.out" ]; then
    got=$(cat "$P/attack.out")
    assert_contains "$got" "chmod"
    assert_not_contains "$got" " ok"
  elif [[ $OUT == *"ASan runtime does not come first"* ]]; then
    # A sanitizer build (CI's): haven's binary, executable in the sandbox
    # since `haven why` is there, started as the interpreter and its ASan
    # runtime refused the preloaded library before any constructor ran;
    # the binary's check below still holds.
    assert_eq 1 "$RC" "exit status of the sanitizer build as the interpreter ($OUT)"
  else
    assert_eq 126 "$RC" "exit status of a script whose interpreter is /proc/self/exe ($OUT)"
    assert_contains "$OUT" "exec ./evil: permission denied"
  fi
  assert_eq "$before" "$(stat -c '%a %u %g' "$inst/haven-runc")$(sha256sum < "$inst/haven-runc")" \
    "the installed binary's mode, owner or content ($got)"
}

# Item 6: a policy file the sandbox can rewrite before the next run.
test_escape_policy_file_in_project() {
  need_haven
  make_project
  printf 'extends: default\n' > "$P/mine.yaml"
  haven_in "$P" run --policy "$P/mine.yaml" -- sh -c "printf 'extends: none\nnetwork: {mode: open}\n' > mine.yaml; echo rewritten"
  [ "$RC" != 0 ] || fail "a policy inside the project was used"
  assert_not_contains "$OUT" rewritten
  assert_contains "$OUT" "haven: refusing to run: the policy file $P/mine.yaml is inside $P"
  # Also when the project's file is only a base it extends.
  printf 'extends: %s\n' "$P/mine.yaml" > "$P.pol/outer.yaml"
  haven_in "$P" run --policy "$P.pol/outer.yaml" -- true
  [ "$RC" != 0 ] || fail "a policy extending a file inside the project was used"
  assert_contains "$OUT" "the policy file $P/mine.yaml is inside $P"
  # The same policy outside the project runs.
  cp "$P/mine.yaml" "$P.pol/mine.yaml"
  haven_in "$P" run --policy "$P.pol/mine.yaml" -- echo fine
  assert_eq fine "$OUT"
}

# Item 5: a fake home made by the test; the policy's home_allow entries
# are the only parts of it the sandbox sees.
fake_home() {
  H=$(mktemp -d "$WORK/home-XXXXXX")
  chmod 755 "$H"
  MARK=$H.agent-code-ran
  mkdir -p "$H/.cargo/bin" "$H/.local/share/virtualenvs/v/bin" "$H/.cache"
  printf '#!/bin/sh\necho real cargo\n' > "$H/.cargo/bin/cargo"
  chmod +x "$H/.cargo/bin/cargo"
  printf 'echo real activate\n' > "$H/.local/share/virtualenvs/v/bin/activate"
}

test_escape_home_cargo_and_venv_trojans_stay_in_the_sandbox() {
  need_haven
  make_project
  fake_home
  # A policy that lets cargo's whole directory in, as a user would for
  # `cargo install` (default has only ~/.cargo/registry).
  printf 'extends: default\nfilesystem: {home_allow: [~/.cargo]}\n' > "$P.pol/cargo.yaml"
  OUT=$(cd "$P" && HOME=$H XDG_STATE_HOME= timeout 30 "$HAVEN" run --policy "$P.pol/cargo.yaml" -- sh -c "
    printf '#!/bin/sh\ntouch $MARK\n' > ~/.cargo/bin/cargo && echo 'touch $MARK' >> ~/.local/share/virtualenvs/v/bin/activate &&
    ~/.cargo/bin/cargo 2>&1; echo cached > ~/.cache/new && cat ~/.cache/new && echo wrote" 2>&1 </dev/null)
  assert_contains "$OUT" wrote
  assert_contains "$OUT" cached
  # The user, later, on the host.
  "$H/.cargo/bin/cargo" >/dev/null
  (. "$H/.local/share/virtualenvs/v/bin/activate") >/dev/null
  assert_agent_code_did_not_run "a cargo or venv activate written in the sandbox"
  assert_eq "real cargo" "$("$H/.cargo/bin/cargo")" "the real cargo"
  [ ! -e "$H/.cache/new" ] || fail "a write to ~/.cache reached the real directory"
  # The project's copy persists for its next run.
  OUT=$(cd "$P" && HOME=$H XDG_STATE_HOME= timeout 30 "$HAVEN" run -- cat .cache/new 2>&1 </dev/null; cd "$P" && HOME=$H XDG_STATE_HOME= timeout 30 "$HAVEN" run -- sh -c 'cat ~/.cache/new' 2>&1 </dev/null)
  assert_contains "$OUT" cached "the project's copy of ~/.cache in its next run"
  [ -d "$H/.local/state/haven/projects" ] || fail "no per-project state directory"
  assert_eq 700 "$(stat -c %a "$H/.local/state/haven/projects")" "state directory mode"
}

test_escape_home_claude_settings_and_mcp_servers() {
  need_haven
  make_project
  fake_home
  # Claude Code's name for the project's transcripts (test_agent_state.sh).
  local d
  d=$(printf '%s' "$P" | sed 's/[^a-zA-Z0-9]/-/g')
  mkdir -p "$H/.claude/projects"
  echo '{"model":"x"}' > "$H/.claude/settings.json"
  echo '{"mcpServers":{}}' > "$H/.claude.json"
  # settings.json, hooks and CLAUDE.md are copy-on-write: the
  # writes succeed in the project's copy and never reach the real ones.
  OUT=$(cd "$P" && HOME=$H XDG_STATE_HOME= timeout 30 "$HAVEN" run --policy claude-code -- sh -c "
    echo '{\"hooks\":{\"Stop\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"touch $MARK\"}]}]}}' > ~/.claude/settings.json && echo settings-copy
    echo '{\"mcpServers\":{\"x\":{\"command\":\"touch $MARK\"}}}' > ~/.claude.json && echo json-written
    mkdir -p ~/.claude/hooks && echo 'touch $MARK' > ~/.claude/hooks/h && echo hooks-copy
    echo 'run touch $MARK' > ~/.claude/CLAUDE.md && echo claude-md-copy
    echo session > ~/.claude/projects/$d/s && echo state-written
    cp /bin/true ~/.claude/projects/$d/t && { ~/.claude/projects/$d/t 2>/dev/null && echo EXECUTED || echo noexec; }" 2>&1 </dev/null)
  assert_eq '{"model":"x"}' "$(cat "$H/.claude/settings.json")" "the real settings.json"
  assert_eq '{"mcpServers":{}}' "$(cat "$H/.claude.json")" "the real ~/.claude.json"
  assert_eq "" "$(ls -A "$H/.claude/hooks" 2>/dev/null)" "the real hooks directory"
  [ ! -s "$H/.claude/CLAUDE.md" ] || fail "CLAUDE.md was written: $(cat "$H/.claude/CLAUDE.md")"
  assert_contains "$OUT" settings-copy
  assert_contains "$OUT" hooks-copy
  assert_contains "$OUT" claude-md-copy
  assert_contains "$OUT" json-written
  assert_contains "$OUT" state-written
  assert_contains "$OUT" noexec
  assert_eq session "$(cat "$H/.claude/projects/$d/s")" "claude's own state (this project's transcripts) is written for real"
}

# The same as an ordinary user: the overlay is mounted in the run's user
# namespace, its upper layer in the user's own state directory.
test_escape_home_copy_on_write_unprivileged() {
  need_haven
  make_project
  fake_home
  local haven
  haven=$(world_readable_copy "$HAVEN")
  chown -R 65534:65534 "$P" "$H"
  chmod 755 "$WORK"
  OUT=$(cd "$P" && setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$H" XDG_STATE_HOME= XDG_RUNTIME_DIR= \
        timeout 30 "$haven" run -- sh -c "
    printf '#!/bin/sh\ntouch $MARK\n' > ~/.cargo/bin/cargo && echo new > ~/.cache/new && cat ~/.cache/new && echo wrote" 2>&1 </dev/null)
  assert_contains "$OUT" wrote
  assert_not_contains "$OUT" "read-only in this run" "the overlay was mounted"
  "$H/.cargo/bin/cargo" >/dev/null
  assert_agent_code_did_not_run "a cargo written in an unprivileged sandbox"
  assert_eq "real cargo" "$("$H/.cargo/bin/cargo")" "the real cargo"
  [ ! -e "$H/.cache/new" ] || fail "a write to ~/.cache reached the real directory"
  [ -n "$(find "$H/.local/state/haven/projects" -name new -path '*upper*' 2>/dev/null)" ] \
    || fail "the write is not in the project's upper layer"
}
