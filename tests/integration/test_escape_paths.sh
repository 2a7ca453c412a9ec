# Links planted by one run must not be followed by
# the next, and a mask that cannot be applied stops the start.
# Each test plants what a hostile run would (from inside the sandbox where
# it can) and checks what the following run sees.

# host_tmp_marker: a file in the host's /tmp, which the default policy
# replaces with an empty tmpfs: the sandbox sees it only through an escape.
# The links point at /tmp itself, as in the attack: the mount point of a
# bind that follows the link then exists in the sandbox too.
host_tmp_marker() {
  M=hvt-escape-$RANDOM-$RANDOM
  echo host-marker > "/tmp/$M"
  defer "rm -f '/tmp/$M' '/tmp/$M.pwned' '/tmp/$M.new'"
}

test_escape_paths_planted_envrc_link_not_followed() {
  need_haven
  make_project
  host_tmp_marker
  # Run 1 plants .envrc (a protect path, absent at start) as a link.
  haven_in "$P" run -- ln -s /tmp .envrc
  assert_eq 0 "$RC" "run 1 planted the link ($OUT)"
  [ -L "$P/.envrc" ] || fail "the link was not planted"
  # Run 2: its read-only bind of .envrc followed the link and laid the
  # host's /tmp over the sandbox's.
  haven_in "$P" run -- sh -c "cat .envrc/$M 2>&1; cat /tmp/$M 2>&1; echo done"
  assert_eq 0 "$RC" "run 2 ($OUT)"
  case $OUT in *host-marker*) fail "run 2 sees the host's /tmp through .envrc: $OUT" ;; esac
  assert_contains "$OUT" done
  # The link itself is left alone on the host.
  assert_eq /tmp "$(readlink "$P/.envrc")" "link on the host"
}

test_escape_paths_planted_link_to_run_not_followed() {
  need_haven
  make_project
  # /run is an empty tmpfs in the sandbox: a link to it must not bring the
  # host's (docker.sock, the user's runtime directory) back.
  local marker=/run/hvt-escape-$RANDOM
  echo run-marker > "$marker"
  defer "rm -f '$marker'"
  haven_in "$P" run -- ln -s /run .envrc
  assert_eq 0 "$RC" "run 1 ($OUT)"
  haven_in "$P" run -- sh -c "cat .envrc/${marker#/run/} 2>&1; cat $marker 2>&1; echo done"
  case $OUT in *run-marker*) fail "run 2 sees the host's /run: $OUT" ;; esac
  assert_contains "$OUT" done
}

test_escape_paths_git_hooks_link_not_followed() {
  need_haven
  make_project
  host_tmp_marker
  echo 'export A=1' > "$P/.envrc"
  # .envrc exists, so run 1 takes the other route: a new .git whose hooks
  # are a link.
  haven_in "$P" run -- sh -c 'mv .git .git.old && mkdir .git && cp .git.old/config .git/ && ln -s /tmp .git/hooks'
  assert_eq 0 "$RC" "run 1 ($OUT)"
  if [ ! -L "$P/.git/hooks" ]; then
    # haven's post-run git check quarantined run 1's plant; a run whose
    # haven was killed before that check would leave it: lay it by hand,
    # to test what the next run does with it.
    [ ! -e "$P/.git/hooks" ] || fail "run 1's .git/hooks is neither a link nor quarantined"
    ln -s /tmp "$P/.git/hooks"
  fi
  haven_in "$P" run -- sh -c "cat .git/hooks/$M 2>&1; cat /tmp/$M 2>&1; echo x > /tmp/$M.new; echo done"
  case $OUT in *host-marker*) fail "run 2 sees the host's /tmp through .git/hooks: $OUT" ;; esac
  [ ! -e "/tmp/$M.new" ] || fail "run 2 wrote into the host's /tmp"
  assert_contains "$OUT" done
}

