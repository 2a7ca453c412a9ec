# Legible refusals (runtime/audit/include/denial_explain.h) and `haven
# why` in the sandbox (cli/why_cmd.c, runtime/audit/include/denial_view.h):
# every kind of refusal fails at once, its record says the rule that
# refused it and the policy line that would allow it, and a program in
# the same sandbox reads them back, from a view it cannot write.
# haven runs in the machine's own network namespace (Landlock's records
# come through the kernel's audit, which only the initial one reads), and
# nothing the test does leaves the sandbox: the refused name never
# reaches an upstream (haven's resolver answers it), the refused connect
# to 203.0.113.200 (TEST-NET-3) never passes the sandbox's egress table.

# The client, in the sandbox: each refusal timed ("LABEL RESULT ms N"),
# then dig's answer for the refused name (its EDE line), then haven why.
WHY_CLIENT='
import errno, os, socket, subprocess, sys, time
def timed(label, f):
    t = time.monotonic()
    try:
        r = f()
    except socket.gaierror as e:
        r = "gaierror %d" % e.errno
    except OSError as e:
        r = "%s %s" % (type(e).__name__, errno.errorcode.get(e.errno, e.errno))
    print(label, r, "ms %d" % ((time.monotonic() - t) * 1000), flush=True)
def connect():
    socket.create_connection((sys.argv[2], 443), timeout=10).close()
    return "connected"
def write(path):
    open(path, "w").close()
    return "written"
timed("name", lambda: socket.getaddrinfo("evil.example", 443)[0][4][0])
timed("connect", connect)
timed("exec", lambda: subprocess.run(["/usr/bin/id"]).returncode)
timed("write", lambda: write(sys.argv[1] + "/x"))
timed("rofs", lambda: write("/opt/hv-why-x"))
timed("secret", lambda: open(os.path.expanduser("~/.ssh/id_rsa")).read())
if sys.argv[3] == "dig":
    out = subprocess.run(["dig", "+tries=1", "+time=3", "evil.example"], capture_output=True, text=True).stdout
    print("\n".join("dig: " + l for l in out.splitlines() if "EDE" in l or "status:" in l), flush=True)
# Landlock records come through the kernel audit: a moment for them.
time.sleep(0.5)
print(subprocess.run(["haven", "why", "-n", "50"], capture_output=True, text=True).stdout, flush=True)
for l in subprocess.run(["haven", "why", "--json", "-n", "50"], capture_output=True, text=True).stdout.splitlines():
    print("json:", l, flush=True)
print(subprocess.run(["haven", "why", os.path.expanduser("~/.ssh/id_rsa"), "/opt/hv-why-x"],
                     capture_output=True, text=True).stdout, flush=True)
for p in ["/run/haven/why/denials.jsonl", "/run/haven/why/new", "/run/haven/bin/haven"]:
    timed("viewwrite " + p, lambda: write(p))
'

# why_policy NAME LOG: default with an allowlist, python3 and dig alone
# executable, and a trail.
why_policy() {
  printf 'name: %s\nextends: default\nnetwork: {allow: [allowed.example]}\nprocess: {allow_exec: [python3, dig]}\naudit: {log: %s}\n' \
    "$1" "$2" > "$P.pol/$1.yaml"
}

# why_fast OUT LABEL: LABEL's line says it failed within 2 s.
why_fast() {
  local ms
  ms=$(echo "$1" | sed -n "s/^$2 .* ms //p")
  [ -n "$ms" ] && [ "$ms" -lt 2000 ] || fail "$2: took ${ms:-?} ms ($(echo "$1" | grep "^$2 "))"
}

# why_record TRAIL VIEW JQ_FILTER WHAT: a record matches in the trail, and
# its copy in the view.
why_record() {
  local f
  for f in "$1" "$2"; do
    [ "$(jq -c "select($3)" "$f" | wc -l)" -ge 1 ] || fail "$4: none in $f: $(cat "$f")"
  done
}

