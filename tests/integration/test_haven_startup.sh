# What `haven run` remembers between runs to start faster must never
# loosen a rule: a stale, planted or forged entry is
# not used, or stops the start.

# A home with copy-on-write entries of the default policy; $STATEDIR is
# the project's state directory once a run has made it.
startup_home() {
  H=$(mktemp -d "$WORK/home-XXXXXX")
  chmod 755 "$H"
  mkdir -p "$H/.cache" "$H/.cargo"
}
startup_state_dir() { ls -d "${1:-$H/.local/state}"/haven/projects/*/ 2>/dev/null | head -1; }
# The verdict file's inode: a run that probed again replaced it.
verdict_inode() { stat -c %i "$STATEDIR/overlay-probe"; }
haven_home_run() { # HOME-relative command; output in $OUT, status in $RC
  OUT=$(cd "$P" && HOME=$H XDG_STATE_HOME=${XSTATE:-} timeout 30 "$HAVEN" run -- sh -c "$1" 2>&1 </dev/null)
  RC=$?
}
# A project and a home, after one run: $STATEDIR is the project's state.
startup_first_run() {
  need_haven
  make_project
  startup_home
  haven_home_run true
  assert_eq 0 "$RC" "first run ($OUT)"
  STATEDIR=$(startup_state_dir)
}
# Prints each overlay mount of the sandbox: device, root in the overlay,
# mount point (a command for haven_home_run).
OVERLAY_MOUNTS='grep " overlay " /proc/self/mountinfo | while read -r id parent dev root point rest; do echo "$dev $root $point"; done'

# The trial overlay mount runs once; later runs of the same boot use its
# verdict, and the copy-on-write rule still holds in them.
test_haven_overlay_probe_remembered() {
  startup_first_run
  [ -f "$STATEDIR/overlay-probe" ] || fail "no remembered verdict in $STATEDIR"
  assert_eq "600 0" "$(stat -c '%a %u' "$STATEDIR/overlay-probe")" "verdict file mode and owner"
  assert_contains "$(cat "$STATEDIR/overlay-probe")" "boot $(cat /proc/sys/kernel/random/boot_id)"
  local ino
  ino=$(verdict_inode)
  haven_home_run 'echo new > ~/.cache/new && cat ~/.cache/new'
  assert_eq 0 "$RC" "second run ($OUT)"
  assert_eq new "$OUT" "the copy-on-write write in the second run"
  assert_eq "$ino" "$(verdict_inode)" "the second run used the verdict (no new trial)"
  [ ! -e "$H/.cache/new" ] || fail "a copy-on-write write reached the real ~/.cache"
  [ -n "$(find "$STATEDIR" -name new -path '*upper*')" ] || fail "the write is not in the upper layer"
}

# A verdict of another boot, a link, a file others can write or one of
# another owner is not used: the run tries the mount again and replaces it.
test_haven_overlay_probe_stale_or_planted_not_used() {
  startup_first_run
  local good case ino
  good=$(cat "$STATEDIR/overlay-probe")
  cp "$STATEDIR/overlay-probe" "$WORK/good-verdict.$$"
  defer "rm -f '$WORK/good-verdict.$$'"
  for case in other-boot link group-writable other-owner; do
    rm -f "$STATEDIR/overlay-probe"
    case $case in
      other-boot) printf '%s\n' "$good" | sed 's/^boot .*/boot 00000000-0000-0000-0000-000000000000/' > "$STATEDIR/overlay-probe" ;;
      link) ln -s "$WORK/good-verdict.$$" "$STATEDIR/overlay-probe" ;;
      group-writable) cp "$WORK/good-verdict.$$" "$STATEDIR/overlay-probe"; chmod 620 "$STATEDIR/overlay-probe" ;;
      other-owner) cp "$WORK/good-verdict.$$" "$STATEDIR/overlay-probe"; chown 65534 "$STATEDIR/overlay-probe" ;;
    esac
    ino=$(stat -c %i "$STATEDIR/overlay-probe")
    haven_home_run true
    assert_eq 0 "$RC" "$case: run ($OUT)"
    [ -f "$STATEDIR/overlay-probe" ] && [ ! -L "$STATEDIR/overlay-probe" ] || fail "$case: no regular verdict file after the run"
    [ "$ino" != "$(verdict_inode)" ] || fail "$case: the verdict was used (not tried again and replaced)"
    assert_eq "600 0" "$(stat -c '%a %u' "$STATEDIR/overlay-probe")" "$case: the new verdict file"
    assert_eq "$good" "$(cat "$STATEDIR/overlay-probe")" "$case: the new verdict"
  done
}