test_escape_paths_read_write_glob_link_not_bound() {
  need_haven
  make_project
  host_tmp_marker
  # aider's policy makes "{project}/.aider*" writable; run 1 plants a link
  # matching it (the issue's ".aider.x -> /etc"; /tmp here, to write
  # nothing that matters should it escape).
  haven_in "$P" run --policy aider -- ln -s /tmp .aider.x
  assert_eq 0 "$RC" "run 1 ($OUT)"
  haven_in "$P" run --policy aider -- sh -c "echo pwned > .aider.x/$M.pwned 2>&1; cat /tmp/$M 2>&1; echo done"
  [ ! -e "/tmp/$M.pwned" ] || fail "run 2 wrote into the host's /tmp: $OUT"
  case $OUT in *host-marker*) fail "run 2 sees the host's /tmp: $OUT" ;; esac
  assert_contains "$OUT" "haven: not making $P/.aider.x writable: $P/.aider.x is a symbolic link"
  assert_contains "$OUT" done
}

test_escape_paths_read_only_link_is_an_error() {
  need_haven
  make_project
  host_tmp_marker
  ln -s /tmp "$P/data"
  cat > "$P.pol/ro.yaml" <<EOP
extends: default
filesystem: {read_only: ["{project}/data"]}
EOP
  haven_in "$P" run --policy "$P.pol/ro.yaml" -- cat "data/$M"
  case $OUT in *host-marker*) fail "the link's target was shown: $OUT" ;; esac
  [ "$RC" != 0 ] || fail "ran with a read_only path that is a link: $OUT"
  assert_contains "$OUT" "filesystem.read_only \"{project}/data\": $P/data is a symbolic link"
}

test_escape_paths_landlock_rule_does_not_follow_link() {
  skip_on_runc "Landlock rules come from haven's annotation"
  # Landlock alone (no policy mounts): the write rule names /w, a link to
  # /data, a writable tmpfs.  Following the link would grant writes there.
  mkdir -p "$B/rootfs/ok"
  ln -s /data "$B/rootfs/w"
  cfg "$B" '.root.readonly = false
    | .mounts += [{"destination": "/data", "type": "tmpfs", "source": "tmpfs", "options": ["mode=1777"]}]
    | .annotations["run.haven.landlock"] = "{\"read\":[\"/\"],\"write\":[\"/w\",\"/ok\",\"/dev\"],\"exec\":[\"/\"],\"bestEffort\":false}"'
  args "$B" sh -c 'echo a > /ok/a && echo ok-written; { echo b > /data/b; } 2>/dev/null && echo data-written; echo end'
  run_ctr "$B"
  assert_eq 0 "$RC" "container ($OUT)"
  assert_eq "ok-written
end" "$OUT" "Landlock granted writes through the link /w -> /data"
}

test_escape_paths_vanished_mask_stops_the_start() {
  need_haven
  make_project
  # The policy is compiled while src/deep/.env exists; before the runtime
  # lays the mask, another sandbox renames the parent (here: by hand,
  # between `haven policy compile` and the start of its config).
  local b=$(mktemp -u "$WORK/bundle-vanish-XXXXXX")
  mkdir -p "$b/rootfs"
  (cd "$P" && "$HAVEN" policy compile default -- cat src/moved/.env) > "$b/config.json" \
    || fail "policy compile failed"
  mv "$P/src/deep" "$P/src/moved"
  OUT=$(cd "$P" && timeout -k 5 20 "$RUNTIME" --root "$STATE_ROOT" run --bundle "$b" "$(new_id vanish)" 2>&1 </dev/null)
  RC=$?
  case $OUT in *SECRET=2*) fail "the start went on and the secret was read: $OUT" ;; esac
  [ "$RC" != 0 ] || fail "the start did not fail: $OUT"
  # The first entry to miss it names the path: the pin of its parent.
  assert_contains "$OUT" "$P/src/deep does not exist (moved or removed since the policy was compiled)"
}