test_why_lists_each_refusal() {
  command -v dig > /dev/null || skip "dig missing (Debian package dnsutils)"
  ll_audit_on
  [ -x /usr/bin/pasta ] || skip "pasta missing (Debian package passt)"
  command -v nft > /dev/null || skip "nft missing (Debian package nftables)"
  make_project
  local log=$WORK/why-trail-$$.jsonl json=$WORK/why-view-$$.jsonl other
  # Another user's home: hidden under a writable tmpfs that Landlock
  # does not let the sandbox write (a refused write Landlock records).
  other=$(mktemp -d /home/hv-why-XXXXXX)
  defer "rmdir '$other'"
  why_policy why "$log"
  local out err=$PWD/why.err
  out=$(cd "$P" && timeout -k 2 60 "$HAVEN" run --policy "$P.pol/why.yaml" -- \
        python3 -c "$WHY_CLIENT" "$other" 203.0.113.200 dig 2> "$err")
  echo "$out"
  cat "$err"
  # Each refusal fails at once.
  assert_contains "$out" "name gaierror $(python3 -c 'import socket; print(socket.EAI_NONAME)')" "the refused name"
  assert_contains "$out" "connect ConnectionRefusedError ECONNREFUSED" "the refused connect"
  assert_contains "$out" "exec PermissionError EACCES" "the refused exec"
  assert_contains "$out" "write PermissionError EACCES" "the refused write"
  assert_contains "$out" "rofs OSError EROFS" "the write to a read-only mount"
  assert_contains "$out" "secret FileNotFoundError ENOENT" "the hidden secret"
  local l
  for l in name connect exec write rofs secret; do why_fast "$out" "$l"; done
  # A program in the sandbox sees the resolver's Extended DNS Error.
  assert_contains "$out" "dig: ;; ->>HEADER<<- opcode: QUERY, status: NXDOMAIN" "dig's status"
  assert_contains "$out" 'dig: ; EDE: 15 (Blocked): (haven egress policy "why": evil.example (type 1): not in the policy; allow it with network: {allow: [evil.example]})' \
    "dig's EDE line"
  # haven why lists each refusal with its rule and the line that allows it.
  assert_contains "$out" "- refused: look up the name evil.example"
  # Said once, though refused for A and AAAA, and for dig again.
  assert_eq 1 "$(echo "$out" | grep -c -- '- refused: look up the name evil.example')" "the name's entries"
  assert_contains "$out" "  allow: network: {allow: [evil.example]}"
  assert_contains "$out" "- refused: connect to 203.0.113.200:443 (tcp)"
  assert_contains "$out" '  allow: network: {allow: ["203.0.113.200:443"]}'
  assert_contains "$out" "- refused: execute /usr/bin/id by python3 (Landlock: fs.execute)"
  assert_contains "$out" "  allow: process: {allow_exec: [/usr/bin/id]}"
  assert_contains "$out" "- refused: write $other by python3 (Landlock: fs.make_reg)"
  assert_contains "$out" "  allow: filesystem: {read_write: [$other]}"
  assert_contains "$out" "extends: why"
  # ... and, asked, what keeps a secret hidden and a path read-only.
  assert_contains "$out" "  rule:  filesystem.block: ~/.ssh"
  assert_contains "$out" "  allow: no policy line should: ~/.ssh/id_rsa is a secret this policy hides"
  assert_contains "$out" "/opt/hv-why-x: read-only in this sandbox"
  assert_contains "$out" "  allow: filesystem: {read_write: [/opt/hv-why-x]}"
  # The view is read-only in the sandbox, its binary too.
  assert_contains "$out" "viewwrite /run/haven/why/denials.jsonl OSError EROFS"
  assert_contains "$out" "viewwrite /run/haven/why/new OSError EROFS"
  assert_contains "$out" "viewwrite /run/haven/bin/haven OSError EROFS"
  # The records in the trail and in the view, with their rule and allow.
  echo "$out" | sed -n 's/^json: //p' > view.jsonl
  assert_eq 0 "$(jq -c 'select(.rule == null or .allow == null)' view.jsonl | wc -l)" "records without rule or allow: $(cat view.jsonl)"
  why_record "$log" view.jsonl '.event == "dns-refused" and .name == "evil.example" and .rule == "network.allow"
    and .allow == "network: {allow: [evil.example]}"' "the dns-refused record"
  why_record "$log" view.jsonl '.event == "net-denied" and .destination == "203.0.113.200" and .rule == "network.allow"
    and .allow == "network: {allow: [\"203.0.113.200:443\"]}"' "the net-denied record"
  why_record "$log" view.jsonl '.event == "landlock-denied" and .access == "fs.execute" and .path == "/usr/bin/id"
    and .rule == "process.allow_exec" and .allow == "process: {allow_exec: [/usr/bin/id]}"' "the exec record"
  why_record "$log" view.jsonl ".event == \"landlock-denied\" and .access == \"fs.make_reg\" and .path == \"$other\"
    and .rule == \"filesystem.read_write\" and .allow == \"filesystem: {read_write: [$other]}\"" "the write record"
}

