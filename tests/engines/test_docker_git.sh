# Git under an engine: what git would execute on the host, created or
# changed by a policed container, never runs there.  Each test
# does what a hostile container did, then what the user does on the host
# (git commit, git status), while the container still runs and after it
# ended, and asserts the container's program did not run.  The image has
# no git: the container writes git's files with the shell, as any program
# could.

# A committed repository in $WS (the container's /workspace); $MARK is
# where the planted program would leave its trace on the host.
git_workspace() {
  command -v git >/dev/null || skip "git is not installed"
  WS=$(mktemp -d "$WORK/gitws-XXXXXX")
  chmod 755 "$WS"
  MARK=$WS.planted-code-ran
  wsgit init -q
  echo a > "$WS/a"
  wsgit add a
  wsgit commit -qm init || fail "initial commit failed"
}

# git as the user runs it on the host.
wsgit() { git -C "$WS" -c user.email=user@example.org -c user.name=user "$@"; }

# What the user does on the host: commit (hooks) and status (fsmonitor),
# in the workspace and in DIR below it.
host_git_use() { # [DIR]
  local d=${1:-.}
  wsgit -C "$d" status >/dev/null 2>&1
  wsgit -C "$d" commit -q --allow-empty -m host >/dev/null 2>&1
}

assert_planted_code_did_not_run() {
  [ ! -e "$MARK" ] || fail "the container's program ran on the host ($1)"
}

# A hook that marks the host, as the container writes it.
HOOK_TEXT='#!/bin/sh\ntouch %s\n'

# The container's attacks on the repository at the top: rename .git and
# put a copy with a new hook in its place, replace hooks/, add to config.
# Each is tried; none may succeed.  (The policy passes no -e variables:
# the values are in the script.)
git_attacks() {
  cat <<EOS
cd /workspace
(mv .git .git.o && cp -a .git.o .git) 2>&1 | sed "s/^/mv: /"
(mv .git/hooks .git/hooks.o && mkdir .git/hooks) 2>&1 | sed "s/^/hooks: /"
(printf '$(printf "$HOOK_TEXT" "$MARK")' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit) 2>&1 | sed "s/^/write: /"
(printf '[core]\\n\\tfsmonitor = "touch $MARK; false"\\n' >> .git/config) 2>&1 | sed "s/^/config: /"
echo attacks-done
EOS
}

