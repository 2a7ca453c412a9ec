# Landlock's refusals in haven run's audit trail (runtime/monitor/landlock_audit.h).
# Landlock logs only while the kernel's audit is on; haven never turns it
# on, so these tests do for their run (and put back what they found:
# audit_enabled.py).  While it is on, the kernel also prints its records
# to its log (rate-limited).

ll_audit_on() {
  need_haven
  local was
  was=$(python3 "$here/audit_enabled.py" get 2>/dev/null) || skip "cannot read the kernel's audit status"
  # Landlock logs to the audit subsystem from ABI 7 (Linux 6.15) on.
  local abi
  abi=$(python3 -c 'import ctypes; print(ctypes.CDLL(None, use_errno=True).syscall(444, None, 0, 1))')
  [ "$abi" -ge 7 ] || skip "Landlock ABI $abi has no audit records"
  if [ "$was" = 0 ]; then
    python3 "$here/audit_enabled.py" set 1 || skip "cannot enable the kernel's audit"
    defer "python3 '$here/audit_enabled.py' set 0"
  fi
}

# ll_policy NAME LOG: a policy that allows python3 alone, with a trail.
ll_policy() {
  printf 'extends: default\nprocess:\n  allow_exec: [python3]\naudit:\n  log: %s\n' "$2" > "$P.pol/$1.yaml"
}

test_landlock_audit_records_refused_exec_and_write() {
  ll_audit_on
  make_project
  local log=$(mktemp -u "$WORK/audit-XXXXXX")/audit.log
  # Another user's home is hidden under a writable tmpfs that Landlock
  # does not let the sandbox write.
  local other=$(mktemp -d /home/hv-ll-XXXXXX)
  defer "rmdir '$other'"
  ll_policy ll "$log"
  haven_in "$P" run --policy "$P.pol/ll.yaml" -- python3 -c '
import os, subprocess, sys
try:
    subprocess.run(["/usr/bin/id"])
except PermissionError as e: print("exec", e.strerror, flush=True)
try:
    open(sys.argv[1] + "/x", "w")
except PermissionError as e: print("write", e.strerror, flush=True)
' "$other"
  assert_eq 0 "$RC" "exit status ($OUT)"
  assert_contains "$OUT" "exec Permission denied"
  assert_contains "$OUT" "write Permission denied"
  assert_eq 1 "$(jq -c 'select(.event == "landlock-denied" and .access == "fs.execute" and .path == "/usr/bin/id"
      and .rule == "process.allow_exec" and .syscall == "execve" and .pid > 0 and .comm == "python3")' "$log" | wc -l)" \
    "one record of the refused exec: $(cat "$log")"
  # A file created: Landlock names the directory it would be made in.
  assert_eq 1 "$(jq -c --arg d "$other" 'select(.event == "landlock-denied" and .access == "fs.make_reg"
      and .path == $d and .rule == "filesystem.read_write")' "$log" | wc -l)" \
    "one record of the refused write: $(cat "$log")"
  assert_eq 2 "$(jq -c 'select(.event == "landlock-denied")' "$log" | wc -l)" "Landlock records: $(cat "$log")"
  # The reader heard the kernel: nothing says refusals went unrecorded.
  assert_eq 0 "$(jq -c 'select(.event == "landlock-unrecorded")' "$log" | wc -l)" "trail: $(cat "$log")"
  # They come before the exit record.
  assert_eq exit "$(tail -n 1 "$log" | jq -r .event)" "last record"
}

