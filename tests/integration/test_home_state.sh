# Allowed home paths that do not exist yet are created on the host before
# the run, so that an agent's first run keeps its login and settings
# (policies/README.md, "Allowed home paths a first run creates").

# An agent-like policy: one entry of each kind, none of them on the host.
home_agent_policy() {
  cat > "$1" <<'EOP'
filesystem:
  read_write: [~/.rwdir]
  home_allow:
    - {path: ~/.agentd, write: direct, protect: [settings.json, hooks]}
    - ~/.agent.json
    - ~/.config/agentc
    - {path: ~/.agentro, write: read-only}
    - {path: ~/.gitconfig, write: read-only}
EOP
}

# stat of a host path as "type mode owner".
home_stat() { stat -c '%F %a %u' "$1" 2>&1; }

# What the first run must have left in home $1 for uid $2, and what the
# second run must see.
home_check_created() {
  local h=$1 uid=$2
  assert_eq "directory 700 $uid" "$(home_stat "$h/.agentd")" "direct entry ~/.agentd"
  assert_eq "regular file 600 $uid" "$(home_stat "$h/.agentd/settings.json")" "its protected settings.json"
  assert_eq "directory 700 $uid" "$(home_stat "$h/.agentd/hooks")" "its protected hooks"
  assert_eq "regular file 600 $uid" "$(home_stat "$h/.agent.json")" "copy-on-write file ~/.agent.json"
  assert_eq "{}" "$(cat "$h/.agent.json")" "a new .json file holds an empty object"
  assert_eq "directory 700 $uid" "$(home_stat "$h/.config")" "the parent ~/.config"
  assert_eq "directory 700 $uid" "$(home_stat "$h/.config/agentc")" "copy-on-write directory ~/.config/agentc"
  assert_eq "directory 700 $uid" "$(home_stat "$h/.rwdir")" "read_write ~/.rwdir"
  [ ! -e "$h/.agentro" ] || fail "a read-only entry was created"
  [ ! -e "$h/.gitconfig" ] || fail "a read-only file entry was created"
  assert_eq "login" "$(cat "$h/.agentd/login" 2>&1)" "the direct entry is written for real"
  assert_eq "rw" "$(cat "$h/.rwdir/f" 2>&1)" "read_write is written for real"
  assert_eq "{}" "$(cat "$h/.agent.json")" "the real ~/.agent.json is not written (copy-on-write)"
  [ ! -e "$h/.config/agentc/s" ] || fail "a copy-on-write write reached the real ~/.config/agentc"
}

home_first_run='echo login > ~/.agentd/login && echo "{\"t\":1}" > ~/.agent.json && echo s > ~/.config/agentc/s &&
  echo rw > ~/.rwdir/f && { echo x > ~/.agentd/settings.json; } 2>/dev/null || echo settings-ro; echo done'
home_second_run='cat ~/.agentd/login ~/.agent.json ~/.config/agentc/s ~/.rwdir/f'

test_home_entries_created_as_root() {
  need_haven
  make_project
  local h
  h=$(mktemp -d "$WORK/home-XXXXXX")
  home_agent_policy "$P.pol/agent.yaml"
  OUT=$(cd "$P" && HOME=$h timeout 30 "$HAVEN" run --policy "$P.pol/agent.yaml" -- sh -c "$home_first_run" 2>&1 </dev/null)
  assert_contains "$OUT" settings-ro
  assert_contains "$OUT" done
  home_check_created "$h" 0
  OUT=$(cd "$P" && HOME=$h timeout 30 "$HAVEN" run --policy "$P.pol/agent.yaml" -- sh -c "$home_second_run" 2>&1 </dev/null)
  assert_eq 'login
{"t":1}
s
rw' "$OUT" "the second run sees what the first wrote"
}