test_docker_git_dir_renamed_while_running() {
  need_docker
  git_workspace
  # A repository nested in the workspace (a vendored clone) is pinned too.
  git init -q "$WS/vendor/lib"
  local c
  c=$(new_name git)
  dk run -d --name "$c" --runtime haven-default -v "$WS:/workspace" -w /workspace "$IMAGE" sleep 1000 \
    >/dev/null 2>run.err || fail "docker run -d: $(cat run.err)"
  defer "dk rm -f $c >/dev/null 2>&1"
  OUT=$(dk exec "$c" sh -c "$(git_attacks)" 2>&1)
  assert_contains "$OUT" attacks-done
  local nested
  nested=$(dk exec "$c" sh -c "cd vendor/lib && $(git_attacks | sed 1d)
    (mv /workspace/vendor /workspace/vendor.o) 2>&1" 2>&1)
  # The user works in the workspace while the container runs.
  host_git_use
  host_git_use vendor/lib
  assert_planted_code_did_not_run "git on the host while the container runs: $OUT $nested"
  assert_contains "$nested" "mv: can't rename '.git': Device or resource busy"
  assert_contains "$nested" "can't rename '/workspace/vendor': Device or resource busy"
  # .git is a mount point in the container: it cannot be renamed or removed.
  assert_contains "$OUT" "mv: mv: can't rename '.git': Device or resource busy"
  assert_contains "$OUT" "hooks: mv: can't rename '.git/hooks': Device or resource busy"
  assert_contains "$OUT" "Read-only file system"
  dk rm -f "$c" >/dev/null 2>&1
  host_git_use
  assert_planted_code_did_not_run "git on the host after the container ended"
  assert_eq "?? vendor/" "$(wsgit status --porcelain)" "the repository is as it was"
}

# husky 9 (core.hooksPath .husky/_, whose scripts run .husky/NAME) and the
# files hook managers read commands from when git runs their hooks.
test_docker_git_hook_manager_files_while_running() {
  need_docker
  git_workspace
  mkdir -p "$WS/.husky/_"
  printf '#!/bin/sh\nn=$(basename "$0")\ns=$(dirname "$(dirname "$0")")/$n\n[ -f "$s" ] || exit 0\nsh -e "$s" "$@"\n' \
    > "$WS/.husky/_/h"
  printf '#!/bin/sh\n. "$(dirname "$0")/h"\n' > "$WS/.husky/_/pre-commit"
  chmod +x "$WS/.husky/_/h" "$WS/.husky/_/pre-commit"
  printf 'echo user lint\n' > "$WS/.husky/pre-commit"
  printf 'repos: []\n' > "$WS/.pre-commit-config.yaml"
  wsgit config core.hooksPath .husky/_
  local c
  c=$(new_name git)
  dk run -d --name "$c" --runtime haven-default -v "$WS:/workspace" -w /workspace "$IMAGE" sleep 1000 \
    >/dev/null 2>run.err || fail "docker run -d: $(cat run.err)"
  defer "dk rm -f $c >/dev/null 2>&1"
  OUT=$(dk exec "$c" sh -c "
    (echo 'touch $MARK' >> .husky/pre-commit) 2>&1
    (mv .husky .husky.o && mkdir -p .husky/_ && cp -a .husky.o/_/. .husky/_/ && echo 'touch $MARK' > .husky/pre-commit) 2>&1
    (echo '- repo: local' >> .pre-commit-config.yaml) 2>&1
    (mv .pre-commit-config.yaml x) 2>&1
    echo done" 2>&1)
  assert_contains "$OUT" done
  host_git_use
  assert_planted_code_did_not_run ".husky/pre-commit while the container runs: $OUT"
  assert_contains "$OUT" "can't create .husky/pre-commit: Read-only file system"
  assert_contains "$OUT" "can't rename '.husky': Device or resource busy"
  assert_contains "$OUT" "can't create .pre-commit-config.yaml: Read-only file system"
  assert_contains "$OUT" "can't rename '.pre-commit-config.yaml': Device or resource busy"
  assert_eq "echo user lint" "$(cat "$WS/.husky/pre-commit")" "the user's husky script"
}

# What prevention cannot stop while the container runs (a repository it
# creates, a commondir it adds) is quarantined when it ends: before
# `docker run` returns.
test_docker_git_created_repository_checked_at_end() {
  need_docker
  git_workspace
  local c id trail
  c=$(new_name git)
  OUT=$(dk run --name "$c" --runtime haven-default -v "$WS:/workspace" -w /workspace "$IMAGE" sh -c "
    mkdir -p sub/.git/objects sub/.git/refs/heads crafted/hooks
    echo 'ref: refs/heads/main' > sub/.git/HEAD
    printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \"touch $MARK; false\"\n' > sub/.git/config
    cp -a .git/. crafted/ 2>/dev/null; rm -rf crafted/hooks; mkdir crafted/hooks
    printf '$(printf "$HOOK_TEXT" "$MARK")' > crafted/hooks/pre-commit && chmod +x crafted/hooks/pre-commit
    echo ../crafted > .git/commondir && echo planted" 2>&1)
  assert_contains "$OUT" planted
  id=$(dk inspect -f '{{.Id}}' "$c")
  defer "dk rm -f $c >/dev/null 2>&1"
  # Right after docker run returned (the engine deletes the task, and the
  # runtime's delete waits for the check, before it reports the exit).
  host_git_use
  host_git_use sub
  assert_planted_code_did_not_run "a repository or commondir the container created"
  [ -d "$WS/.haven-quarantine" ] || fail "no quarantine in the workspace"
  [ ! -e "$WS/.git/commondir" ] || fail ".git/commondir is still there"
  trail=/var/log/haven/containers/$id.jsonl
  assert_contains "$(cat "$trail" 2>&1)" '"event":"git_guard"'
  assert_contains "$(cat "$trail")" 'quarantined sub/.git/config (the sandbox set core.fsmonitor'
  assert_contains "$(cat "$trail")" 'quarantined .git/commondir (created by the sandbox'
}

# The same under Podman (conmon; the policy by annotation): the attacks
# while the container runs, and a repository created, found when
# `podman run` has returned.
test_podman_git_while_running_and_at_end() {
  need_podman
  git_workspace
  local c
  c=$(new_name git)
  pm run -d --name "$c" "${PR[@]}" --network none --annotation run.haven.policy=default -v "$WS:/workspace" \
    -w /workspace "$IMAGE" sleep 1000 >/dev/null 2>run.err || fail "podman run -d: $(cat run.err)"
  defer "pm rm -f -t 0 $c >/dev/null 2>&1"
  OUT=$(pm exec "$c" sh -c "$(git_attacks)" 2>&1)
  assert_contains "$OUT" attacks-done
  host_git_use
  assert_planted_code_did_not_run "git on the host while the container runs: $OUT"
  assert_contains "$OUT" "mv: mv: can't rename '.git': Device or resource busy"
  pm rm -f -t 0 "$c" >/dev/null 2>&1
  OUT=$(pm run --rm "${PR[@]}" --network none --annotation run.haven.policy=default -v "$WS:/workspace" \
    -w /workspace "$IMAGE" sh -c "
    mkdir -p sub/.git/objects sub/.git/refs/heads
    echo 'ref: refs/heads/main' > sub/.git/HEAD
    printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \"touch $MARK; false\"\n' > sub/.git/config
    echo planted" 2>&1)
  assert_contains "$OUT" planted
  host_git_use sub
  assert_planted_code_did_not_run "a repository the container created"
  [ -d "$WS/.haven-quarantine" ] || fail "no quarantine in the workspace"
}

# What prevention cannot stop while the container runs, because the name
# did not exist at create (a commondir in the pinned .git, a hook
# manager's file), is quarantined as soon as the kernel reports it (the
# monitor's inotify watches), not when the container ends: the host's
# git, polled meanwhile, never runs the planted hook.
test_docker_git_new_names_quarantined_while_running() {
  need_docker
  git_workspace
  printf '#!/bin/sh\n[ -f lefthook.yml ] && sh lefthook.yml\nexit 0\n' > "$WS/.git/hooks/post-commit"
  chmod +x "$WS/.git/hooks/post-commit"
  local c i t0 gone=
  c=$(new_name git)
  dk run -d --name "$c" --runtime haven-default -v "$WS:/workspace" -w /workspace "$IMAGE" sleep 1000 \
    >/dev/null 2>run.err || fail "docker run -d: $(cat run.err)"
  defer "dk rm -f $c >/dev/null 2>&1"
  OUT=$(dk exec "$c" sh -c "
    cp -a .git crafted && rm -rf crafted/hooks && mkdir crafted/hooks &&
    printf '$(printf "$HOOK_TEXT" "$MARK")' > crafted/hooks/pre-commit && chmod +x crafted/hooks/pre-commit &&
    echo ../crafted > .git/commondir && echo 'touch $MARK' > lefthook.yml && echo planted" 2>&1)
  assert_contains "$OUT" planted
  t0=$EPOCHREALTIME
  for i in $(seq 1 100); do
    if [ ! -e "$WS/.git/commondir" ] && [ ! -e "$WS/lefthook.yml" ]; then gone=1; break; fi
    sleep 0.05
  done
  host_git_use
  assert_planted_code_did_not_run "a commondir or hook manager's file made while the container runs"
  [ -n "$gone" ] || fail "commondir or lefthook.yml still there 5 s after the container wrote them"
  assert_contains "$(cat /var/log/haven/containers/$(dk inspect -f '{{.Id}}' "$c").jsonl)" \
    'quarantined .git/commondir (created by the sandbox'
}

# A repository the container makes deep in the workspace while it runs
# (the shell's way: a directory, then HEAD, then the config written after
# it was created empty), with core.fsmonitor: quarantined while the
# container runs, before the host's git status there.
test_docker_git_new_nested_repository_while_running() {
  need_docker
  git_workspace
  mkdir -p "$WS/src/lib"
  local c i gone=
  c=$(new_name git)
  dk run -d --name "$c" --runtime haven-default -v "$WS:/workspace" -w /workspace "$IMAGE" sleep 1000 \
    >/dev/null 2>run.err || fail "docker run -d: $(cat run.err)"
  defer "dk rm -f $c >/dev/null 2>&1"
  # The second one in a directory renamed after the monitor watched it.
  OUT=$(dk exec "$c" sh -c "
    mkdir x && sleep 0.5 && mv x moved &&
    for d in src/lib/dep moved; do
      mkdir -p \$d/.git/objects \$d/.git/refs/heads && echo 'ref: refs/heads/main' > \$d/.git/HEAD && : > \$d/.git/config
    done && sleep 1 &&
    for d in src/lib/dep moved; do
      printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \"touch $MARK; false\"\n' >> \$d/.git/config
    done && echo planted" 2>&1)
  assert_contains "$OUT" planted
  for i in $(seq 1 100); do
    if ! grep -qs fsmonitor "$WS/src/lib/dep/.git/config" "$WS/moved/.git/config"; then gone=1; break; fi
    sleep 0.05
  done
  host_git_use src/lib/dep
  host_git_use moved
  assert_planted_code_did_not_run "core.fsmonitor of a repository made while the container runs"
  [ -n "$gone" ] || fail "a planted config is still there 5 s after the container wrote it"
}

# Rootless Podman (the runtime and its monitor in the user's namespace):
# the workspace is the user's, the pinning and both checks work there.
test_podman_rootless_git() {
  rootless_podman_setup
  command -v git >/dev/null || skip "git is not installed"
  OUT=$(upm import "$WORK/image.tar" havenbox:rootless 2>&1) || fail "podman import: $OUT"
  # The runtime is a copy outside the checkout: the policy from the user's own directory.
  local pol=/home/$RL_USER/.config/haven/policies
  mkdir -p "$pol" && cp "$here/../../policies/default.yaml" "$pol/" && chown -R "$RL_USER:" "/home/$RL_USER/.config"
  WS=$RL_DIR/ws
  MARK=$RL_DIR/planted-code-ran
  mkdir -m 755 "$WS" && chown "$RL_USER:" "$WS" "$RL_DIR"
  ugit() { as_rootless git -C "$WS" -c user.email=u@example.org -c user.name=u "$@"; }
  ugit init -q && ugit commit -q --allow-empty -m init || fail "git init as $RL_USER"
  OUT=$(upm run --rm --runtime haven --network none --annotation run.haven.policy=default -v "$WS:/workspace" \
    -w /workspace havenbox:rootless sh -c "
    (mv .git .git.o) 2>&1
    mkdir -p sub/.git/objects sub/.git/refs/heads && echo 'ref: refs/heads/main' > sub/.git/HEAD &&
    printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \"touch $MARK; false\"\n' > sub/.git/config &&
    echo planted" 2>&1 </dev/null)
  assert_contains "$OUT" planted
  ugit -C sub status >/dev/null 2>&1
  ugit -C sub commit -q --allow-empty -m after >/dev/null 2>&1
  ugit commit -q --allow-empty -m after >/dev/null 2>&1
  [ ! -e "$MARK" ] || fail "the container's program ran on the host (rootless): $OUT"
  assert_contains "$OUT" "can't rename '.git': Device or resource busy"
  [ -d "$WS/.haven-quarantine" ] || fail "no quarantine in the workspace: $OUT"
}

# The user works on the host while the container runs: `git config` on
# the host writes a new config and renames it over the old one, and the
# kernel then drops the container's read-only bind of the old file (a
# mount on a replaced file goes with it): from then on the container can
# write .git/config.  The live check quarantines what it sets there (and
# puts back the config as it was at create: the user's alias too).
test_docker_git_config_replaced_on_host() {
  need_docker
  git_workspace
  local c i gone=
  c=$(new_name git)
  dk run -d --name "$c" --runtime haven-default -v "$WS:/workspace" -w /workspace "$IMAGE" sleep 1000 \
    >/dev/null 2>run.err || fail "docker run -d: $(cat run.err)"
  defer "dk rm -f $c >/dev/null 2>&1"
  wsgit config alias.co checkout
  sleep 0.5
  OUT=$(dk exec "$c" sh -c "printf '[core]\n\tfsmonitor = \"touch $MARK; false\"\n' >> .git/config && echo planted" 2>&1)
  assert_contains "$OUT" planted # the kernel's rule: the bind went with the replaced file
  for i in $(seq 1 100); do
    if ! grep -qs fsmonitor "$WS/.git/config"; then gone=1; break; fi
    sleep 0.05
  done
  host_git_use
  assert_planted_code_did_not_run "core.fsmonitor written after the host replaced .git/config"
  [ -n "$gone" ] || fail "the container's fsmonitor is still in .git/config after 5 s"
  assert_contains "$(cat /var/log/haven/containers/$(dk inspect -f '{{.Id}}' "$c").jsonl)" \
    'restored .git/config as it was before the run'
}
