# The audit trail's chain (runtime/audit/include/trail_chain.h) and
# `haven audit --verify`: runs writing one trail at once lose no record
# and break no link; a changed, removed, inserted or cut line is caught
# on its line; a trail where the sandbox could write it is refused at
# compile; the sandbox can neither read nor write the default trail.
# (haven_in, need_haven, make_project: test_haven.sh.)

# Three runs at once into one trail, each with denied calls recorded by
# its audit listener while the others' sessions write their start and
# exit records: every record there, the chain whole.
test_audit_chain_concurrent_runs() {
  need_haven
  make_project
  local log=$(mktemp -u "$WORK/chain-XXXXXX")/audit.log i
  printf 'extends: default\naudit: {log: %s}\nsyscalls: {deny: [uname]}\n' "$log" > "$P.pol/c.yaml"
  local pids=()
  for i in 1 2 3; do
    (cd "$P" && timeout 60 "$HAVEN" run --policy "$P.pol/c.yaml" -- python3 -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
for i in range(30): libc.syscall(63, 0)' > /dev/null 2>&1) &
    pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i" || fail "a run failed"; done
  haven_in "$WORK" audit --verify --json "$log"
  assert_eq 0 "$RC" "verify: $OUT"
  # Every line a record of the chain; each run's start, 30 denials, exit
  # (and the host's own notes: landlock-unrecorded where audit is off).
  assert_eq "$(wc -l < "$log")" "$(echo "$OUT" | jq .records)" "records: $OUT"
  assert_eq 3 "$(jq -r .run "$log" | sort -u | wc -l)" "runs"
  local run
  for run in $(jq -r .run "$log" | sort -u); do
    assert_eq "1 30 1" "$(jq -r --arg r "$run" 'select(.run == $r) | .event' "$log" | grep -c '^start$') $(
      jq -r --arg r "$run" 'select(.run == $r) | .event' "$log" | grep -c '^denied$') $(
      jq -r --arg r "$run" 'select(.run == $r) | .event' "$log" | grep -c '^exit$')" "run $run's records"
  done
}

# A real trail, then each kind of tampering on a copy: the first problem
# on the right line, exit 1; the untouched trail verifies, exit 0.
test_audit_chain_tamper_caught() {
  need_haven
  make_project
  local log=$(mktemp -u "$WORK/chain-XXXXXX")/audit.log
  printf 'extends: default\naudit: {log: %s}\nsyscalls: {deny: [uname]}\n' "$log" > "$P.pol/t.yaml"
  haven_in "$P" run --policy "$P.pol/t.yaml" -- python3 -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
for i in range(4): libc.syscall(63, 0)'
  assert_eq 0 "$RC" "run: $OUT"
  haven_in "$WORK" audit --verify "$log"
  assert_eq 0 "$RC" "$OUT"
  local n d
  n=$(wc -l < "$log")
  assert_contains "$OUT" "OK: $n records chained (seq 1 to $n"
  # d: the first denial's line (the host may add a note before it).
  d=$(grep -n '"event":"denied"' "$log" | head -1 | cut -d: -f1)
  local t=$WORK/tampered-$$.log
  check_tamper() { # WHAT SED-SCRIPT LINE WORDS
    sed "$2" "$log" > "$t"
    haven_in "$WORK" audit --verify "$t"
    assert_eq 1 "$RC" "$1: $OUT"
    assert_contains "$OUT" "$t:$3: $4" "$1"
  }
  check_tamper "a forged field" "${d}s/\"syscall\":\"uname\"/\"syscall\":\"unamx\"/" $d "changed"
  check_tamper "a removed line" "$((d + 1))d" $((d + 1)) "seq $((d + 2)) after seq $d: 1 record missing"
  check_tamper "an inserted copy" "${d}p" $((d + 1)) "seq $d after seq $d"
  check_tamper "an inserted line" '2i {"event":"exit","status":0}' 2 "not chained"
  # The last line cut short (a writer that died, or a truncation).
  head -c -40 "$log" > "$t"
  haven_in "$WORK" audit --verify "$t"
  assert_eq 1 "$RC" "a cut line: $OUT"
  assert_contains "$OUT" "$t:$n: truncated"
  # The next record keeps the cut bytes and starts a line of its own:
  # the cut line stays the first problem.
  printf 'extends: default\naudit: {log: %s}\n' "$t" > "$P.pol/t2.yaml"
  haven_in "$P" run --policy "$P.pol/t2.yaml" -- true
  haven_in "$WORK" audit --verify "$t"
  assert_eq 1 "$RC" "after a cut line: $OUT"
  assert_contains "$OUT" "$t:$n: not a JSON record"
  haven_in "$WORK" audit --verify --json "$WORK/none-$$.log"
  assert_eq 2 "$RC" "a missing trail: $OUT"
}

