# Symbolic links a haven run leaves in the project that lead outside it
# (session/project_links.h): named on stderr after the run,
# removed under filesystem.project_links: refuse.  Links that stay inside,
# and links the run did not make, are not mentioned.

# The links an agent plants for host tools to follow: absolute, relative
# climbing out, through a directory link made in the same run, and one
# pointing at the user's key.  On 2e9dd27 haven said nothing.
plant_links() {
  printf 'ln -s /etc/shadow shadow; ln -s ../../../../../../../../etc/hosts up; mkdir -p docs;
    ln -s /etc docs/etc; ln -s docs/etc/passwd via; ln -s %s/.ssh/id_ed25519 key; ln -s src/main.c inside' "$1"
}

test_project_links_reported() {
  need_haven
  make_project
  ln -s /etc/passwd "$P/users_own"
  local h
  h=$(getent passwd "$(id -un)" | cut -d: -f6)
  haven_in "$P" run -- sh -c "$(plant_links "$h")"
  assert_eq 0 "$RC" "exit code ($OUT)"
  assert_contains "$OUT" "haven: the run left a symbolic link: shadow -> /etc/shadow (outside the project)"
  assert_contains "$OUT" "haven: the run left a symbolic link: up -> ../../../../../../../../etc/hosts (outside the project, that is /etc/hosts)"
  assert_contains "$OUT" "haven: the run left a symbolic link: docs/etc -> /etc (outside the project)"
  assert_contains "$OUT" "haven: the run left a symbolic link: via -> docs/etc/passwd (outside the project, that is /etc/passwd)"
  assert_contains "$OUT" "haven: the run left a symbolic link: key -> $h/.ssh/id_ed25519"
  assert_contains "$OUT" "filesystem.project_links: refuse"
  assert_not_contains "$OUT" "inside ->"
  assert_not_contains "$OUT" "users_own"
  [ -L "$P/shadow" ] || fail "report removed the link"
}

# refuse removes exactly those links (not the inside one, not the user's
# own), says so, and the command's exit status stays its own.
test_project_links_refused() {
  need_haven
  make_project
  ln -s /etc/passwd "$P/users_own"
  cat > "$P.pol/links.yaml" <<'POL'
name: links-refuse
extends: default
filesystem:
  project_links: refuse
POL
  haven_in "$P" run --policy "$P.pol/links.yaml" -- sh -c "$(plant_links /root); exit 3"
  assert_eq 3 "$RC" "exit code ($OUT)"
  assert_contains "$OUT" "haven: removed a symbolic link the run left (filesystem.project_links: refuse): shadow -> /etc/shadow"
  assert_contains "$OUT" "key -> /root/.ssh/id_ed25519"
  local l
  for l in shadow up docs/etc via key; do
    [ ! -L "$P/$l" ] || fail "$l is still there"
  done
  [ -L "$P/inside" ] || fail "the link inside the project was removed"
  [ -L "$P/users_own" ] || fail "the user's own link was removed"
  assert_contains "$("$HAVEN" policy explain "$P.pol/links.yaml")" "removed after the run"
  # A value that is neither: an error naming the file, line and key.
  printf 'name: bad\nextends: default\nfilesystem:\n  project_links: delete\n' > "$P.pol/bad.yaml"
  haven_in "$P" run --policy "$P.pol/bad.yaml" -- true
  assert_contains "$OUT" "bad.yaml:4:18: filesystem.project_links: expected report or refuse"
}

# haven killed with SIGKILL while the sandbox runs: the run guard, once
# the sandbox is gone, does the same check (refuse: the link is removed).
test_project_links_after_kill9() {
  need_haven
  make_project
  printf 'name: links-refuse\nextends: default\nfilesystem:\n  project_links: refuse\n' > "$P.pol/links.yaml"
  local marker=3600.$RANDOM err=$P.err i spid=
  (cd "$P" && exec setsid "$HAVEN" run --policy "$P.pol/links.yaml" -- sh -c "ln -s /etc/shadow shadow &&
    touch started && exec sleep $marker" </dev/null >/dev/null 2>"$err") &
  local hpid=$!
  defer "kill -9 $hpid 2>/dev/null; true"
  for i in $(seq 100); do
    [ -e "$P/started" ] && spid=$(_pid_of_cmdline "sleep $marker") && break
    sleep 0.1
  done
  [ -n "$spid" ] || fail "the sandbox did not start ($(cat "$err"))"
  defer "kill -9 $spid 2>/dev/null; true"
  [ -L "$P/shadow" ] || fail "the link was not planted"
  kill -9 "$hpid"
  wait "$hpid" 2>/dev/null
  for i in $(seq 100); do
    grep -q "removed a symbolic link" "$err" && ! _file_is_open "$err" && break
    sleep 0.1
  done
  assert_contains "$(cat "$err")" "haven: removed a symbolic link the run left (filesystem.project_links: refuse): shadow -> /etc/shadow"
  [ ! -L "$P/shadow" ] || fail "the link is still there"
}