test_escape_paths_swapped_mask_path_stops_the_start() {
  need_haven
  make_project
  # As above, but the parent turns into a link to a copy holding the
  # secret: the mask must not follow it, nor let the start go on.
  local b=$(mktemp -u "$WORK/bundle-swap-XXXXXX")
  mkdir -p "$b/rootfs"
  (cd "$P" && "$HAVEN" policy compile default -- cat src/deep/.env) > "$b/config.json" \
    || fail "policy compile failed"
  mv "$P/src/deep" "$P/src/moved"
  ln -s moved "$P/src/deep"
  OUT=$(cd "$P" && timeout -k 5 20 "$RUNTIME" --root "$STATE_ROOT" run --bundle "$b" "$(new_id swap)" 2>&1 </dev/null)
  RC=$?
  case $OUT in *SECRET=2*) fail "the start went on and the secret was read: $OUT" ;; esac
  [ "$RC" != 0 ] || fail "the start did not fail: $OUT"
  assert_contains "$OUT" "crosses a symbolic link"
}

test_escape_paths_home_allow_link_not_bound() {
  need_haven
  make_project
  host_tmp_marker
  # A writable home directory (~/.cache) that a run replaced by a link.
  local home=$(mktemp -u "$WORK/home-XXXXXX")
  mkdir -p "$home"
  ln -s /tmp "$home/.cache"
  OUT=$(cd "$P" && HOME=$home timeout 30 "$HAVEN" run -- sh -c "cat ~/.cache/$M 2>&1; echo x > ~/.cache/$M.pwned; echo done" 2>&1)
  [ ! -e "/tmp/$M.pwned" ] || fail "wrote into the host's /tmp through ~/.cache: $OUT"
  case $OUT in *host-marker*) fail "the host's /tmp shows through ~/.cache: $OUT" ;; esac
  assert_contains "$OUT" "haven: not showing $home/.cache in the sandbox: $home/.cache is a symbolic link"
}

test_escape_paths_block_link_masked_and_crossing_refused() {
  need_haven
  make_project
  host_tmp_marker
  # A blocked name that is a link: the link is masked (reads are empty).
  rm "$P/src/deep/.env"
  ln -s "/tmp/$M" "$P/src/deep/.env"
  haven_in "$P" run -- sh -c 'cat src/deep/.env | wc -c'
  assert_eq 0 "$RC" "run ($OUT)"
  assert_eq 0 "$OUT" "masked link"
  # A blocked path outside the project crossing a link: an error.
  mkdir -p "$WORK/real-$M"
  echo s > "$WORK/real-$M/secret"
  ln -s "real-$M" "$WORK/lnk-$M"
  cat > "$P.pol/b.yaml" <<EOP
extends: default
filesystem: {block: ["$WORK/lnk-$M/secret"]}
EOP
  haven_in "$P" run --policy "$P.pol/b.yaml" -- true
  [ "$RC" != 0 ] || fail "ran although a block path crosses a link: $OUT"
  assert_contains "$OUT" "$WORK/lnk-$M/secret crosses the symbolic link $WORK/lnk-$M; name the path without links"
}