# Under network none (default's): a name, a connect, an exec and a write
# fail at once too (no resolver: names come from /etc/hosts; no route but
# loopback; Landlock and the read-only root as under an allowlist).
test_why_fail_at_once_offline() {
  need_haven
  make_project
  printf 'name: why-offline\nextends: default\nprocess: {allow_exec: [python3]}\n' > "$P.pol/off.yaml"
  local out
  out=$(cd "$P" && timeout -k 2 30 "$HAVEN" run --policy "$P.pol/off.yaml" -- python3 -c '
import socket, subprocess, time
def write():
    open("/opt/hv-why-offline", "w")
for label, f in [("name", lambda: socket.getaddrinfo("evil.example", 443)),
                 ("connect", lambda: socket.create_connection(("203.0.113.200", 443), timeout=10)),
                 ("exec", lambda: subprocess.run(["/usr/bin/id"])),
                 ("write", write)]:
    t = time.monotonic()
    try:
        f()
        r = "ok"
    except OSError as e:
        r = type(e).__name__
    print(label, r, "ms %d" % ((time.monotonic() - t) * 1000))
' 2>&1)
  echo "$out"
  assert_contains "$out" "name gaierror" "the name under none"
  assert_contains "$out" "connect OSError" "the connect under none"
  assert_contains "$out" "exec PermissionError" "the exec under none"
  assert_contains "$out" "write OSError" "the write under none"
  local l
  for l in name connect exec write; do why_fast "$out" "$l"; done
}

# Each run sees its own denials only: two runs of one policy and trail at
# once, one refused ptrace; the other's view stays empty.
test_why_own_run_only() {
  need_haven
  make_project
  local log=$WORK/why-two-$$.jsonl qout=$PWD/quiet.out out
  printf 'name: why-two\nextends: default\naudit: {log: %s}\n' "$log" > "$P.pol/two.yaml"
  (cd "$P" && timeout -k 2 30 "$HAVEN" run --policy "$P.pol/two.yaml" -- python3 -c '
import subprocess, time
time.sleep(1.5)
print(subprocess.run(["haven", "why", "--json"], capture_output=True, text=True).stdout, end="")
print("quiet done")' > "$qout" 2> "$qout.err") &
  local quiet=$!
  out=$(cd "$P" && timeout -k 2 30 "$HAVEN" run --policy "$P.pol/two.yaml" -- python3 -c '
import ctypes, subprocess, time
ctypes.CDLL(None).ptrace(0, 0, 0, 0)
time.sleep(0.2)
print(subprocess.run(["haven", "why"], capture_output=True, text=True).stdout)' 2>&1)
  wait "$quiet"
  echo "$out"
  cat "$qout"
  assert_contains "$out" "- refused: the system call ptrace by python3"
  assert_contains "$out" "  allow: syscalls: {allow: [ptrace]}"
  assert_eq "quiet done" "$(cat "$qout")" "the other run's view"
  # Both ran at once under one trail: the ptrace is in it.
  [ "$(jq -c 'select(.event == "denied" and .syscall == "ptrace")' "$log" | wc -l)" -ge 1 ] || fail "no record: $(cat "$log")"
}

# Outside a sandbox haven why says where to look instead.
test_why_outside_a_sandbox() {
  need_haven
  local out rc
  out=$(HAVEN_WHY_DIR=/nonexistent-hv-why "$HAVEN" why 2>&1)
  rc=$?
  assert_eq 1 "$rc" "exit status ($out)"
  assert_contains "$out" "haven why: not inside a haven sandbox"
  assert_contains "$out" "haven audit"
  out=$("$HAVEN" why -n 0 2>&1)
  assert_eq 2 "$?" "exit status of a bad -n ($out)"
}

# Without namespaces (--isolation landlock): the run's audit listener
# records the refused system call (rule, allow), haven why reads the view
# through $HAVEN_WHY_DIR, which Landlock leaves read-only.
test_why_without_namespaces() {
  need_haven
  local log=$WORK/why-direct-$$.jsonl out
  # test_direct.sh's project: no .env or .git (refused or protected there).
  direct_project root "$(printf 'best_effort: [private_tmp]\naudit: {log: %s}' "$log")"
  out=$(as_user root "$HAVEN" run --isolation landlock --policy "$P.pol/p.yaml" -- python3 -c '
import ctypes, os, subprocess, time
t = time.monotonic()
r = ctypes.CDLL(None, use_errno=True).ptrace(0, 0, 0, 0)
print("ptrace", r, ctypes.get_errno(), "ms %d" % ((time.monotonic() - t) * 1000), flush=True)
print(subprocess.run(["haven", "why"], capture_output=True, text=True).stdout, flush=True)
print(subprocess.run(["haven", "why", os.path.expanduser("~/.ssh/id_rsa")], capture_output=True, text=True).stdout)
try:
    open(os.environ["HAVEN_WHY_DIR"] + "/denials.jsonl", "a").write("forged\n")
    print("view written")
except OSError as e:
    print("view", e.strerror)
' 2>&1)
  echo "$out"
  assert_contains "$out" "ptrace -1 1 ms" "ptrace refused EPERM"
  why_fast "$out" ptrace
  assert_contains "$out" "- refused: the system call ptrace by python3"
  assert_contains "$out" "  rule:  syscalls.profile: agent"
  assert_contains "$out" "  allow: syscalls: {allow: [ptrace]}"
  assert_contains "$out" "  rule:  filesystem.block: ~/.ssh"
  assert_contains "$out" "view Permission denied"
  [ "$(jq -c 'select(.event == "denied" and .syscall == "ptrace" and .allow == "syscalls: {allow: [ptrace]}")' "$log" | wc -l)" -eq 1 ] \
    || fail "the trail's record: $(cat "$log")"
}

# An engine's container: its config is its user's to write, so a
# run.haven.denials annotation there names no view (the monitor writes
# as root); its denial records still say their rule and allow line.
test_why_engine_annotation_names_no_view() {
  skip_on_runc "haven's audit monitor"
  local trail=$WORK/why-engine-$RANDOM/c.jsonl victim=$WORK/why-victim-$RANDOM
  mkdir -p "$victim"
  chmod 700 "$victim"
  cfg "$B" '.annotations["run.haven.audit"] = $t | .annotations["run.haven.denials"] = $d | .root.readonly = false
            | .linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", listenerMetadata: "why-test",
                                syscalls: [{names: ["chroot"], action: "SCMP_ACT_NOTIFY"}]}' \
    --arg t "$trail" --arg d "{\"view\": \"$victim\"}"
  args "$B" sh -c 'chroot / true; echo rc=$?'
  run_ctr "$B"
  assert_contains "$OUT" "rc=1" "chroot refused"
  local i
  for i in $(seq 50); do grep -q '"chroot"' "$trail" 2>/dev/null && break; sleep 0.1; done
  jq -se 'any(.[]; .event == "denied" and .syscall == "chroot" and .rule == "syscalls.profile: agent"
          and .allow == "syscalls: {allow: [chroot]}")' "$trail" > /dev/null || fail "the record: $(cat "$trail")"
  assert_eq "" "$(ls -A "$victim")" "the annotation's directory"
}

# As an ordinary user (a user namespace maps the caller): the listener
# records the refused call and haven why reads it in the sandbox.
test_why_unprivileged() {
  need_haven
  make_project
  local log=$P.pol/trail.jsonl haven out
  printf 'name: why-user\nextends: default\naudit: {log: %s}\n' "$log" > "$P.pol/u.yaml"
  chown -R 65534:65534 "$P" "$P.pol"
  chmod 755 "$WORK"
  haven=$(world_readable_copy "$HAVEN")
  out=$(cd "$P" && setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent XDG_RUNTIME_DIR= \
        timeout 30 "$haven" run --policy "$P.pol/u.yaml" -- python3 -c '
import ctypes, subprocess
ctypes.CDLL(None).ptrace(0, 0, 0, 0)
print(subprocess.run(["haven", "why"], capture_output=True, text=True).stdout)' 2>&1)
  echo "$out"
  assert_contains "$out" "- refused: the system call ptrace by python3"
  assert_contains "$out" "  allow: syscalls: {allow: [ptrace]}"
}

# Under a policy without a trail (default): haven why is there, says that
# nothing is recorded and why, and still names the rule behind a path.
test_why_without_a_trail() {
  need_haven
  make_project
  local out
  out=$(cd "$P" && timeout -k 2 30 "$HAVEN" run -- sh -c 'haven why; haven why /etc/shadow' 2>&1)
  echo "$out"
  assert_contains "$out" "haven why: this run's policy keeps no audit trail (audit: {log: FILE})"
  assert_contains "$out" "  rule:  filesystem.block: /etc/shadow"
}