# audit.log where the sandbox can write it: refused at compile, naming
# the policy file's line; outside (a read-only project) accepted.
test_audit_chain_log_sandbox_can_write_refused() {
  need_haven
  make_project
  mkdir -p "$P.rw" "$P.home/.cache"
  printf 'extends: default\naudit:\n  log: %s/.haven/audit.log\n' "$P" > "$P.pol/in-project.yaml"
  printf 'extends: default\nfilesystem: {read_write: ["%s"]}\naudit: {log: %s/sub/a.log}\n' "$P.rw" "$P.rw" > "$P.pol/rw.yaml"
  printf 'extends: default\nfilesystem:\n  hide_home: true\n  home_allow:\n    - {path: ~/.cache, write: direct}\naudit: {log: ~/.cache/a.log}\n' \
    > "$P.pol/home.yaml"
  printf 'extends: default\nfilesystem: {project_writable: false}\naudit: {log: %s/a.log}\n' "$P" > "$P.pol/ro.yaml"
  OUT=$(cd "$P" && HOME=$P.home timeout 30 "$HAVEN" policy compile "$P.pol/in-project.yaml" 2>&1 >/dev/null); RC=$?
  assert_eq 125 "$RC" "$OUT"
  assert_contains "$OUT" "$P.pol/in-project.yaml:3:8: audit.log $P/.haven/audit.log is in what the sandbox can write (the project)"
  OUT=$(cd "$P" && HOME=$P.home timeout 30 "$HAVEN" policy compile "$P.pol/rw.yaml" 2>&1 >/dev/null); RC=$?
  assert_eq 125 "$RC" "$OUT"
  assert_contains "$OUT" "rw.yaml:3:14: audit.log $P.rw/sub/a.log is in what the sandbox can write (filesystem.read_write)"
  OUT=$(cd "$P" && HOME=$P.home timeout 30 "$HAVEN" policy compile "$P.pol/home.yaml" 2>&1 >/dev/null); RC=$?
  assert_eq 125 "$RC" "$OUT"
  assert_contains "$OUT" "home.yaml:6:14: audit.log ~/.cache/a.log is in what the sandbox can write (a home_allow entry with write: direct)"
  # haven run refuses it too, before anything is written.
  OUT=$(cd "$P" && HOME=$P.home timeout 30 "$HAVEN" run --policy "$P.pol/in-project.yaml" -- true 2>&1); RC=$?
  assert_eq 125 "$RC" "$OUT"
  [ ! -e "$P/.haven" ] || fail "a trail was made in the project"
  OUT=$(cd "$P" && HOME=$P.home timeout 30 "$HAVEN" policy compile "$P.pol/ro.yaml" 2>&1 >/dev/null); RC=$?
  assert_eq 0 "$RC" "a read-only project: $OUT"
}

# Under claude-code (its trail: ~/.local/state/haven/audit.log), with
# namespaces and with --isolation landlock: the sandbox can neither read
# the trail nor write it, and the trail it could not touch verifies.
# The home is outside /tmp (claude-code's tmpfs would hide it anyway).
test_audit_chain_sandbox_cannot_reach_trail() {
  need_haven
  # A project with nothing claude-code hides or protects in it (Landlock
  # could only refuse the run).
  P=$(mktemp -d "$WORK/plain-XXXXXX")
  mkdir -p "$P.pol"
  local h
  h=$(mktemp -d /home/hvt-trail-XXXXXX)
  defer "rm -rf '$h'"
  local trail=$h/.local/state/haven/audit.log
  printf 'extends: claude-code\nbest_effort: [private_tmp, network_ports]\n' > "$P.pol/ll.yaml"
  local probe="cat '$trail' > /dev/null 2>&1 && echo read-ok; echo forged >> '$trail' 2>/dev/null && echo write-ok;
               ls '$h/.local/state/haven' > /dev/null 2>&1 && touch '$h/.local/state/haven/x' 2>/dev/null && echo dir-write-ok;
               echo probed"
  local iso
  for iso in namespaces landlock; do
    local pol=claude-code
    [ $iso = landlock ] && pol=$P.pol/ll.yaml
    # Twice: the second run finds the first's trail there.
    local k
    for k in 1 2; do
      OUT=$(cd "$P" && HOME=$h timeout 60 "$HAVEN" run --isolation $iso --policy "$pol" -- sh -c "$probe" 2>&1 </dev/null)
      assert_contains "$OUT" "probed" "$iso: $OUT"
      assert_not_contains "$OUT" "read-ok" "$iso: the sandbox read the trail"
      assert_not_contains "$OUT" "write-ok" "$iso: the sandbox wrote the trail"
    done
  done
  [ ! -e "$h/.local/state/haven/x" ] || fail "the sandbox wrote in the trail's directory"
  OUT=$(HOME=$h timeout 30 "$HAVEN" audit --verify 2>&1); RC=$?
  assert_eq 0 "$RC" "$OUT"
  ! grep -qx forged "$trail" || fail "the sandbox's line is in the trail"
  assert_eq 4 "$(jq -r 'select(.event == "start") | .run' "$trail" | sort -u | wc -l)" "the four runs' starts"
}