test_home_entries_created_as_unprivileged_user() {
  need_haven
  make_project
  local h haven
  h=$(mktemp -d "$WORK/home-XXXXXX")
  home_agent_policy "$P.pol/agent.yaml"
  chmod 755 "$P.pol"
  chmod 644 "$P.pol/agent.yaml"
  chown -R 65534:65534 "$P" "$h"
  chmod 700 "$h"
  chmod 755 "$WORK"
  haven=$(world_readable_copy "$HAVEN")
  OUT=$(cd "$P" && setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$h" XDG_STATE_HOME= XDG_RUNTIME_DIR= \
        timeout 30 "$haven" run --policy "$P.pol/agent.yaml" -- sh -c "$home_first_run" 2>&1 </dev/null)
  assert_contains "$OUT" done
  assert_not_contains "$OUT" "read-only in this run" "the overlay was mounted"
  home_check_created "$h" 65534
  OUT=$(cd "$P" && setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$h" XDG_STATE_HOME= XDG_RUNTIME_DIR= \
        timeout 30 "$haven" run --policy "$P.pol/agent.yaml" -- sh -c "$home_second_run" 2>&1 </dev/null)
  assert_eq 'login
{"t":1}
s
rw' "$OUT" "the second run sees what the first wrote"
}

# Root's own home (HOME unset: the password database's /root) is a home
# like any other: writable scratch, and an entry missing there is made.
test_home_entries_created_in_roots_home() {
  need_haven
  make_project
  [ "$(getent passwd 0 | cut -d: -f6)" = /root ] || skip "root's home is not /root"
  local name
  name=.haven-test-$(basename "$P")
  defer "rm -rf /root/$name /root/$name.json"
  printf 'filesystem:\n  home_allow: [{path: ~/%s, write: direct}, ~/%s.json]\n' "$name" "$name" > "$P.pol/root.yaml"
  OUT=$(cd "$P" && env -u HOME timeout 30 "$HAVEN" run --policy "$P.pol/root.yaml" -- sh -c "
    mkdir /root/.scratch-dir && echo scratch-ok; echo kept > /root/$name/state && echo written" 2>&1 </dev/null)
  assert_contains "$OUT" scratch-ok
  assert_contains "$OUT" written
  assert_eq "directory 700 0" "$(home_stat "/root/$name")" "/root/$name"
  assert_eq "regular file 600 0" "$(home_stat "/root/$name.json")" "/root/$name.json"
  assert_eq kept "$(cat "/root/$name/state")"
  [ ! -e /root/.scratch-dir ] || { rmdir /root/.scratch-dir; fail "the scratch home reached /root"; }
}

# Never through a link a run (or anyone) left on the way: a link as the
# parent is not followed, a link at the entry itself is left as it is.
test_home_entries_not_created_through_links() {
  need_haven
  make_project
  local h out
  h=$(mktemp -d "$WORK/home-XXXXXX")
  out=$(mktemp -d "$WORK/outside-XXXXXX")
  ln -s "$out" "$h/.config"
  ln -s "$out/agentd" "$h/.agentd"
  home_agent_policy "$P.pol/agent.yaml"
  OUT=$(cd "$P" && HOME=$h timeout 30 "$HAVEN" run --policy "$P.pol/agent.yaml" -- true 2>&1 </dev/null)
  assert_eq "" "$(ls -A "$out")" "nothing was created through a link"
  assert_contains "$OUT" "filesystem.home_allow \"~/.config/agentc\": cannot create it"
  [ -L "$h/.agentd" ] || fail "the link ~/.agentd was replaced"
  assert_eq "directory 700 0" "$(home_stat "$h/.rwdir")" "the other entries are created"
}

# A home the caller does not own (root with HOME=/home/alice) gets
# nothing: root's files there would lock alice out of them.
test_home_entries_not_created_in_a_home_of_another_user() {
  need_haven
  make_project
  local h
  h=$(mktemp -d "$WORK/home-XXXXXX")
  chown 65534:65534 "$h"
  home_agent_policy "$P.pol/agent.yaml"
  OUT=$(cd "$P" && HOME=$h timeout 30 "$HAVEN" run --policy "$P.pol/agent.yaml" -- true 2>&1 </dev/null)
  assert_contains "$OUT" "haven: the home $h is not owned by uid 0: allowed home paths missing there are not created"
  assert_eq "" "$(ls -A "$h")" "the home of another user"
}

# A HOME that does not exist is never made (as the state directory's
# parent): the run goes on with copy-on-write entries read-only.
test_home_state_missing_home_not_created() {
  need_haven
  make_project
  local home=$WORK/no-home-$$
  printf 'extends: default\nfilesystem:\n  home_allow: [~/.tool]\n' > "$P.pol/p.yaml"
  OUT=$(cd "$P" && HOME=$home XDG_STATE_HOME= timeout 30 "$HAVEN" run --policy "$P.pol/p.yaml" -- true 2>&1)
  assert_eq 0 "$?" "run with a missing HOME ($OUT)"
  [ -e "$home" ] && fail "haven made the missing home $home: $(ls -la "$home")"
  return 0
}
