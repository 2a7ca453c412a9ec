# Git under haven-runc --policy (what Docker and Podman run, without an
# engine): the policy pins the project's repositories and makes what git
# executes read-only, and the container's monitor quarantines what the
# container made for git to execute, before `run` returns
# (tests/engines/test_docker_git.sh does the same through the engines).

test_container_git_pinned_and_checked() {
  skip_on_runc "haven's policies"
  command -v git >/dev/null || skip "git is not installed"
  local ws id mark
  ws=$(mktemp -d "$WORK/ctrgit-XXXXXX")
  chmod 755 "$ws"
  mark=$ws.planted-code-ran
  wgit() { git -C "$ws" -c user.email=u@example.org -c user.name=u "$@"; }
  wgit init -q && wgit commit -q --allow-empty -m init || fail "git init"
  id=$(new_id ctrgit)
  cfg "$B" 'del(.linux.seccomp) | .root.readonly = false
    | .mounts += [{destination: "/workspace", type: "bind", source: $ws, options: ["rbind", "rw"]}]' --arg ws "$ws"
  args "$B" sh -c "cd /workspace
    (mv .git .git.o) 2>&1
    (printf '#!/bin/sh\ntouch $mark\n' > .git/hooks/pre-commit) 2>&1
    mkdir -p sub/.git/objects sub/.git/refs/heads && echo 'ref: refs/heads/main' > sub/.git/HEAD &&
    printf '[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \"touch $mark; false\"\n' > sub/.git/config &&
    echo planted"
  OUT=$(timeout 30 "$RUNTIME" --root "$STATE_ROOT" --policy default run --bundle "$B" "$id" 2>&1 </dev/null)
  assert_contains "$OUT" planted
  wgit -C sub status >/dev/null 2>&1
  wgit -C sub commit -q --allow-empty -m host >/dev/null 2>&1
  wgit commit -q --allow-empty -m host >/dev/null 2>&1
  [ ! -e "$mark" ] || fail "the container's program ran on the host: $OUT"
  assert_contains "$OUT" "can't rename '.git': Device or resource busy"
  assert_contains "$OUT" "can't create .git/hooks/pre-commit: Read-only file system"
  assert_contains "$(cat /var/log/haven/containers/$id.jsonl)" 'quarantined sub/.git/config (the sandbox set core.fsmonitor'
}

# git itself works in the container on a pinned repository (commit, a
# branch, gc: lock files renamed inside .git), and git config says why it
# cannot write (the host's git and its libraries bound read-only).
test_container_git_works_on_pinned_repository() {
  skip_on_runc "haven's policies"
  command -v git >/dev/null || skip "git is not installed"
  [ -d /usr/lib/x86_64-linux-gnu ] && [ -d /usr/lib64 ] || skip "not a merged-/usr x86-64 host"
  local ws id
  ws=$(mktemp -d "$WORK/ctrgit-XXXXXX")
  chmod 755 "$ws"
  git -C "$ws" init -q && git -C "$ws" -c user.email=u@e -c user.name=u commit -q --allow-empty -m init \
    || fail "git init"
  id=$(new_id ctrgitok)
  cfg "$B" 'del(.linux.seccomp) | .root.readonly = false
    | .mounts += [{destination: "/workspace", type: "bind", source: $ws, options: ["rbind", "rw"]},
                  {destination: "/hostusr", type: "bind", source: "/usr", options: ["rbind", "ro"]},
                  {destination: "/lib/x86_64-linux-gnu", type: "bind", source: "/usr/lib/x86_64-linux-gnu", options: ["rbind", "ro"]},
                  {destination: "/lib64", type: "bind", source: "/usr/lib64", options: ["rbind", "ro"]}]' --arg ws "$ws"
  args "$B" sh -c 'export GIT_EXEC_PATH=/hostusr/lib/git-core; cd /workspace && G="/hostusr/bin/git -c user.email=a@e -c user.name=a" &&
    echo x > f && $G add f && $G commit -qm c && $G checkout -qb topic && $G gc -q && $G status --short &&
    echo committed; $G config user.name b 2>&1 | head -1'
  OUT=$(timeout 60 "$RUNTIME" --root "$STATE_ROOT" --policy default run --bundle "$B" "$id" 2>&1 </dev/null)
  assert_contains "$OUT" committed
  assert_contains "$OUT" "could not write config file .git/config: Device or resource busy"
  assert_eq "c" "$(git -C "$ws" log -1 --format=%s topic)" "the container's commit, on the host"
}