test_escape_paths_concurrent_rename_keeps_secret_hidden() {
  need_haven
  make_project
  # One sandbox renames a parent of a hidden file back and
  # forth while others start.  The walk that finds hidden files (at
  # compile time) and the masks (at mount time) must never miss it: each
  # sandbox makes every directory on the way to a hidden path a mount
  # point of its own, which no rename or rmdir inside it can move.  A
  # start that fails naming the path would be acceptable; a read is not.
  mkdir -p "$P/sub/dir"
  echo "SECRET=race" > "$P/sub/dir/.env"
  local err=$P.renamer i n_ran=0 n_failed=0 seen=
  (cd "$P" && exec timeout 60 "$HAVEN" run -- sh -c 'echo > started; i=0
     while [ ! -e stop ] && [ $i -lt 200000 ]; do
       mv sub sub2 2>/dev/null; mv sub2 sub 2>/dev/null; i=$((i + 1))
     done
     mv sub sub2 2>&1 | head -1 > refused' </dev/null >/dev/null 2>"$err") &
  local rpid=$!
  defer "touch '$P/stop'; kill $rpid 2>/dev/null; wait $rpid 2>/dev/null; [ -d '$P/sub' ] || mv '$P/sub2' '$P/sub'; true"
  for i in $(seq 100); do
    [ -e "$P/started" ] && break
    sleep 0.1
  done
  [ -e "$P/started" ] || fail "the renaming sandbox did not start ($(cat "$err"))"
  for i in $(seq 20); do
    haven_in "$P" run -- sh -c 'cat sub/dir/.env sub2/dir/.env 2>/dev/null; echo end'
    case $OUT in *SECRET=race*) seen="$seen start $i: $OUT;" ;; esac
    if [ "$RC" = 0 ]; then n_ran=$((n_ran + 1)); else n_failed=$((n_failed + 1)); fi
  done
  touch "$P/stop"
  wait "$rpid" 2>/dev/null
  [ -z "$seen" ] || fail "a sandbox started during the renames read the hidden sub/dir/.env:$seen"
  [ -d "$P/sub" ] || mv "$P/sub2" "$P/sub"
  echo "starts: $n_ran ran, $n_failed failed; the renamer's last mv: $(cat "$P/refused" 2>/dev/null)"
  # The renamer could not move the hidden file's parent at all.
  assert_contains "$(cat "$P/refused" 2>/dev/null)" "busy"
  assert_eq 20 "$n_ran" "every start ran (the renames were refused, so none had to fail)"
}

test_escape_paths_unreadable_directory_stops_the_start() {
  need_haven
  make_project
  # The same class without a race: as an ordinary user, run 1
  # makes a parent of a hidden file unreadable (mode 000; the user owns
  # it).  The next run's walk for hidden files could not read it and
  # skipped it: no mask, and run 2 made it readable again and read the
  # secret.  A directory the caller owns and haven cannot read now stops
  # the start, naming it; one of another user (closed to the sandbox as
  # well) is passed over.
  mkdir -p "$P/sub/dir" "$P/theirs"
  echo "SECRET=chmod" > "$P/sub/dir/.env"
  chown -R 65534:65534 "$P"
  chown 0:0 "$P/theirs"
  chmod 700 "$P/theirs"
  local haven
  haven=$(world_readable_copy "$HAVEN")
  as_nobody() {
    OUT=$(cd "$P" && setpriv --reuid=65534 --regid=65534 --clear-groups env -i PATH=/usr/bin:/bin HOME=/nonexistent \
          timeout 30 "$haven" run -- "$@" 2>&1 </dev/null)
    RC=$?
  }
  as_nobody sh -c 'cat sub/dir/.env | wc -c; chmod 000 sub && echo planted'
  assert_eq 0 "$RC" "run 1 ($OUT)"
  assert_eq "0
planted" "$OUT" "run 1"
  as_nobody sh -c 'chmod 755 sub; cat sub/dir/.env; echo end'
  chmod 755 "$P/sub"
  case $OUT in *SECRET=chmod*) fail "run 2 read the hidden sub/dir/.env: $OUT" ;; esac
  [ "$RC" != 0 ] || fail "run 2 started without looking into $P/sub: $OUT"
  assert_contains "$OUT" "filesystem.block: cannot read $P/sub to find the paths the policy names: Permission denied"
  # Readable again: the run starts and the file is hidden; theirs stays
  # unreadable to both, and does not stop it.
  as_nobody sh -c 'cat sub/dir/.env | wc -c; ls theirs 2>/dev/null || echo theirs-closed'
  assert_eq 0 "$RC" "run 3 ($OUT)"
  assert_eq "0
theirs-closed" "$OUT" "run 3"
}