# The state directory on a filesystem that then becomes read-only: the
# old verdict (another mount flag) is not used, the trial fails and the
# entries are read-only; a forged verdict that matches makes the runtime's
# overlay mount fail, which stops the start.  Never a write to the real
# directory.
test_haven_overlay_probe_forged_verdict_fails_closed() {
  need_haven
  make_project
  startup_home
  XSTATE=$(mktemp -d "$WORK/state-XXXXXX")
  mount -t tmpfs -o size=4m,mode=700 haven-test-state "$XSTATE" || fail "mount a tmpfs for the state"
  defer "umount -l '$XSTATE'"
  haven_home_run true
  assert_eq 0 "$RC" "first run ($OUT)"
  STATEDIR=$(startup_state_dir "$XSTATE")
  [ -f "$STATEDIR/overlay-probe" ] || fail "no remembered verdict in $STATEDIR"
  local flags_ro forged
  mount -o remount,ro "$XSTATE" || fail "remount read-only"
  flags_ro=$(python3 -c 'import os, sys; print("%x" % os.statvfs(sys.argv[1]).f_flag)' "$XSTATE")
  # The verdict of the writable mount is not this one's.
  haven_home_run 'echo new > ~/.cache/new 2>/dev/null && echo WROTE; echo ran'
  assert_eq 0 "$RC" "run on the read-only state ($OUT)"
  assert_contains "$OUT" "read-only in this run" "the trial ran and failed"
  assert_not_contains "$OUT" WROTE "a write to a read-only copy-on-write entry"
  [ ! -e "$H/.cache/new" ] || fail "a write reached the real ~/.cache"
  # A forged verdict for exactly this filesystem state.
  forged=$(sed "s/^state \([^ ]*\) .*/state \1 $flags_ro/" "$STATEDIR/overlay-probe")
  mount -o remount,rw "$XSTATE" || fail "remount writable"
  printf '%s\n' "$forged" > "$STATEDIR/overlay-probe"
  mount -o remount,ro "$XSTATE" || fail "remount read-only again"
  haven_home_run 'echo new > ~/.cache/new && echo WROTE; echo ran'
  assert_eq 125 "$RC" "a run with a forged verdict must not start ($OUT)"
  assert_not_contains "$OUT" ran "the command ran"
  [ ! -e "$H/.cache/new" ] || fail "a write reached the real ~/.cache"
}

# bg_haven_bundle ARGS...: start `haven run ARGS -- (a command that marks
# its start and sleeps)` in the background from $P; once the command runs,
# $BUNDLE is that haven's bundle and $BGPID its pid.
bg_haven_bundle() {
  local i
  rm -f "$P/started"
  (cd "$P" && exec "$HAVEN" run "$@" -- sh -c 'touch /etc/haven-startup-test 2>/dev/null && echo WROTE; touch started; sleep 3' \
     > "$P.out" 2>&1 </dev/null) &
  BGPID=$!
  defer "kill $BGPID 2>/dev/null"
  for ((i = 0; i < 100; i++)); do
    [ -e "$P/started" ] && break
    sleep 0.1
  done
  [ -e "$P/started" ] || fail "the command did not start: $(cat "$P.out")"
  BUNDLE=$(ls -d /run/haven-run-"$BGPID".* 2>/dev/null)
  [ -n "$BUNDLE" ] && [ -f "$BUNDLE/owner" ] || fail "no bundle /run/haven-run-$BGPID.* of the running haven"
}