# Refused execs of junk (50 programs, then 100 repeats of one)
# in the same second, then the one that matters (then 200 repeats more): it is recorded (the old
# limit, 20 a second, left it out), and the repeats are one record and
# counts by path.  Paced (1 ms apart), so that the kernel's own audit
# backlog (64 records by default; haven leaves it as it is) keeps up: what
# it loses under a flood is only said in the trail ("kernel_lost").
test_landlock_audit_new_path_survives_junk() {
  ll_audit_on
  make_project
  local log=$(mktemp -u "$WORK/audit-XXXXXX")/audit.log
  ll_policy junk "$log"
  haven_in "$P" run --policy "$P.pol/junk.yaml" -- python3 -c '
import os, time
progs = sorted(os.path.join("/usr/bin", n) for n in os.listdir("/usr/bin")
               if n not in ("whoami", "id") and not n.startswith(("python", "ld"))
               and os.access(os.path.join("/usr/bin", n), os.X_OK))[:50]
def refused(p):
    time.sleep(0.001)
    try: os.execv(p, [p])
    except PermissionError: return 1
    except OSError: return 0
    return 0
t = time.monotonic()
n = sum(refused(p) for p in progs) + sum(refused("/usr/bin/id") for _ in range(100))
m = refused("/usr/bin/whoami")
print("the one that matters after", round(time.monotonic() - t, 2), "s")
n += sum(refused("/usr/bin/id") for _ in range(200))
time.sleep(0.3)
print("junk", n, "matters", m)
'
  assert_eq 0 "$RC" "exit status ($OUT)"
  assert_contains "$OUT" "matters 1"
  local lost
  lost=$(jq -s '[.[] | select(.event == "denials-suppressed") | .kernel_lost // 0] | add // 0' "$log")
  [ "$lost" = 0 ] || skip "the kernel's audit lost $lost records meanwhile (the trail said so)"
  assert_eq 1 "$(jq -c 'select(.event == "landlock-denied" and .path == "/usr/bin/whoami")' "$log" | wc -l)" \
    "the one that matters: $(grep -v landlock-denied "$log" | tail -5)"
  assert_eq 1 "$(jq -c 'select(.event == "landlock-denied" and .path == "/usr/bin/id")' "$log" | wc -l)" "the repeated one"
  assert_eq 299 "$(jq -s '[.[] | select(.event == "denials-suppressed" and .kind == "landlock") | .repeated["fs.execute /usr/bin/id"] // 0] | add // 0' "$log")" \
    "repeats counted"
}

test_landlock_audit_keeps_other_sandboxes_out() {
  ll_audit_on
  make_project
  local log1=$(mktemp -u "$WORK/audit-XXXXXX")/audit.log log2=$(mktemp -u "$WORK/audit-XXXXXX")/audit.log
  ll_policy one "$log1"
  ll_policy two "$log2"
  # Both refuse execs over the same two seconds, each its own program.
  local loop='
import os, sys, time
end = time.time() + 2
while time.time() < end:
    try: os.execv(sys.argv[1], [sys.argv[1]])
    except PermissionError: pass
    time.sleep(0.02)
'
  (cd "$P" && timeout 30 "$HAVEN" run --policy "$P.pol/one.yaml" -- python3 -c "$loop" /usr/bin/id >/dev/null 2>&1) &
  local first=$!
  haven_in "$P" run --policy "$P.pol/two.yaml" -- python3 -c "$loop" /usr/bin/whoami
  wait "$first"
  assert_eq 0 "$RC" "second sandbox ($OUT)"
  assert_eq "/usr/bin/id" "$(jq -r 'select(.event == "landlock-denied") | .path' "$log1" | sort -u)" \
    "first trail: $(cat "$log1")"
  assert_eq "/usr/bin/whoami" "$(jq -r 'select(.event == "landlock-denied") | .path' "$log2" | sort -u)" \
    "second trail: $(cat "$log2")"
}

test_landlock_audit_flood_stays_bounded() {
  ll_audit_on
  make_project
  local log=$(mktemp -u "$WORK/audit-XXXXXX")/audit.log
  ll_policy flood "$log"
  # 10000 refused execs of many different programs (no two alike in a row).
  haven_in "$P" run --policy "$P.pol/flood.yaml" -- python3 -c '
import os, time
progs = sorted(os.path.join("/usr/bin", n) for n in os.listdir("/usr/bin")
               if not n.startswith(("python", "ld")) and os.access(os.path.join("/usr/bin", n), os.X_OK))
t = time.time()
refused = 0
for i in range(10000):
    p = progs[i % len(progs)]
    try: os.execv(p, [p])
    except PermissionError: refused += 1
    except OSError: pass
print("refused", refused, "in", round(time.time() - t, 1))
'
  assert_eq 0 "$RC" "exit status ($OUT)"
  local refused secs records suppressed
  refused=$(sed -n 's/^refused \([0-9]*\) in .*/\1/p' <<< "$OUT")
  [ "${refused:-0}" -ge 9000 ] || fail "the flood did not happen: $OUT"
  records=$(jq -c 'select(.event == "landlock-denied")' "$log" | wc -l)
  secs=$(jq -r 'select(.event == "exit") | .seconds | ceil' "$log")
  # One record per access and path (a new path is always
  # recorded, repeats are counted): at most one per program tried.
  local distinct
  distinct=$(jq -s -c 'map(select(.event == "landlock-denied") | [.access, .path]) | unique | length' "$log")
  [ "$records" -ge 1 ] || fail "no Landlock record: $(head -c 2000 "$log")"
  assert_eq "$records" "$distinct" "records of distinct accesses and paths"
  [ "$records" -le 4096 ] || fail "$records records: more than the limiter remembers"
  suppressed=$(jq -s 'map(select(.event == "denials-suppressed" and .kind == "landlock") | .count) | add // 0' "$log")
  [ "$suppressed" -ge 1 ] || fail "no summary of what was left out: $(tail -c 2000 "$log")"
  # A record per distinct path, a summary a second: bounded by both.
  [ "$(stat -c %s "$log")" -le $((records * 600 + 200000)) ] || fail "trail grew to $(stat -c %s "$log") bytes for $records records"
}