# haven run hands the compiled config to the runtime in memory: its bundle
# holds no config.json while the command runs (nothing to write, read back
# and remove), and the policy still holds; --keep-bundle still writes it.
# (Checked while haven runs: another haven run removes a finished run's
# kept bundle as a leftover.)
test_haven_config_in_memory() {
  need_haven
  make_project
  bg_haven_bundle
  [ ! -e "$BUNDLE/config.json" ] || fail "the running haven's bundle holds a config.json"
  wait "$BGPID"
  assert_eq 0 "$?" "exit code ($(cat "$P.out"))"
  assert_not_contains "$(cat "$P.out")" WROTE "a write to /etc under the default policy"
  [ ! -e /etc/haven-startup-test ] || { rm -f /etc/haven-startup-test; fail "the sandbox wrote /etc"; }
  bg_haven_bundle --keep-bundle
  assert_eq "$P" "$(jq -r --arg p "$P" '.mounts[] | select(.destination == $p) | .source' "$BUNDLE/config.json")" \
    "the kept config.json's project mount"
  defer "rm -rf '$BUNDLE'"
  wait "$BGPID"
}

# Two runs at once in one project: the first holds the project's
# copy-on-write layers until its sandbox is gone; the second gets the
# entries read-only, says so, and runs.  (Two overlays that share an
# upper and a work directory are undefined behaviour for the kernel, and
# made one of the two runs fail in 5 of 40 pairs.)
test_haven_copy_on_write_layers_one_run_at_a_time() {
  need_haven
  make_project
  startup_home
  # The same state directory as haven_home_run's (the suite sets its own).
  (cd "$P" && HOME=$H XDG_STATE_HOME=${XSTATE:-} timeout 60 "$HAVEN" run -- sh -c 'echo one > ~/.cache/one && touch started
      i=0; while [ ! -e go ] && [ $i -lt 500 ]; do sleep 0.1; i=$((i+1)); done; cat ~/.cache/one' \
    > "$WORK/cow-run1.out" 2>&1 </dev/null) &
  local pid1=$! rc1
  wait_file "$P/started"
  haven_home_run 'echo two > ~/.cache/two 2>/dev/null && echo written || echo read-only'
  touch "$P/go"
  wait "$pid1"
  rc1=$?
  assert_eq 0 "$RC" "second run ($OUT)"
  assert_contains "$OUT" "haven: another haven run in this project uses its copy-on-write home state: copy-on-write home_allow entries are read-only in this run"
  assert_contains "$OUT" "read-only"
  assert_not_contains "$OUT" "written"
  [ ! -e "$H/.cache/two" ] || fail "the second run wrote the real ~/.cache"
  assert_eq 0 "$rc1" "first run ($(cat "$WORK/cow-run1.out"))"
  assert_eq one "$(cat "$WORK/cow-run1.out")" "the first run's own write"
  [ ! -e "$H/.cache/one" ] || fail "the first run wrote the real ~/.cache"
  # The first run is over: the next one has the layers, with its write.
  haven_home_run 'cat ~/.cache/one && echo three > ~/.cache/three && echo ok'
  assert_eq 0 "$RC" "third run ($OUT)"
  assert_eq "one
ok" "$OUT" "third run"
}

# The home's copy-on-write directories share one overlay of the home (one
# mount, one sync of the upper layer at the end, instead of one each):
# each is a bind of its own sub-directory of it, and nothing else of the
# home is reachable through them.
test_haven_copy_on_write_directories_share_one_overlay() {
  need_haven
  make_project
  startup_home
  echo secret > "$H/secret-file"
  haven_home_run "$OVERLAY_MOUNTS"'
      cat ~/.cache/../secret-file 2>/dev/null && echo READ-SECRET
      ls -a ~/.cache/.. | tr "\n" " "; echo
      echo new > ~/.cache/new && cat ~/.cache/new'
  assert_eq 0 "$RC" "run ($OUT)"
  local dev_cache dev_cargo
  dev_cache=$(awk -v p="$H/.cache" '$3 == p && $2 == "/.cache" { print $1 }' <<< "$OUT")
  dev_cargo=$(awk -v p="$H/.cargo" '$3 == p && $2 == "/.cargo" { print $1 }' <<< "$OUT")
  [ -n "$dev_cache" ] && [ -n "$dev_cargo" ] || fail "~/.cache and ~/.cargo are not sub-directories of an overlay: $OUT"
  assert_eq "$dev_cache" "$dev_cargo" "one overlay (one device) for both"
  assert_not_contains "$OUT" READ-SECRET "a home file outside the entries, through ~/.cache/.."
  assert_not_contains "$OUT" secret-file "the home's other files, listed through ~/.cache/.."
  assert_contains "$OUT" new "the copy-on-write write"
  [ ! -e "$H/.cache/new" ] || fail "a copy-on-write write reached the real ~/.cache"
  STATEDIR=$(startup_state_dir)
  [ -f "$STATEDIR"/home-layers/*/upper/.cache/new ] || fail "the write is not in the shared upper layer: $(find "$STATEDIR" | head -20)"
}

# A project whose directories had an overlay each (haven before the
# shared one) keeps what its runs wrote: the old upper layer becomes the
# directory's part of the shared one, and its old layers go.
test_haven_copy_on_write_layers_of_before_kept() {
  startup_first_run
  local old="$STATEDIR/home/$(haven_state_name "$H/.cache")"
  mkdir -p "$old/upper/sub" "$old/work/work"
  echo kept > "$old/upper/sub/file"
  chmod -R go-rwx "$STATEDIR/home"
  haven_home_run 'cat ~/.cache/sub/file'
  assert_eq 0 "$RC" "run ($OUT)"
  assert_eq kept "$OUT" "an earlier run's copy-on-write write, in the old layout"
  [ ! -e "$old" ] || fail "the old layers are still there: $(find "$old")"
  [ -f "$STATEDIR"/home-layers/*/upper/.cache/sub/file ] || fail "not moved into the shared upper layer"
  [ ! -e "$H/.cache/sub" ] || fail "the real ~/.cache was written"
}

# What a run left in the shared upper layer where a directory's part
# belongs (a link to /, which an entry of another policy could have made)
# is never followed: the run stops (125), and shows nothing of /.
test_haven_copy_on_write_link_in_shared_layer_not_followed() {
  startup_first_run
  local upper
  upper=$(ls -d "$STATEDIR"/home-layers/*/upper | head -1)
  [ -d "$upper" ] || fail "no shared upper layer in $STATEDIR"
  rm -rf "${upper:?}/.cargo"
  ln -s / "$upper/.cargo"
  haven_home_run 'ls ~/.cargo/etc/passwd && echo SHOWN'
  assert_eq 125 "$RC" "run with a link in the shared layer ($OUT)"
  assert_not_contains "$OUT" SHOWN "the host's / through the planted link"
  assert_contains "$OUT" ".cargo"
}

# A copy-on-write directory on another mount than its home (an overlay of
# the home would show the directory under the mount) keeps an overlay of
# its own, with what the mount holds.
test_haven_copy_on_write_directory_on_own_mount() {
  need_haven
  make_project
  startup_home
  mount -t tmpfs -o size=1m,mode=755 haven-test-cargo "$H/.cargo" || fail "mount a tmpfs on ~/.cargo"
  defer "umount -l '$H/.cargo'"
  echo on-the-mount > "$H/.cargo/here"
  haven_home_run "$OVERLAY_MOUNTS"'
      cat ~/.cargo/here; echo new > ~/.cargo/new && cat ~/.cargo/new'
  assert_eq 0 "$RC" "run ($OUT)"
  assert_contains "$OUT" on-the-mount "the mount's file"
  local dev_cache dev_cargo
  dev_cache=$(awk -v p="$H/.cache" '$3 == p && $2 == "/.cache" { print $1 }' <<< "$OUT")
  dev_cargo=$(awk -v p="$H/.cargo" '$3 == p && $2 == "/" { print $1 }' <<< "$OUT")
  [ -n "$dev_cache" ] && [ -n "$dev_cargo" ] || fail "overlays not as expected: $OUT"
  [ "$dev_cache" != "$dev_cargo" ] || fail "~/.cargo on its own mount shares the home's overlay"
  [ ! -e "$H/.cargo/new" ] || fail "a copy-on-write write reached the real ~/.cargo"
  STATEDIR=$(startup_state_dir)
  [ -f "$STATEDIR"/home/_cargo-*/upper/new ] || fail "the write is not in ~/.cargo's own upper layer: $(find "$STATEDIR" | head -20)"
}