test_landlock_audit_off_says_so() {
  # With the kernel's audit off, Landlock logs nothing: the trail says
  # that its refusals are not recorded, and haven leaves audit off.
  need_haven
  [ "$(python3 "$here/audit_enabled.py" get 2>/dev/null)" = 0 ] || skip "the kernel's audit is on here"
  make_project
  local log=$(mktemp -u "$WORK/audit-XXXXXX")/audit.log
  ll_policy off "$log"
  haven_in "$P" run --policy "$P.pol/off.yaml" -- python3 -c '
import os
try: os.execv("/usr/bin/id", ["id"])
except PermissionError: print("refused")'
  assert_contains "$OUT" "refused"
  assert_eq 1 "$(jq -c 'select(.event == "landlock-unrecorded" and (.reason | test("audit is disabled")))' "$log" | wc -l)" \
    "trail: $(cat "$log")"
  assert_eq 0 "$(jq -c 'select(.event == "landlock-denied")' "$log" | wc -l)" "records"
  assert_eq 0 "$(python3 "$here/audit_enabled.py" get)" "the kernel's audit after the run"
}

# haven in a network namespace the kernel's audit does not send to (`ip
# netns exec` of one this test makes): its reader joins, hears nothing,
# not even the record of its own joining, and the trail says so once,
# rather than missing every refusal in silence.  A run over a second
# says it from the loop's timer (about a second after the join, while the
# sandbox runs); a shorter one at its end.
test_landlock_audit_other_netns_says_so() {
  ll_audit_on
  command -v ip > /dev/null || skip "ip missing (Debian package iproute2)"
  make_project
  local ns=$CTR_PREFIX-llns-$RANDOM log=$(mktemp -u "$WORK/audit-XXXXXX")/audit.log
  ip netns add "$ns" || fail "ip netns add $ns"
  defer "ip netns del $ns"
  ll_policy ns "$log"
  local cmd='
import os, subprocess, sys, time
try: subprocess.run(["/usr/bin/id"])
except PermissionError: print("refused", flush=True)
time.sleep(float(sys.argv[1]))'
  local n gap
  for n in 2 0; do
    : > "$log"
    OUT=$(cd "$P" && timeout 30 ip netns exec "$ns" "$HAVEN" run --policy "$P.pol/ns.yaml" -- python3 -c "$cmd" "$n" 2>&1 </dev/null)
    assert_contains "$OUT" "refused"
    assert_eq 1 "$(jq -c 'select(.event == "landlock-unrecorded" and .reason == "the kernel'"'"'s audit sends its records to another network namespace than haven'"'"'s (haven runs in one of its own, e.g. under `ip netns exec`): haven heard nothing from it, not even the record of its own joining")' "$log" | wc -l)" \
      "sleep $n: one landlock-unrecorded: $(cat "$log")"
    assert_eq 0 "$(jq -c 'select(.event == "landlock-denied")' "$log" | wc -l)" "sleep $n: records"
    assert_eq exit "$(tail -n 1 "$log" | jq -r .event)" "sleep $n: last record"
    [ "$n" = 0 ] && break
    # The long run's record came from the timer, while the sandbox
    # slept: well before its end.
    gap=$(python3 -c '
import json, sys, datetime
t = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    t[r["event"]] = datetime.datetime.fromisoformat(r["time"][:26])
print((t["exit"] - t["landlock-unrecorded"]).total_seconds() >= 0.7)' "$log")
    assert_eq True "$gap" "the record at least 0.7 s before the end: $(cat "$log")"
  done
}
